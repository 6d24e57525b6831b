"""The walltime advisor: XGBoost quantile trees of a job's log runtime, fitted on the
store's history, calibrated on its recent jobs, saved as a sealed JSON artifact."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from perfpredict import artifact
from perfpredict.advise.walltime.calibration import (
    KILL_PRICES,
    MIN_CALIBRATION_JOBS,
    Calibration,
    Outcomes,
)
from perfpredict.advise.walltime.distribution import (
    CANDIDATE_WALLTIMES_S,
    QUANTILE_LEVELS,
    candidates,
    choose,
    expected_fit,
    expected_ratio,
    log_quantile_at,
    raw_kill_p,
)
from perfpredict.advise.walltime.features import (
    FEATURE_NAMES,
    JOB_COLUMNS,
    history_features,
)
from perfpredict.counts import is_number, shown
from perfpredict.errors import BadInputError, NotTrainedError, PerfPredictError
from perfpredict.utc import utc_text

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

ARTIFACT_KIND = "walltime_advisor"
#: Columns jobs to advise may carry (the service looks them up in the catalog): the name of
#: the queue allowing the longest jobs of the job's node count, that limit, and whether no
#: queue takes the node count (the job may pend forever; None where it cannot be told).
QUEUE_COLUMNS = ("longest_queue", "queue_max_walltime_s", "no_queue_takes_nodes")
#: The time-min fields of an advice row (None without ``time_min_kill_risk``), named as
#: ``advise``'s JSON names them.
TIME_MIN_COLUMNS = ("time_min_kill_risk", "time_min_s", "time_min_slurm",
                    "time_min_kill_probability")

#: Share of a system's jobs, its newest, kept out of training to calibrate on.
HOLDOUT_FRACTION = 0.25


def jobs_needed(holdout_fraction: float = HOLDOUT_FRACTION) -> int:
    """The fewest jobs with submit time and runtime an advisor fits on: its holdout (the
    newest ``holdout_fraction`` of them) and its training jobs each
    :data:`MIN_CALIBRATION_JOBS` at least; 200 at the default quarter."""
    return math.ceil(MIN_CALIBRATION_JOBS / min(holdout_fraction, 1.0 - holdout_fraction))


def slurm_time(walltime_s: float) -> str:
    """Slurm ``--time`` as ``D-HH:MM:SS``, rounded up to whole minutes.

    >>> slurm_time(3601)
    '0-01:01:00'
    """
    minutes = math.ceil(walltime_s / 60.0 - 1e-9)
    days, minutes = divmod(minutes, 1440)
    return f"{days}-{minutes // 60:02d}:{minutes % 60:02d}:00"


def check_kill_risk(kill_risk: float, option: str = "--kill-risk",
                    example: str = "0.05 means one job in twenty may be killed") -> None:
    """A kill risk is a share of jobs killed, above 0 and below one half (``advise``'s
    and ``advise walltime``'s alike, and ``advise --time-min-kill-risk``, named by
    ``option`` with an ``example`` of a value it takes: at one half the limit is the
    median runtime, and beyond it a job is more likely killed than not); checked before
    any work, so that a mistyped ``--kill-risk`` is told at once, not after an advisor
    is fitted. A library caller's text or None was a TypeError out of the comparison."""
    if not (is_number(kill_risk) and 0.0 < kill_risk < 0.5):
        raise BadInputError(f"{option} must be above 0 and below 0.5 (a share of jobs "
                            f"killed), got {shown(kill_risk)}; {example}")


def check_time_min_kill_risk(time_min_kill_risk: float | None, kill_risk: float) -> None:
    """``--time-min-kill-risk`` (``advise``'s and ``advise walltime``'s alike; None: no
    time-min asked for) is a kill risk (:func:`check_kill_risk`) larger than
    ``kill_risk``: the time-min is a shorter limit than the walltime, which more jobs
    outlive, so a risk no larger would ask for the walltime itself, or a longer limit."""
    if time_min_kill_risk is None:
        return
    # the example must itself be allowed: at --kill-risk 0.3, "0.25 accepts..." was a
    # value refused in turn, and out of range "0.05 means one job in twenty" was the
    # default --kill-risk, which a time-min risk must exceed
    example = ("0.25 accepts that one run in four is killed if the job is given only "
               "that long" if kill_risk < 0.25 else
               f"give one above {kill_risk:g} and below 0.5")
    check_kill_risk(time_min_kill_risk, "--time-min-kill-risk", example)
    if time_min_kill_risk <= kill_risk:
        raise BadInputError(
            f"--time-min-kill-risk must be larger than --kill-risk ({kill_risk:g}), got "
            f"{time_min_kill_risk:g}: the time-min is a shorter limit than the walltime, "
            f"which more runs outlive; {example}")


