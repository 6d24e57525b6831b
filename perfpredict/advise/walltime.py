"""Walltime advice: the time limit to request so that at most a chosen share of jobs is killed.

How it works (``advise walltime``):

1. **What is known at submission** (:mod:`perfpredict.advise.walltime_features`): the job's
   request (time, processors, nodes), time of day, and the history of jobs that *ended
   before it was submitted*: its user's, its application's, its account's.
2. **A distribution, not a number.** One XGBoost model per store learns, per job, the
   quantiles of its log runtime at :data:`QUANTILE_LEVELS` (``reg:quantileerror``; the
   ``survival:aft`` objective, which treats TIMEOUT runs as lower bounds, is the
   alternative ``method="aft"``: on KTH-SP2 it was calibrated as well but less tight, see
   ``docs/walltime.md``). One row per job: an earlier design repeated each job once per
   candidate walltime for a classifier, 45 rows a job, which needed 45M rows for a
   million-job store.
3. **Risk spent where it buys the most.** Walltimes are chosen from round candidates (1 min
   ... 30 days, :data:`CANDIDATE_WALLTIMES_S`). Each job gets the candidate that maximises
   its expected tightness (E[runtime / walltime] over the runs that fit) minus a price
   times its kill probability; one price for all jobs is a Lagrange multiplier, so the risk
   budget goes to jobs whose runtimes are predictable. The price is set, per advised job,
   on the last ``calibration_jobs`` jobs that ended before it was submitted and that the
   model did not train on (at first: the time-ordered holdout, the last
   ``holdout_fraction`` of the store by submit time), as the lowest price that would have
   killed at most ``kill_risk`` of them (split-conformal count: ``(kills + 1) / (n + 1) <=
   kill_risk``). The window follows the store as new jobs are ingested, so the calibration
   tracks drift.
4. **Probabilities that mean what they say.** The reported ``kill_probability`` is the
   model's raw probability mapped, by isotonic regression on the same window, to the share
   of such choices that were killed there; ``request_kill_probability`` likewise for
   outrunning the job's own request (``request_likely_too_short`` above one half).
5. **Capped at the user's request.** A job is killed at the limit it is submitted with; the
   advice replaces the request only when it is tighter and, unless ``allow_above_request``,
   never exceeds it (a user who asks for 2 h may know something the log does not); jobs
   that overran their own request count as kills in the calibration, so the risk asked
   for includes them. Jobs without a request (NASA-iPSC) are not capped.

Every submitted job counts, failed and cancelled ones too: at submission nobody knows a job
will fail, and a job killed by its limit is killed whatever it would have done later.
Censored runs (TIMEOUT) are lower bounds: "killed at any walltime below the observed
runtime" is exactly what they tell, and below the request that is all the calibration
needs; above it (``allow_above_request``) their outcome is unknown and they count as
killed.

Example::

    advisor = fit_walltime_advisor(store)
    rows = advisor.advise(history, jobs, kill_risk=0.05)   # DataFrames of runs
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from perfpredict import artifact
from perfpredict.advise.walltime_features import (
    FEATURE_NAMES,
    JOB_COLUMNS,
    history_features,
)
from perfpredict.errors import BadInputError, NotTrainedError, PerfPredictError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from perfpredict.store import Store

ARTIFACT_KIND = "walltime_advisor"
_MINUTES = (1, 2, 3, 4, 5, 7, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60, 75, 90, 105, 120, 150,
            180, 210, 240, 300, 360, 420, 480, 600, 720, 900, 1080, 1200, 1440, 1800, 2160,
            2880, 3600, 4320, 5760, 7200, 10080, 14400, 20160, 43200)
#: Walltimes the advice chooses from: round values a person would type, 1 min to 30 days.
CANDIDATE_WALLTIMES_S: tuple[float, ...] = tuple(60.0 * m for m in _MINUTES)
#: The levels of the runtime distribution the trees learn (log runtime quantiles); dense at
#: the top, where the kill risks asked for (1-20%) fall.
QUANTILE_LEVELS: tuple[float, ...] = (0.25, 0.5, 0.75, 0.85, 0.9, 0.95, 0.98,
                                      0.99)
#: Prices of a kill, in units of expected runtime/walltime, that the calibration chooses
#: from: the higher the price, the safer the advice.
KILL_PRICES: tuple[float, ...] = tuple(0.01 * 10 ** (k / 32) for k in range(161))
#: Fewer recent out-of-training jobs than this cannot calibrate a risk of a few percent.
MIN_CALIBRATION_JOBS = 50


def slurm_time(walltime_s: float) -> str:
    """Slurm ``--time`` as ``D-HH:MM:SS``, rounded up to whole minutes.

    >>> slurm_time(3601)
    '0-01:01:00'
    """
    minutes = math.ceil(walltime_s / 60.0 - 1e-9)
    days, minutes = divmod(minutes, 1440)
    return f"{days}-{minutes // 60:02d}:{minutes % 60:02d}:00"


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


@dataclass(frozen=True)
class _Calibration:
    """What the recent out-of-training jobs say at one ``--kill-risk``, for one window.

    ``price_index`` points into :data:`KILL_PRICES`; ``report`` maps the raw kill
    probability of a chosen walltime to the share of such choices that were killed,
    ``overrun`` the raw probability of outrunning the request to the share that did (both
    isotonic, fitted on the window).
    """

    price_index: int
    report: Callable[[np.ndarray], np.ndarray]
    overrun: Callable[[np.ndarray], np.ndarray]


class WalltimeAdvisor:
    """Advises walltimes at a chosen kill risk from a store's job history.

    Follows the estimator contract: ``__init__`` stores parameters, :meth:`fit` learns the
    ``_``-suffixed attributes and returns self, ``random_state`` and ``n_threads`` pin the
    trees (the same store gives the same advisor on any machine).
    """

    def __init__(self, *, holdout_fraction: float = 0.25, calibration_jobs: int = 2000,
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
        if n_train < MIN_CALIBRATION_JOBS or len(jobs) - n_train < MIN_CALIBRATION_JOBS:
            raise PerfPredictError(
                f"walltime advice needs at least {2 * MIN_CALIBRATION_JOBS} past jobs with "
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
               *, allow_above_request: bool = False) -> list[dict[str, Any]]:
        """One advice row per row of ``jobs`` (in their order); see the module doc.

        ``history`` is the store's runs; only what ended before each job's submission is
        used (a job without submit time is being submitted now and sees all of it).
        """
        import numpy as np

        if not 0.0 < kill_risk < 1.0:
            raise BadInputError(f"--kill-risk must be between 0 and 1, got {kill_risk:g}; "
                                "0.05 means one job in twenty may be killed")
        self._check_fitted()
        past = _frame(history)
        queries = _frame(jobs.reset_index(drop=True))
        requests_s = queries["requested_walltime_s"].to_numpy()
        calibrations, which, log_q = self._calibrations(past, queries, kill_risk,
                                                        allow_above_request)
        walltimes_s = _candidates(requests_s, allow_above_request)
        raw_p = _raw_kill_p(log_q, walltimes_s)
        gain = _expected_fit(log_q, walltimes_s)
        prices = np.array([KILL_PRICES[c.price_index] for c in calibrations])[which]
        pick = _choose(gain, raw_p, prices)
        chosen_s = walltimes_s[np.arange(len(pick)), pick]
        chosen_raw_p = raw_p[np.arange(len(pick)), pick]
        request_raw_p = _raw_kill_p(log_q, np.fmax(requests_s, 1.0)[:, None])[:, 0]
        kill_p = np.empty(len(pick))
        overrun_p = np.full(len(pick), np.nan)
        for number, calibration in enumerate(calibrations):
            mine = which == number
            kill_p[mine] = calibration.report(chosen_raw_p[mine])
            overrun_p[mine] = calibration.overrun(request_raw_p[mine])
        overrun_p[np.isnan(requests_s)] = np.nan
        ratio = _expected_ratio(log_q, chosen_s)
        log_median = _log_quantile_at(log_q, 0.5)
        rows: list[dict[str, Any]] = [{} for _ in range(len(queries))]
        for position, index in enumerate(queries.index):
            request_s = requests_s[position]
            has_request = not math.isnan(request_s)
            rows[index] = {
                "job_id": jobs.iloc[index].get("job_id"),
                "walltime_s": float(chosen_s[position]),
                "slurm_time": slurm_time(float(chosen_s[position])),
                "predicted_runtime_s": round(float(np.exp(log_median[position])), 1),
                "kill_risk": kill_risk,
                "kill_probability": round(float(kill_p[position]), 4),
                "expected_runtime_over_walltime": round(float(ratio[position]), 4),
                "requested_walltime_s": float(request_s) if has_request else None,
                "capped_at_request": bool(has_request and chosen_s[position] == request_s),
                "request_kill_probability": (round(float(overrun_p[position]), 4)
                                             if has_request else None),
                "request_likely_too_short": bool(has_request and overrun_p[position] > 0.5),
                "nodes": _positive(queries.at[index, "nodes"]),
                "total_ranks": _positive(queries.at[index, "total_ranks"]),
            }
        return rows

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            raise NotTrainedError("the walltime advisor is not fitted; run 'perfpredict "
                                  "train' or let 'advise walltime' fit one from the store")

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
                      allow_above_request: bool
                      ) -> tuple[list[_Calibration], np.ndarray, np.ndarray]:
        """The calibrations the advised jobs need, per job the index of its own (that of
        the recent out-of-training jobs that ended before it was submitted, the last
        ``calibration_jobs`` of them), and the advised jobs' log runtime quantiles (one
        pass over the history describes both the advised and the calibration jobs).

        Windows end on a step of a twentieth of ``calibration_jobs``, so that a day of
        advice shares a handful of calibrations instead of fitting one per job; a job never
        sees a run that ended after its submission.
        """
        import numpy as np
        import pandas as pd

        from perfpredict.advise.walltime_features import JobColumns, known_end_epochs_s

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
            raise NotTrainedError(
                f"only {int(visible.min(initial=0))} jobs ended between the advisor's "
                f"training and the earliest job to advise, {MIN_CALIBRATION_JOBS} are needed "
                "to calibrate the kill risk; ingest more recent accounting and run "
                "'perfpredict train' again")
        step = max(1, self.calibration_jobs // 20)
        visible = np.where(visible == len(ends), visible, visible // step * step)
        visible = np.maximum(visible, MIN_CALIBRATION_JOBS)
        ends_of_windows, which = np.unique(visible, return_inverse=True)
        # only the jobs some window holds are scored
        first = max(0, int(ends_of_windows[0]) - self.calibration_jobs)
        window_jobs = recent.iloc[first:int(ends_of_windows[-1])]
        log_q = self._log_quantiles_s(past, pd.concat([queries, window_jobs],
                                                      ignore_index=True))
        outcome = _Outcomes.of(window_jobs, log_q[len(queries):], allow_above_request)
        return [outcome.calibrate(max(first, hi - self.calibration_jobs) - first, hi - first,
                                  kill_risk) for hi in ends_of_windows.tolist()
                ], which, log_q[:len(queries)]

    # -- persistence (JSON, no pickle) ---------------------------------------------------

    def to_json(self) -> str:
        """The fitted advisor as a sealed artifact (JSON with format version and sha256):
        parameters, XGBoost's own JSON model, training span."""
        self._check_fitted()
        return artifact.dumps({
            "kind": ARTIFACT_KIND,
            "params": self.get_params(),
            "features": list(FEATURE_NAMES),
            "candidate_walltimes_s": list(CANDIDATE_WALLTIMES_S),
            "trained_until_epoch_s": self.trained_until_epoch_s_,
            "n_train_jobs": self.n_train_jobs_,
            "booster": json.loads(bytes(self.booster_.save_raw("json")).decode("utf-8")),
        })

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


