"""Walltime advice: the time limit to request so that at most a chosen share of jobs is killed.

How it works (``advise walltime``):

1. **What is known at submission** (:mod:`perfpredict.advise.walltime_features`): the job's
   request (time, processors, nodes), time of day, and the history of jobs that *ended
   before it was submitted*: its user's, its application's, its account's.
2. **A distribution, not a number.** Walltimes are chosen from a grid of round candidates
   (1 min ... 30 days, :data:`CANDIDATE_WALLTIMES_S`). One XGBoost classifier, trained on
   (job, candidate) pairs, estimates ``P(runtime > candidate)``, constrained to fall as the
   candidate grows. This is the job's whole runtime distribution, so any ``--kill-risk``
   can be served without refitting, and its median is the predicted runtime.
3. **Calibrated on the most recent past.** A job gets the smallest candidate whose kill
   probability is at most a threshold ``p*``. ``p*`` is set, per advised job, on the last
   ``calibration_jobs`` jobs that ended before it was submitted and that the classifier did
   not train on (at first: the time-ordered holdout, the last ``holdout_fraction`` of the
   store by submit time), as the largest threshold that would have killed at most
   ``kill_risk`` of them (split-conformal count: ``(kills + 1) / (n + 1) <= kill_risk``).
   The window follows the store as new jobs are ingested, so the calibration tracks drift.
4. **Capped at the user's request.** A job is killed at the limit it is submitted with; the
   advice replaces the request only when it is tighter, never exceeds it (a user who asks
   for 2 h knows something we do not; and advice above it is not what was measured), and
   jobs that overran their own request count as kills in the calibration, so the risk
   asked for includes them. Jobs without a request (NASA-iPSC) are not capped.

Every submitted job counts, failed and cancelled ones too: at submission nobody knows a job
will fail, and a job killed by its limit is killed whatever it would have done later.
Censored runs (TIMEOUT) are lower bounds: "killed at any walltime below the observed
runtime" is exactly what they tell, so they enter as such.

Example::

    advisor = fit_walltime_advisor(store)
    rows = advisor.advise(history, jobs, kill_risk=0.05)   # DataFrames of runs
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from perfpredict import artifact
from perfpredict.advise.walltime_features import (
    FEATURE_NAMES,
    JOB_COLUMNS,
    history_features,
    known_end_epoch_s,
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
CLASSIFIER_FEATURES = (*FEATURE_NAMES, "log_walltime_s", "log_walltime_over_request")
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
    return frame.sort_values("submit_epoch_s", kind="stable", na_position="last")


class WalltimeAdvisor:
    """Advises walltimes at a chosen kill risk from a store's job history.

    Follows the estimator contract: ``__init__`` stores parameters, :meth:`fit` learns the
    ``_``-suffixed attributes and returns self, ``random_state`` seeds the trees.
    """

    def __init__(self, *, holdout_fraction: float = 0.25, calibration_jobs: int = 2000,
                 n_estimators: int = 300, max_depth: int = 6, learning_rate: float = 0.1,
                 random_state: int = 0) -> None:
        self.holdout_fraction = holdout_fraction
        self.calibration_jobs = calibration_jobs
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.random_state = random_state

    # -- fitting -------------------------------------------------------------------------

    def fit(self, history: pd.DataFrame) -> WalltimeAdvisor:
        """Learn kill probabilities from the first ``1 - holdout_fraction`` of ``history``
        (by submit time); the rest is left for calibration."""
        import xgboost as xgb

        jobs = _frame(history)
        jobs = jobs[jobs["submit_epoch_s"].notna() & jobs["runtime_s"].notna()]
        n_train = int(len(jobs) * (1.0 - self.holdout_fraction))
        if n_train < MIN_CALIBRATION_JOBS or len(jobs) - n_train < MIN_CALIBRATION_JOBS:
            raise PerfPredictError(
                f"walltime advice needs at least {2 * MIN_CALIBRATION_JOBS} past jobs with "
                f"submit time and runtime to learn and calibrate on, the store has "
                f"{len(jobs)}; ingest scheduler accounting (sacct, swf, pbs) first")
        train = jobs.iloc[:n_train]
        features = history_features(jobs, train)
        matrix, owner, walltime_s = _pairs(features, train["requested_walltime_s"].to_numpy())
        killed = train["runtime_s"].to_numpy()[owner] > walltime_s
        constraints = [0] * len(FEATURE_NAMES) + [-1, -1]
        self.booster_ = xgb.train(
            {"objective": "binary:logistic", "tree_method": "hist",
             "max_depth": self.max_depth, "eta": self.learning_rate, "min_child_weight": 5,
             "subsample": 0.8, "seed": self.random_state,
             "monotone_constraints": "(" + ",".join(map(str, constraints)) + ")"},
            xgb.DMatrix(matrix, label=killed, feature_names=list(CLASSIFIER_FEATURES)),
            num_boost_round=self.n_estimators,
        )
        self.trained_until_epoch_s_ = float(train["submit_epoch_s"].iloc[-1])
        self.n_train_jobs_ = n_train
        return self

    # -- advice --------------------------------------------------------------------------

    def advise(self, history: pd.DataFrame, jobs: pd.DataFrame,
               kill_risk: float = 0.05) -> list[dict[str, Any]]:
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
        curves = self._kill_curves(history_features(past, queries),
                                   queries["requested_walltime_s"].to_numpy())
        thresholds = self._thresholds(past, queries["submit_epoch_s"].to_numpy(), kill_risk)
        rows: list[dict[str, Any]] = [{} for _ in range(len(queries))]
        for position, index in enumerate(queries.index):
            walltimes_s, kill_p = curves[position]
            allowed = np.flatnonzero(kill_p[:-1] <= thresholds[position])
            pick = int(allowed[0]) if allowed.size else len(walltimes_s) - 1
            walltime_s = float(walltimes_s[pick])
            request_s = queries.at[index, "requested_walltime_s"]
            median = np.flatnonzero(kill_p <= 0.5)
            rows[index] = {
                "job_id": jobs.iloc[index].get("job_id"),
                "walltime_s": walltime_s,
                "slurm_time": slurm_time(walltime_s),
                "predicted_runtime_s": float(walltimes_s[median[0]]) if median.size else None,
                "kill_risk": kill_risk,
                "kill_probability": round(float(kill_p[pick]), 4),
                "expected_runtime_over_walltime": round(
                    _expected_ratio(walltimes_s[: pick + 1], kill_p[: pick + 1]), 4),
                "requested_walltime_s": None if math.isnan(request_s) else float(request_s),
                "capped_at_request": bool(not math.isnan(request_s)
                                          and pick == len(walltimes_s) - 1),
            }
        return rows

    def _check_fitted(self) -> None:
        if not hasattr(self, "booster_"):
            raise NotTrainedError("the walltime advisor is not fitted; run 'perfpredict "
                                  "train' or let 'advise walltime' fit one from the store")

    def _kill_curves(self, features: pd.DataFrame,
                     requests_s: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per job: its candidate walltimes (ascending, the last one the request, or the
        largest candidate when there is none) and ``P(runtime > candidate)`` for each."""
        import numpy as np
        import xgboost as xgb

        matrix, owner, walltime_s = _pairs(features, requests_s)
        kill_p = self.booster_.predict(
            xgb.DMatrix(matrix, feature_names=list(CLASSIFIER_FEATURES)))
        bounds = np.searchsorted(owner, np.arange(len(features) + 1))
        return [(walltime_s[a:b], kill_p[a:b]) for a, b in zip(bounds[:-1], bounds[1:],
                                                                strict=True)]

    def _thresholds(self, past: pd.DataFrame, submits_s: np.ndarray,
                    kill_risk: float) -> np.ndarray:
        """``p*`` per advised job, from the recent out-of-training jobs that ended before it
        was submitted."""
        import numpy as np

        recent = past[(past["submit_epoch_s"] > self.trained_until_epoch_s_)
                      & past["runtime_s"].notna()]
        ends = np.array([known_end_epoch_s(r) for r in recent.to_dict("records")], float)
        recent, ends = recent[~np.isnan(ends)], ends[~np.isnan(ends)]
        order = np.argsort(ends, kind="stable")
        recent, ends = recent.iloc[order], ends[order]
        critical = self._critical_probabilities(past, recent)
        visible = np.searchsorted(ends, np.where(np.isnan(submits_s), np.inf, submits_s),
                                  side="left")
        if visible.min(initial=len(ends)) < MIN_CALIBRATION_JOBS:
            raise NotTrainedError(
                f"only {int(visible.min(initial=0))} jobs ended between the advisor's "
                f"training and the earliest job to advise, {MIN_CALIBRATION_JOBS} are needed "
                "to calibrate the kill risk; ingest more recent accounting and run "
                "'perfpredict train' again")
        thresholds = np.empty(len(submits_s))
        cache: dict[int, float] = {}
        for i, hi in enumerate(visible):
            if hi not in cache:
                window = critical[max(0, hi - self.calibration_jobs):hi]
                cache[hi] = _conformal_threshold(window, kill_risk)
            thresholds[i] = cache[hi]
        return thresholds

    def _critical_probabilities(self, past: pd.DataFrame, recent: pd.DataFrame) -> np.ndarray:
        """Per recent job, the smallest ``p*`` at which the advice would have killed it:
        the lowest kill probability among candidates shorter than its runtime; ``-inf``
        when even the cap (its request) was shorter, ``inf`` when nothing shorter exists."""
        import numpy as np

        curves = self._kill_curves(history_features(past, recent),
                                   recent["requested_walltime_s"].to_numpy())
        critical = np.full(len(recent), np.inf)
        for i, ((walltimes_s, kill_p), runtime_s) in enumerate(
                zip(curves, recent["runtime_s"].to_numpy(), strict=True)):
            if walltimes_s[-1] < runtime_s:
                critical[i] = -np.inf
                continue
            shorter = walltimes_s[:-1] < runtime_s
            if shorter.any():
                critical[i] = float(kill_p[:-1][shorter].min())
        return critical

    # -- persistence (JSON, no pickle) ---------------------------------------------------

    def to_json(self) -> str:
        """The fitted advisor as a sealed artifact (JSON with format version and sha256):
        parameters, XGBoost's own JSON model, training span."""
        self._check_fitted()
        return artifact.dumps({
            "kind": ARTIFACT_KIND,
            "params": {"holdout_fraction": self.holdout_fraction,
                       "calibration_jobs": self.calibration_jobs,
                       "n_estimators": self.n_estimators, "max_depth": self.max_depth,
                       "learning_rate": self.learning_rate, "random_state": self.random_state},
            "features": list(CLASSIFIER_FEATURES),
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
        if (document.get("features") != list(CLASSIFIER_FEATURES)
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


def _pairs(features: pd.DataFrame,
           requests_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classifier's rows: each job repeated once per candidate below its request, and
    once more for its cap (the request, or the largest candidate without one).

    Returns the feature matrix, the owning job's position per row (ascending) and the
    candidate walltime per row (ascending within a job).
    """
    import numpy as np

    grid = np.asarray(CANDIDATE_WALLTIMES_S)
    caps = np.where(np.isnan(requests_s), grid[-1], requests_s)
    below = grid[None, :] < caps[:, None]
    owner_below, column = np.nonzero(below)
    owner = np.concatenate([owner_below, np.arange(len(caps))])
    walltime_s = np.concatenate([grid[column], caps])
    order = np.lexsort((walltime_s, owner))
    owner, walltime_s = owner[order], walltime_s[order]
    log_walltime = np.log(walltime_s)
    log_request = np.log(np.maximum(requests_s, 1.0))[owner]
    matrix = np.column_stack([features.to_numpy(dtype=float)[owner], log_walltime,
                              log_walltime - log_request])
    return matrix, owner, walltime_s


def _conformal_threshold(critical: np.ndarray, kill_risk: float) -> float:
    """The largest ``p*`` that kills at most ``kill_risk`` of the window, counted as split
    conformal prediction does: ``(kills + 1) / (n + 1) <= kill_risk``."""
    import numpy as np

    allowed_kills = math.floor(kill_risk * (len(critical) + 1)) - 1
    if allowed_kills < 0:
        return -np.inf
    if allowed_kills >= len(critical):
        return 1.0
    kth = float(np.partition(critical, allowed_kills)[allowed_kills])
    return float(np.nextafter(kth, -np.inf)) if math.isfinite(kth) else kth


def _expected_ratio(walltimes_s: np.ndarray, kill_p: np.ndarray) -> float:
    """E[min(runtime / walltime, 1)] under the job's predicted distribution, up to the chosen
    walltime (the last entry), with runtimes spread evenly between candidates."""
    import numpy as np

    walltime_s = walltimes_s[-1]
    cdf = 1.0 - np.minimum.accumulate(np.concatenate([[1.0], kill_p]))
    edges = np.concatenate([[0.0], walltimes_s])
    mass = np.diff(cdf)
    midpoints = 0.5 * (edges[:-1] + edges[1:])
    return float(np.sum(mass * midpoints) / walltime_s + (1.0 - cdf[-1]))


# -- the store-facing functions (what `train` and the CLI call) ---------------------------

def fit_walltime_advisor(store: Store, **params: Any) -> WalltimeAdvisor:
    """Fit a :class:`WalltimeAdvisor` on every job in ``store`` (what ``train`` calls)."""
    from perfpredict.store.queries import runs_frame

    return WalltimeAdvisor(**params).fit(runs_frame(store))


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


def advise_walltime(store: Store, path: str, *, input_format: str | None = None,
                    kill_risk: float = 0.05, system: str | None = None) -> list[dict[str, Any]]:
    """What ``perfpredict advise walltime`` prints: one row per job in ``path``.

    Uses the advisor ``train`` saved, or fits one on the store when none is saved.
    """
    from perfpredict.store.queries import runs_frame

    jobs = read_jobs(path, input_format, system)
    history = runs_frame(store)
    known_systems = set(history["system"].dropna())
    unknown = sorted({str(s) for s in jobs["system"]} - known_systems)
    if unknown:
        hint = ", ".join(sorted(known_systems)) or "none yet"
        raise BadInputError(
            f"jobs for system {unknown[0]!r} have no history in the store (its systems: "
            f"{hint}); pass --system NAME, or ingest that system's accounting first",
            path=path)
    advisor = load_walltime_advisor(store) or WalltimeAdvisor().fit(history)
    return advisor.advise(history, jobs, kill_risk)