def check_resolvable(kill_risk: float, n_calibration_jobs: int) -> None:
    """Refuse a ``kill_risk`` rarer than ``n_calibration_jobs`` can show: the split-
    conformal count ``(kills + 1) / (n + 1) <= kill_risk`` holds for no price below
    ``1 / (n + 1)``. Before, such a risk got the safest price there is, and with
    ``--allow-above-request`` 30-day walltimes for 3-minute jobs, each said to kill 1%
    of such jobs at a --kill-risk of 0.1%."""
    if math.floor(kill_risk * (n_calibration_jobs + 1)) >= 1:
        return
    smallest = 1.0 / (n_calibration_jobs + 1)
    digits = 1 - math.floor(math.log10(smallest))  # two significant digits, rounded up
    raise BadInputError(
        f"--kill-risk {kill_risk:g} is rarer than the {n_calibration_jobs} recent jobs "
        f"that calibrate the advice can show (even with no job killed, they show no "
        f"less than 1/{n_calibration_jobs + 1}); ask for "
        f"{math.ceil(smallest * 10**digits) / 10**digits:g} or more, or ingest more "
        "recent accounting and run 'perfpredict train' again")


def _frame(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with every column of :data:`JOB_COLUMNS`, sorted by submit time."""
    import numpy as np

    frame = rows.copy()
    for column in JOB_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    for column in ("requested_walltime_s", "runtime_s", "submit_epoch_s", "total_ranks",
                   "nodes", "start_epoch_s", "end_epoch_s"):
        frame[column] = frame[column].astype(float)
    frame["requested_walltime_s"] = frame["requested_walltime_s"].where(
        frame["requested_walltime_s"] > 0, np.nan)
    frame["censored"] = frame["censored"].fillna(False).astype(bool)
    return frame.sort_values("submit_epoch_s", kind="stable", na_position="last")


class WalltimeAdvisor:
    """Advises walltimes at a chosen kill risk from a store's job history.

    Follows the estimator contract: ``__init__`` stores parameters, :meth:`fit` learns the
    ``_``-suffixed attributes and returns self, ``random_state`` and ``n_threads`` pin the
    trees (the same store gives the same advisor on any machine).
    """

    def __init__(self, *, holdout_fraction: float = HOLDOUT_FRACTION, calibration_jobs: int = 2000,
                 max_train_jobs: int = 50_000, n_estimators: int = 100, max_depth: int = 6,
                 learning_rate: float = 0.1, method: str = "quantile", aft_scale: float = 1.0,
                 random_state: int = 0, n_threads: int = 2) -> None:
        self.method = method
        self.holdout_fraction = holdout_fraction
        self.calibration_jobs = calibration_jobs
        self.max_train_jobs = max_train_jobs
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.aft_scale = aft_scale
        self.random_state = random_state
        self.n_threads = n_threads

    def get_params(self) -> dict[str, Any]:
        """The constructor's parameters (what the artifact stores to rebuild the advisor)."""
        return {name: getattr(self, name) for name in (
            "holdout_fraction", "calibration_jobs", "max_train_jobs", "n_estimators",
            "max_depth", "learning_rate", "method", "aft_scale", "random_state", "n_threads")}

    def __repr__(self) -> str:
        # a notebook's view: its method, and once fitted the jobs it learned from and the
        # last submission among them (what the advice is as recent as)
        if not hasattr(self, "booster_"):
            return f"WalltimeAdvisor(method={self.method!r})"
        from perfpredict.utc import utc_text

        return (f"WalltimeAdvisor(method={self.method!r}, n_train_jobs={self.n_train_jobs_}, "
                f"trained_until={utc_text(self.trained_until_epoch_s_)!r})")

    # -- fitting -------------------------------------------------------------------------

    def fit(self, history: pd.DataFrame) -> WalltimeAdvisor:
        """Learn runtime distributions from the first ``1 - holdout_fraction`` of
        ``history`` (by submit time; at most its last ``max_train_jobs`` jobs); the rest is
        left for calibration."""
        import numpy as np
        import xgboost as xgb

        jobs = _frame(history)
        jobs = jobs[jobs["submit_epoch_s"].notna() & jobs["runtime_s"].notna()]
        n_train = int(len(jobs) * (1.0 - self.holdout_fraction))
        if len(jobs) < (needed := jobs_needed(self.holdout_fraction)):
            raise PerfPredictError(
                f"walltime advice needs at least {needed} past jobs with "
                f"submit time and runtime to learn and calibrate on, the store has "
                f"{len(jobs)}; ingest scheduler accounting (sacct, swf, pbs) first")
        train = jobs.iloc[max(0, n_train - self.max_train_jobs):n_train]
        matrix = history_features(jobs.iloc[:n_train], train).to_numpy(dtype=np.float32)
        runtime_s = np.maximum(train["runtime_s"].to_numpy(), 1.0)
        data = xgb.DMatrix(matrix, feature_names=list(FEATURE_NAMES), nthread=self.n_threads)
        params: dict[str, Any] = {
            "tree_method": "hist", "max_depth": self.max_depth, "eta": self.learning_rate,
            "min_child_weight": 5, "subsample": 0.8, "seed": self.random_state,
            "nthread": self.n_threads}
        if self.method == "aft":
            # A censored run (TIMEOUT) ran at least its runtime: an interval open above.
            data.set_float_info("label_lower_bound", runtime_s)
            data.set_float_info("label_upper_bound",
                                np.where(train["censored"].to_numpy(), np.inf, runtime_s))
            params |= {"objective": "survival:aft", "aft_loss_distribution": "normal",
                       "aft_loss_distribution_scale": self.aft_scale}
        elif self.method == "quantile":
            data.set_label(np.log(runtime_s))
            params |= {"objective": "reg:quantileerror",
                       "quantile_alpha": np.asarray(QUANTILE_LEVELS)}
        else:
            raise ValueError(f"method must be 'quantile' or 'aft', not {self.method!r}")
        self.booster_ = xgb.train(params, data, num_boost_round=self.n_estimators)
        self.trained_until_epoch_s_ = float(train["submit_epoch_s"].iloc[-1])
        self.n_train_jobs_ = len(train)
        return self

    # -- advice --------------------------------------------------------------------------

    def advise(self, history: pd.DataFrame, jobs: pd.DataFrame, kill_risk: float = 0.05,
               *, allow_above_request: bool = False,
               time_min_kill_risk: float | None = None) -> list[dict[str, Any]]:
        """One advice row per row of ``jobs`` (in their order); see the module doc.

        ``history`` is the store's runs; only what ended before each job's submission is
        used (a job without submit time is being submitted now and sees all of it).

        Where ``jobs`` carry :data:`QUEUE_COLUMNS` (the queue of the catalog allowing the
        longest jobs of each job's node count, and its limit), advice above that limit is
        capped there: such a walltime would pend forever. A capped job's kill probability
        is its raw one at the cap through the same calibrated map as any choice below its
        request, and may well exceed ``kill_risk``. The calibration itself is left
        uncapped: its jobs ran on the machine under those limits, so no runtime of theirs
        lies above the cap, and a cap there kills none of them that the advice would
        have let finish.

        With ``time_min_kill_risk``, each row also gives a time-min (Slurm's
        ``--time-min``: the shortest limit the scheduler may cut the walltime to, to start
        the job sooner in a backfill hole) and its kill probability, calibrated on the
        same window of recent jobs as the walltime's, on every walltime they could have
        been given (:attr:`~.calibration.Calibration.report_any_walltime`,
        :func:`time_min_choice`); its fields are None without it.
        """
        import numpy as np

        check_kill_risk(kill_risk)
        check_time_min_kill_risk(time_min_kill_risk, kill_risk)
        self._check_fitted()
        past = _frame(history)
        queries = _frame(jobs.reset_index(drop=True))
        for column in QUEUE_COLUMNS:
            if column not in queries.columns:
                queries[column] = None
        requests_s = queries["requested_walltime_s"].to_numpy()
        limits_s = queries["queue_max_walltime_s"].to_numpy(dtype=float)
        calibrations, which, log_q = self._calibrations(
            past, queries, kill_risk, allow_above_request,
            any_walltime=time_min_kill_risk is not None)
        walltimes_s = candidates(requests_s, allow_above_request)
        raw_p = raw_kill_p(log_q, walltimes_s)
        gain = expected_fit(log_q, walltimes_s)
        prices = np.array([KILL_PRICES[c.price_index] for c in calibrations])[which]
        pick = choose(gain, raw_p, prices)
        chosen_s = walltimes_s[np.arange(len(pick)), pick]
        chosen_raw_p = raw_p[np.arange(len(pick)), pick]
        by_queue = chosen_s > limits_s  # never for a job without a limit (NaN)
        chosen_s = np.where(by_queue, limits_s, chosen_s)
        chosen_raw_p = np.where(
            by_queue, raw_kill_p(log_q, np.fmax(np.nan_to_num(limits_s), 1.0)[:, None])[:, 0],
            chosen_raw_p)
        request_raw_p = raw_kill_p(log_q, np.fmax(requests_s, 1.0)[:, None])[:, 0]
        kill_p = calibrated_kill_p(calibrations, which, chosen_raw_p[:, None],
                                   chosen_s[:, None], requests_s)[:, 0]
        overrun_p = np.full(len(pick), np.nan)
        capped = chosen_s == requests_s  # killed exactly when it outruns its request
        for number, calibration in enumerate(calibrations):
            mine = which == number
            overrun_p[mine] = calibration.overrun(request_raw_p[mine])
        overrun_p[np.isnan(requests_s)] = np.nan
        overrun_p[capped] = kill_p[capped]  # one event, one probability
        kill_p = bounded_by_request_p(kill_p, overrun_p, chosen_s, requests_s)
        time_min = None if time_min_kill_risk is None else time_min_choice(
            calibrated_kill_p(calibrations, which, raw_p, walltimes_s, requests_s,
                              any_walltime=True),
            walltimes_s, chosen_s, kill_p, time_min_kill_risk)
        ratio = expected_ratio(log_q, chosen_s)
        log_median = log_quantile_at(log_q, 0.5)
        rows: list[dict[str, Any]] = [{} for _ in range(len(queries))]
        for position, index in enumerate(queries.index):
            request_s, limit_s = requests_s[position], limits_s[position]
            has_request, has_limit = not math.isnan(request_s), not math.isnan(limit_s)
            rows[index] = {
                "job_id": jobs.iloc[index].get("job_id"),
                "walltime_s": float(chosen_s[position]),
                "slurm_time": slurm_time(float(chosen_s[position])),
                "predicted_runtime_s": round(float(np.exp(log_median[position])), 1),
                "kill_risk": kill_risk,
                "kill_probability": round(float(kill_p[position]), 4),
                "expected_runtime_over_walltime": round(float(ratio[position]), 4),
                "requested_walltime_s": float(request_s) if has_request else None,
                "capped_at_request": bool(capped[position]),
                "request_kill_probability": (round(float(overrun_p[position]), 4)
                                             if has_request else None),
                "request_likely_too_short": bool(has_request and overrun_p[position] > 0.5),
                "queue_max_walltime_s": float(limit_s) if has_limit else None,
                "capped_by_queue": (queries.at[index, "longest_queue"]
                                    if by_queue[position] else None),
                "request_above_queue_limit": (bool(request_s > limit_s)
                                              if has_request and has_limit else None),
                **_time_min_fields(time_min_kill_risk, None if time_min is None else (
                    time_min[0][position], time_min[1][position])),
                "no_queue_takes_nodes": _flag(queries.at[index, "no_queue_takes_nodes"]),
                "nodes": _positive(queries.at[index, "nodes"]),
                "total_ranks": _positive(queries.at[index, "total_ranks"]),
            }
        return rows

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            raise NotTrainedError("the walltime advisor is not fitted; run 'perfpredict "
                                  "train' or let 'advise walltime' fit one from the store")

    def _too_early(self, submits_s: np.ndarray, ends_s: np.ndarray) -> str:
        """Why the jobs submitted at ``submits_s`` cannot all be advised, and from when one
        can: the kill risk is calibrated on jobs the trees did not learn from that ended
        before a job's submission (``ends_s``, sorted), and the earliest has too few."""
        import numpy as np

        trained_until = utc_text(self.trained_until_epoch_s_)
        # the minute after the calibration's 50th end, so that any job submitted in it can be
        # advised (the message reads to the minute)
        when = (f"advise jobs submitted from "
                f"{utc_text(math.floor(ends_s[MIN_CALIBRATION_JOBS - 1] / 60 + 1) * 60.0)}, or "
                if len(ends_s) >= MIN_CALIBRATION_JOBS else "")
        known = submits_s[~np.isnan(submits_s)]
        if known.size and known.min() <= self.trained_until_epoch_s_:
            return (f"the earliest job to advise was submitted {utc_text(float(known.min()))}, "
                    f"before the advisor's training jobs end ({trained_until}), and advice "
                    f"uses nothing measured after a job's submission; {when}train on a store "
                    "of the accounting before the jobs to advise")
        seen, before = len(ends_s), ""
        if known.size:
            seen = int(np.searchsorted(ends_s, known.min(), side="left"))
            before = f" and the earliest job to advise ({utc_text(float(known.min()))})"
        return (f"only {seen} jobs ended between the advisor's training jobs ({trained_until})"
                f"{before}; {MIN_CALIBRATION_JOBS} are needed to calibrate the kill risk; "
                f"{when}ingest more recent accounting and run 'perfpredict train' again")

    def _log_quantiles_s(self, past: pd.DataFrame, jobs: pd.DataFrame) -> np.ndarray:
        """Per job, log runtime at each of :data:`QUANTILE_LEVELS` (ascending)."""
        import numpy as np
        import xgboost as xgb
        from scipy.special import ndtri

        matrix = history_features(past, jobs).to_numpy(dtype=np.float32)
        predicted = self.booster_.predict(xgb.DMatrix(
            matrix, feature_names=list(FEATURE_NAMES), nthread=self.n_threads))
        if self.method == "aft":  # the median runtime of a log-normal of known spread
            log_median = np.log(np.maximum(predicted.astype(float), 1.0))
            return log_median[:, None] + self.aft_scale * ndtri(np.asarray(QUANTILE_LEVELS))
        # quantile crossing happens at the edges of the data; sorting repairs it
        return np.sort(predicted.reshape(len(matrix), -1).astype(float), axis=1)

    def _calibrations(self, past: pd.DataFrame, queries: pd.DataFrame, kill_risk: float,
                      allow_above_request: bool, any_walltime: bool = False
                      ) -> tuple[list[Calibration], np.ndarray, np.ndarray]:
        """The calibrations the advised jobs need, per job the index of its own (that of
        the recent out-of-training jobs that ended before it was submitted, the last
        ``calibration_jobs`` of them), and the advised jobs' log runtime quantiles (one
        pass over the history describes both the advised and the calibration jobs).
        ``any_walltime`` fits each window's map of any walltime too (for a time-min).

        Windows end on a step of a twentieth of ``calibration_jobs``, so that a day of
        advice shares a handful of calibrations instead of fitting one per job; a job never
        sees a run that ended after its submission.
        """
        import numpy as np
        import pandas as pd

        from perfpredict.advise.walltime.features import JobColumns, known_end_epochs_s

        submits_s = queries["submit_epoch_s"].to_numpy()
        recent = past[(past["submit_epoch_s"] > self.trained_until_epoch_s_)
                      & past["runtime_s"].notna()]
        ends = known_end_epochs_s(JobColumns(recent))
        recent, ends = recent[~np.isnan(ends)], ends[~np.isnan(ends)]
        order = np.argsort(ends, kind="stable")
        recent, ends = recent.iloc[order], ends[order]
        visible = np.searchsorted(ends, np.where(np.isnan(submits_s), np.inf, submits_s),
                                  side="left")
        if visible.min(initial=len(ends)) < MIN_CALIBRATION_JOBS:
            raise NotTrainedError(self._too_early(submits_s, ends))
        step = max(1, self.calibration_jobs // 20)
        visible = np.where(visible == len(ends), visible, visible // step * step)
        visible = np.maximum(visible, MIN_CALIBRATION_JOBS)
        ends_of_windows, which = np.unique(visible, return_inverse=True)
        # only the jobs some window holds are scored
        first = max(0, int(ends_of_windows[0]) - self.calibration_jobs)
        check_resolvable(kill_risk, min(self.calibration_jobs, int(ends_of_windows[0]) - first))
        window_jobs = recent.iloc[first:int(ends_of_windows[-1])]
        log_q = self._log_quantiles_s(past, pd.concat([queries, window_jobs],
                                                      ignore_index=True))
        outcome = Outcomes.of(window_jobs, log_q[len(queries):], allow_above_request)
        return [outcome.calibrate(max(first, hi - self.calibration_jobs) - first, hi - first,
                                  kill_risk, any_walltime) for hi in ends_of_windows.tolist()
                ], which, log_q[:len(queries)]

    # -- persistence (JSON, no pickle) ---------------------------------------------------

    def to_json(self) -> str:
        """The fitted advisor as a sealed artifact (JSON with format version and sha256):
        parameters, XGBoost's own JSON model, training span."""
        return artifact.dumps(self.document())

    def document(self) -> dict[str, Any]:
        """What :meth:`to_json` seals (also held, per system, in
        :class:`~perfpredict.advise.walltime.systems.SystemAdvisors`' artifact)."""
        self._check_fitted()
        return {
            "kind": ARTIFACT_KIND,
            "params": self.get_params(),
            "features": list(FEATURE_NAMES),
            "candidate_walltimes_s": list(CANDIDATE_WALLTIMES_S),
            "trained_until_epoch_s": self.trained_until_epoch_s_,
            "n_train_jobs": self.n_train_jobs_,
            "booster": json.loads(bytes(self.booster_.save_raw("json")).decode("utf-8")),
        }

    @classmethod
    def from_json(cls, text: str) -> WalltimeAdvisor:
        """Load what :meth:`to_json` wrote: checksum verified, other kinds refused."""
        return cls.from_document(artifact.loads(text, "the walltime advisor"))

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> WalltimeAdvisor:
        """Build the advisor from a verified artifact document."""
        import xgboost as xgb

        from perfpredict.errors import ArtifactError

        if document.get("kind") != ARTIFACT_KIND:
            raise ArtifactError(f"this is a {document.get('kind')!r} artifact, not a "
                                "walltime advisor; run 'perfpredict train' to make one")
        if (document.get("features") != list(FEATURE_NAMES)
                or document.get("candidate_walltimes_s") != list(CANDIDATE_WALLTIMES_S)):
            raise ArtifactError("the walltime advisor was saved by another perfpredict "
                                "version; run 'perfpredict train' again")
        try:
            advisor = cls(**document["params"])
            booster = xgb.Booster()
            booster.load_model(bytearray(json.dumps(document["booster"]).encode("utf-8")))
            advisor.booster_ = booster
            advisor.trained_until_epoch_s_ = float(document["trained_until_epoch_s"])
            advisor.n_train_jobs_ = int(document["n_train_jobs"])
        except (ValueError, KeyError, TypeError, xgb.core.XGBoostError) as exc:
            raise ArtifactError(f"the walltime advisor document is damaged ({exc}); run "
                                "'perfpredict train' again") from exc
        return advisor


def calibrated_kill_p(calibrations: list[Calibration], which: np.ndarray, raw_p: np.ndarray,
                      walltimes_s: np.ndarray, requests_s: np.ndarray, *,
                      any_walltime: bool = False) -> np.ndarray:
    """Per job (row) and walltime (column), the kill probability the job's calibration
    (``calibrations[which[job]]``) reports for the raw one (``raw_p``): a walltime at the
    job's request read through the map of the window's choices at their request (a job
    given its request is killed exactly when it outruns it), any other through that of
    its other choices, or with ``any_walltime`` (a time-min, which the advice did not
    choose) through that of every candidate (:attr:`Calibration.report_any_walltime`).
    With ``any_walltime`` a reading above the highest raw probability its map was fitted
    on is NaN (unknown): there the map only repeats its top value, which the window never
    showed, and a time-min is not chosen on it."""
    import numpy as np

    kill_p = np.empty(raw_p.shape)
    at_request = walltimes_s == requests_s[:, None]
    for number, calibration in enumerate(calibrations):
        mine = (which == number)[:, None]
        for kind, report in ((mine & ~at_request, calibration.below_request(any_walltime)),
                             (mine & at_request, calibration.report_at_request)):
            if kind.any():
                reading = report(raw_p[kind])
                if any_walltime:
                    reading[raw_p[kind] > report.highest_raw_p] = np.nan
                kill_p[kind] = reading
    return kill_p


def bounded_by_request_p(kill_p: np.ndarray, overrun_p: np.ndarray, chosen_s: np.ndarray,
                         requests_s: np.ndarray) -> np.ndarray:
    """Per job, the advised walltime's kill probability (``kill_p``) kept on its side of
    its request's (``overrun_p``): at least it below the request, as a shorter limit kills
    every job the request kills, and at most it above (``allow_above_request``), as a
    longer one kills only jobs that outrun the request. The two are read through
    different maps (of the choices below a request, at one, above one), which may read
    them the other way round: on KTH-SP2 (70% stored, the rest advised), 71 jobs were
    advised below their request at 0.0 at a risk of 0.01 while their request read up to
    0.005, and with ``allow_above_request`` at 0.05, 3,035 of the 4,851 jobs advised above
    their request read likelier killed than at it (the map above a request counts a
    TIMEOUT run as killed, an upper bound)."""
    import numpy as np

    below, above = chosen_s < requests_s, chosen_s > requests_s  # False without a request
    return np.where(below, np.fmax(kill_p, overrun_p),
                    np.where(above, np.fmin(kill_p, overrun_p), kill_p))


def time_min_choice(kill_p: np.ndarray, walltimes_s: np.ndarray, chosen_s: np.ndarray,
                    chosen_kill_p: np.ndarray, time_min_kill_risk: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per job, the time-min at ``time_min_kill_risk`` and its kill probability: the
    shortest of the job's candidates (``walltimes_s``, ascending, as the advice chose
    from: round values, capped at the request) below its advised walltime
    (``chosen_s``) whose calibrated kill probability (``kill_p``, NaN where unknown) is
    at most the risk; else the walltime itself, with its own kill probability
    (``chosen_kill_p``, above the risk only where the walltime was capped at the
    request or a queue limit, or read so by the advice's map).

    A shorter limit kills every job the walltime kills, so a time-min's probability is
    never reported below the walltime's (two maps, one of the advice's choices and one of
    any walltime, may read them the other way round). Neither depends on the risk, so a
    larger risk never gives a longer time-min."""
    import numpy as np

    at_least_walltimes = np.maximum(kill_p, chosen_kill_p[:, None])  # NaN stays unknown
    meets = (walltimes_s < chosen_s[:, None]) & (at_least_walltimes <= time_min_kill_risk)
    first = meets.argmax(axis=1)
    jobs = np.arange(len(first))
    found = meets[jobs, first]
    return (np.where(found, walltimes_s[jobs, first], chosen_s),
            np.where(found, at_least_walltimes[jobs, first], chosen_kill_p))


def _time_min_fields(time_min_kill_risk: float | None,
                     time_min: tuple[float, float] | None) -> dict[str, Any]:
    """A row's time-min fields, None without a time-min: the same keys either way, for a
    script that reads them."""
    if time_min is None:
        return dict.fromkeys(TIME_MIN_COLUMNS)
    time_min_s, kill_p = float(time_min[0]), float(time_min[1])
    return {"time_min_kill_risk": time_min_kill_risk, "time_min_s": time_min_s,
            "time_min_slurm": slurm_time(time_min_s),
            "time_min_kill_probability": round(kill_p, 4)}


def _flag(value: Any) -> bool | None:
    """A yes/no column of the jobs as a row's bool, None where unknown (None or NaN)."""
    return None if value is None or value != value else bool(value)


def _positive(value: Any) -> float | None:
    return float(value) if value is not None and value == value and value > 0 else None