@dataclass(frozen=True)
class _Outcomes:
    """The recent out-of-training jobs, as the calibration needs them.

    ``critical`` is, per job, the index into :data:`KILL_PRICES` from which on the advice
    would have let it finish (0: never killed; ``len(KILL_PRICES)``: always killed, as when
    even the cap, its request, was shorter than its runtime, or when it was censored and
    the advice may exceed its request: its true runtime is unknown above what was recorded,
    so it counts as killed, an upper bound).
    """

    raw_p: np.ndarray
    gain: np.ndarray
    walltimes_s: np.ndarray
    runtime_s: np.ndarray
    critical: np.ndarray
    request_raw_p: np.ndarray
    overran_request: np.ndarray

    @classmethod
    def of(cls, recent: pd.DataFrame, log_q: np.ndarray,
           allow_above_request: bool) -> _Outcomes:
        """The outcomes of ``recent`` jobs, given their log runtime quantiles."""
        import numpy as np

        requests_s = recent["requested_walltime_s"].to_numpy()
        runtime_s = recent["runtime_s"].to_numpy()
        walltimes_s = _candidates(requests_s, allow_above_request)
        raw_p = _raw_kill_p(log_q, walltimes_s)
        gain = _expected_fit(log_q, walltimes_s)
        rows = np.arange(len(raw_p))
        critical = np.zeros(len(raw_p), dtype=int)
        for index, price in enumerate(KILL_PRICES):
            chosen_s = walltimes_s[rows, _choose(gain, raw_p, np.full(len(rows), price))]
            critical[runtime_s > chosen_s] = index + 1
        always_killed = walltimes_s[:, -1] < runtime_s
        if allow_above_request:
            always_killed |= recent["censored"].to_numpy()
        critical[always_killed] = len(KILL_PRICES)
        request_raw_p = _raw_kill_p(log_q, np.fmax(requests_s, 1.0)[:, None])[:, 0]
        return cls(raw_p, gain, walltimes_s, runtime_s, critical, request_raw_p,
                   np.where(np.isnan(requests_s), np.nan, runtime_s > requests_s))

    def calibrate(self, lo: int, hi: int, kill_risk: float) -> _Calibration:
        """The price of a kill and the reporting maps of the window ``[lo, hi)``."""
        import numpy as np

        window = slice(lo, hi)
        price_index = _conformal_index(self.critical[window], kill_risk)
        raw_p = self.raw_p[window]
        rows = np.arange(len(raw_p))
        pick = _choose(self.gain[window], raw_p,
                       np.full(len(rows), KILL_PRICES[price_index]))
        killed = self.critical[window] > price_index
        with_request = ~np.isnan(self.overran_request[window])
        return _Calibration(
            price_index,
            _isotonic(raw_p[rows, pick], killed),
            _isotonic(self.request_raw_p[window][with_request],
                      self.overran_request[window][with_request].astype(bool)))


def _isotonic(raw_p: np.ndarray, happened: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The share of events as a non-decreasing function of the raw probability (isotonic
    regression: on the window it averages exactly to the window's share of events)."""
    import numpy as np
    from sklearn.isotonic import IsotonicRegression

    if len(raw_p) == 0:
        return lambda p: np.full(len(p), np.nan)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(raw_p, happened.astype(float))
    return lambda p: np.asarray(iso.predict(p), dtype=float)


def _candidates(requests_s: np.ndarray, allow_above_request: bool) -> np.ndarray:
    """Per job, the walltimes advice chooses from, ascending: the round candidates,
    capped at the job's request unless ``allow_above_request`` (the cap repeats)."""
    import numpy as np

    grid = np.broadcast_to(np.asarray(CANDIDATE_WALLTIMES_S), (len(requests_s),
                                                               len(CANDIDATE_WALLTIMES_S)))
    if allow_above_request:
        return np.array(grid)
    return np.fmin(grid, requests_s[:, None])


def _choose(gain: np.ndarray, raw_p: np.ndarray, prices: np.ndarray) -> np.ndarray:
    """Per job (row), the candidate (column) that maximises the expected fit minus the
    price of a kill times the kill probability: one price for all jobs spends a risk
    budget where it buys the most tightness (a Lagrange multiplier), instead of giving
    every job the same quantile."""
    return (gain - prices[:, None] * raw_p).argmax(axis=1)


def _positive(value: Any) -> float | None:
    return float(value) if value is not None and value == value and value > 0 else None


def _raw_kill_p(log_q: np.ndarray, walltimes_s: np.ndarray) -> np.ndarray:
    """``P(runtime > walltime)`` per job (row) and walltime (column), before calibration:
    linear in log time between the job's quantiles, 1 below the lowest, and above the
    highest a tail that keeps falling (so that risks beyond the top level still order the
    candidates)."""
    import numpy as np

    levels = np.asarray(QUANTILE_LEVELS)
    n_levels = len(levels)
    log_w = np.log(walltimes_s)
    above = (log_q[:, None, :] <= log_w[:, :, None]).sum(axis=2)
    lo, hi = np.clip(above - 1, 0, n_levels - 1), np.clip(above, 0, n_levels - 1)
    rows = np.arange(len(log_q))[:, None]
    q_lo, q_hi = log_q[rows, lo], log_q[rows, hi]
    width = q_hi - q_lo
    frac = np.clip(np.divide(log_w - q_lo, width, out=np.zeros_like(log_w),
                             where=width > 0), 0.0, 1.0)
    survival = 1.0 - (levels[lo] + frac * (levels[hi] - levels[lo]))
    survival = np.where(above == 0, 1.0, survival)
    top, below_top = log_q[:, -1:], log_q[:, -2:-1]
    tail = (1.0 - levels[-1]) * np.exp(-(log_w - top) / np.maximum(top - below_top, 0.05))
    return np.where(above == n_levels, tail, survival)


def _log_quantile_at(log_q: np.ndarray, level: float) -> np.ndarray:
    """Per job, log runtime at ``level`` (interpolated between the fitted levels)."""
    import numpy as np

    return np.array([np.interp(level, QUANTILE_LEVELS, row) for row in log_q])


def _expected_ratio(log_q: np.ndarray, walltime_s: np.ndarray) -> np.ndarray:
    """E[min(runtime / walltime, 1)] per job, the runtime spread evenly over the levels of
    its quantile curve (:data:`QUANTILE_LEVELS`, held flat beyond the outer ones)."""
    import numpy as np

    grid = (np.arange(40) + 0.5) / 40
    log_runtime = np.stack([np.interp(grid, QUANTILE_LEVELS, row) for row in log_q])
    return np.minimum(np.exp(log_runtime) / walltime_s[:, None], 1.0).mean(axis=1)


def _conformal_index(critical: np.ndarray, kill_risk: float) -> int:
    """The smallest index into :data:`KILL_PRICES` that kills at most ``kill_risk`` of the
    window, counted as split conformal prediction does: ``(kills + 1) / (n + 1) <=
    kill_risk``, a job being killed at index ``k`` when its critical index exceeds ``k``."""
    import numpy as np

    allowed_kills = math.floor(kill_risk * (len(critical) + 1)) - 1
    if allowed_kills < 0:
        return len(KILL_PRICES) - 1
    if allowed_kills >= len(critical):
        return 0
    ranked = np.sort(critical)[::-1]
    return int(min(ranked[allowed_kills], len(KILL_PRICES) - 1))


def _expected_fit(log_q: np.ndarray, walltimes_s: np.ndarray) -> np.ndarray:
    """Per job and candidate, E[runtime / walltime; runtime <= walltime]: the tightness a
    walltime buys on the jobs it lets finish, the runtime spread evenly over the levels of
    the job's quantile curve. Computed in blocks of jobs to bound the memory."""
    import numpy as np

    grid = (np.arange(20) + 0.5) / 20
    out = np.empty(walltimes_s.shape)
    for lo in range(0, len(log_q), 5000):
        block = slice(lo, lo + 5000)
        runtime_s = np.exp(np.stack([np.interp(grid, QUANTILE_LEVELS, row)
                                     for row in log_q[block]]))
        ratio = runtime_s[:, None, :] / walltimes_s[block][:, :, None]
        out[block] = np.where(ratio <= 1.0, ratio, 0.0).mean(axis=2)
    return out


# -- the store-facing functions (what `train` and the CLI call) ---------------------------

def fit_walltime_advisor(store: Store, apps: list[str] | None = None,
                         **params: Any) -> WalltimeAdvisor:
    """Fit a :class:`WalltimeAdvisor` on the store's scheduler jobs (what ``train`` calls)."""
    return WalltimeAdvisor(**params).fit(jobs_frame(store, apps))


def jobs_frame(store: Store, apps: list[str] | None = None) -> pd.DataFrame:
    """The columns the advisor reads (:data:`JOB_COLUMNS`) of every run with a submit
    time, read in chunks with repeated texts as categories.

    Reading every column as Python tuples (``runs_frame``) peaked at 2.1 GB for a million
    jobs; this keeps one chunk of tuples at a time.
    """
    import pandas as pd
    from sqlalchemy import select

    from perfpredict.store.schema import runs

    names = list(JOB_COLUMNS)
    query = select(*[runs.c[name] for name in names]).where(runs.c.submit_epoch_s.is_not(None))
    if apps:
        query = query.where(runs.c.app.in_(apps))
    texts = ("system", "user", "account", "app")
    chunks = []
    with store.engine.connect() as conn:
        result = conn.execution_options(stream_results=True).execute(query.order_by(runs.c.id))
        while rows := result.fetchmany(100_000):
            chunk = pd.DataFrame.from_records([tuple(row) for row in rows], columns=names)
            chunks.append(chunk.astype({name: "category" for name in texts}))
    if not chunks:
        return pd.DataFrame(columns=names)
    return pd.concat(chunks, ignore_index=True).astype(
        {name: "object" for name in texts})


def save_walltime_advisor(store: Store, advisor: WalltimeAdvisor) -> None:
    """Store the advisor in the artifacts table (newest wins)."""
    from perfpredict.store.artifacts import save_artifact

    save_artifact(store, json.loads(advisor.to_json()))


def load_walltime_advisor(store: Store) -> WalltimeAdvisor | None:
    """The newest saved advisor, or None when ``train`` has not saved one."""
    from perfpredict.store.artifacts import load_latest_artifact

    document = load_latest_artifact(store.url, ARTIFACT_KIND)
    return None if document is None else WalltimeAdvisor.from_document(document)


def read_jobs(path: str, input_format: str | None, system: str | None) -> pd.DataFrame:
    """Jobs to advise, read with the ingest parser of ``input_format`` (not stored; None:
    told by the file's name or content). Jobs not run yet are read too: sacct's PENDING
    jobs, which ingest skips, are what a walltime is advised for."""
    from dataclasses import asdict
    from pathlib import Path

    import pandas as pd

    from perfpredict.ingest.records import BadRecord, IngestOptions
    from perfpredict.ingest.registry import get_parser, sniff_format

    input_format = input_format or sniff_format(Path(path), ("swf", "sacct", "csv"))
    parse = get_parser(input_format)
    rows = []
    for item in parse(Path(path), IngestOptions(system=system, require_runtime=False)):
        if isinstance(item, BadRecord):
            raise BadInputError(item.reason, path=path, line_no=item.line_no)
        row = asdict(item)
        row["system"] = item.system or system
        rows.append(row)
    if not rows:
        raise BadInputError(f"no jobs in the file (read as {input_format}); check the path "
                            "and --input-format", path=path)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class WalltimeAdvice:
    """What ``advise walltime`` answers: one row per job, and a summary a person reads."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]


def summarize(rows: list[dict[str, Any]], kill_risk: float) -> dict[str, Any]:
    """The advice over a file at a glance: expected kill share, the allocation reserved
    against the users' requests, and how many jobs were kept at their request and why.

    Reservations are node-hours when every job with a request gives its nodes, else
    processor-hours (SWF logs give processors only).
    """
    with_request = [r for r in rows if r["requested_walltime_s"] is not None]
    unit = "node" if all(r["nodes"] for r in with_request) else "processor"
    size = "nodes" if unit == "node" else "total_ranks"
    requested_h = sum(r["requested_walltime_s"] * (r[size] or 1) for r in with_request) / 3600
    advised_h = sum(r["walltime_s"] * (r[size] or 1) for r in with_request) / 3600
    kept = [r for r in with_request if r["capped_at_request"]]
    too_short = sum(r["request_likely_too_short"] for r in rows)
    return {
        "n_jobs": len(rows),
        "kill_risk": kill_risk,
        "expected_kill_share": round(sum(r["kill_probability"] for r in rows)
                                     / max(len(rows), 1), 4),
        "reserved_unit": f"{unit}-hours",
        "requested_hours": round(requested_h, 1),
        "advised_hours": round(advised_h, 1),
        "freed_share": round(1.0 - advised_h / requested_h, 4) if requested_h else None,
        "n_kept_at_request": len(kept),
        "n_kept_request_likely_too_short": sum(r["request_likely_too_short"] for r in kept),
        "n_request_likely_too_short": too_short,
        "n_above_request": sum(r["requested_walltime_s"] is not None
                               and r["walltime_s"] > r["requested_walltime_s"] for r in rows),
        "n_without_request": len(rows) - len(with_request),
    }


def advise_walltime(store: Store, path: str, *, input_format: str | None = None,
                    kill_risk: float = 0.05, system: str | None = None,
                    allow_above_request: bool = False) -> WalltimeAdvice:
    """What ``perfpredict advise walltime`` prints: one row per job in ``path``, and a
    summary.

    Uses the advisor ``train`` saved, or fits one on the store when none is saved. The
    history a job's advice reads is the store plus the finished jobs of ``path`` itself
    that the store does not hold (a replayed log is advised as if its jobs had been
    ingested as they finished); as always, only runs that ended before the job's
    submission count.
    """
    import pandas as pd

    jobs = read_jobs(path, input_format, system)
    stored = jobs_frame(store)
    known_systems = set(stored["system"].dropna())
    unknown = sorted({str(s) for s in jobs["system"]} - known_systems)
    if unknown:
        hint = ", ".join(sorted(known_systems)) or "none yet"
        raise BadInputError(
            f"jobs for system {unknown[0]!r} have no history in the store (its systems: "
            f"{hint}); pass --system NAME, or ingest that system's accounting first",
            path=path)
    advisor = load_walltime_advisor(store) or WalltimeAdvisor().fit(stored)
    finished = jobs[jobs["runtime_s"].notna()]
    finished = finished[~_stored_mask(store, finished)]
    history = pd.concat([stored, finished.reindex(columns=stored.columns)], ignore_index=True)
    rows = advisor.advise(history, jobs, kill_risk, allow_above_request=allow_above_request)
    return WalltimeAdvice(rows, summarize(rows, kill_risk))


def _stored_mask(store: Store, jobs: pd.DataFrame) -> np.ndarray:
    """Which of ``jobs`` the store already holds, by (system, job id)."""
    import numpy as np
    from sqlalchemy import select

    from perfpredict.store.schema import runs

    ids = sorted({str(j) for j in jobs["job_id"].dropna()})
    stored: set[tuple[str, str]] = set()
    with store.engine.connect() as conn:
        for lo in range(0, len(ids), 500):
            query = select(runs.c.system, runs.c.job_id).where(
                runs.c.job_id.in_(ids[lo:lo + 500]))
            stored.update((str(a), str(b)) for a, b in conn.execute(query))
    return np.array([(str(a), str(b)) in stored
                     for a, b in zip(jobs["system"], jobs["job_id"], strict=True)], dtype=bool)
