"""What is known about a job when it is submitted, as numbers a regressor can use.

A job's features come from its own request (requested time, processors, nodes) and from the
history of *earlier* jobs: those that ended strictly before it was submitted, keyed by its
user, its application and its account (group), each within the job's system. Every earlier
job counts, failed and cancelled ones too: in accounting logs "failed" often means "ran
into its limit" (KTH-SP2: median failed job ran 3,564 s at 80% of its request), which is
exactly what walltime advice must learn. Nothing
measured after the submission enters, so the same code serves training (where the queried
jobs are the history itself) and advice for jobs about to be submitted.

Runtimes enter as ``log(max(runtime_s, 1))``: runtimes span seconds to days and the error
of a prediction is multiplicative.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: Applications that say nothing about the job (SWF without executable numbers).
ANONYMOUS_APPS = frozenset({"", "unknown"})
RECENT_JOBS = 10
JOB_COLUMNS = (
    "system", "user", "account", "app", "nodes", "total_ranks",
    "requested_walltime_s", "submit_epoch_s", "start_epoch_s", "end_epoch_s", "runtime_s",
    "censored",
)
FEATURE_NAMES = (
    "log_request_s", "log_ranks", "log_nodes", "hour_utc", "weekday_utc",
    "user_log_n", "user_last1", "user_last2_mean", "user_median", "user_max",
    "user_median_log_ratio", "user_max_log_ratio", "user_last_log_ratio",
    "user_same_shape_last", "user_same_shape_log_n", "user_same_request",
    "user_last2_vs_request", "app_log_n", "app_last1", "app_median", "app_max",
    "account_log_n", "account_median", "account_median_log_ratio", "system_median",
)


def log_runtime(runtime_s: float) -> float:
    return math.log(max(runtime_s, 1.0))


@dataclass(slots=True)
class _Recent:
    """Rolling memory of one user's, application's or account's finished jobs; only a
    user's memory keeps runtimes per (request, ranks) shape, the only one read."""

    track_shapes: bool = False
    n_jobs: int = 0
    log_runtimes: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_JOBS))
    log_ratios: deque[float] = field(default_factory=lambda: deque(maxlen=RECENT_JOBS))
    last_request_s: float | None = None
    by_shape: dict[tuple[float | None, float | None], tuple[float, int]] = field(
        default_factory=dict)

    def add(self, log_run: float, request_s: float | None, ranks: float | None) -> None:
        self.n_jobs += 1
        self.log_runtimes.append(log_run)
        if request_s:
            self.log_ratios.append(log_run - math.log(max(request_s, 1.0)))
        self.last_request_s = request_s
        if not self.track_shapes:
            return
        shape = (request_s, ranks)
        _, n_shape = self.by_shape.get(shape, (0.0, 0))
        self.by_shape[shape] = (log_run, n_shape + 1)


def _median(values: deque[float]) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def _num(value: Any) -> float | None:
    """A finite float, or None for missing (None, NaN, pandas NA)."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def known_end_epochs_s(columns: JobColumns) -> np.ndarray:
    """When each run's runtime became known: its end, else start (or submit) + runtime,
    the earliest it can have ended (exact when the log's submit times are start times,
    as in NASA-iPSC); NaN when it cannot be told."""
    import numpy as np

    start = columns.numbers("start_epoch_s")
    start = np.where(np.isnan(start), columns.numbers("submit_epoch_s"), start)
    end = columns.numbers("end_epoch_s")
    return np.where(np.isnan(end), start + columns.numbers("runtime_s"), end)


def _hour_weekday(submit_epoch_s: float | None) -> tuple[float, float]:
    if submit_epoch_s is None:
        return math.nan, math.nan
    days = submit_epoch_s / 86400.0
    return (days % 1.0) * 24.0, float((int(days) + 3) % 7)  # 1970-01-01 was a Thursday


def history_features(history: pd.DataFrame, jobs: pd.DataFrame) -> pd.DataFrame:
    """One row of :data:`FEATURE_NAMES` per row of ``jobs`` (same index and order).

    ``history`` holds finished runs (the store), ``jobs`` the jobs to describe; both have
    the columns of :data:`JOB_COLUMNS` (missing ones count as unknown). A history run
    counts for a job when its runtime is known and it ended strictly before the job's
    submission; a job without a submit time sees all
    of the history (it is being submitted now).
    """
    import numpy as np
    import pandas as pd

    past = JobColumns(history)
    ends = known_end_epochs_s(past)
    runtimes = past.numbers("runtime_s")
    usable = np.flatnonzero(~np.isnan(ends) & ~np.isnan(runtimes))
    events = usable[np.argsort(ends[usable], kind="stable")]

    queries = JobColumns(jobs)
    submits = queries.numbers("submit_epoch_s")
    # jobs without a submit time are being submitted now: last, after every past run
    order = np.lexsort((np.arange(queries.n_rows), np.nan_to_num(submits, nan=np.inf)))
    users: dict[tuple[Any, Any], _Recent] = {}
    apps: dict[tuple[Any, Any], _Recent] = {}
    accounts: dict[tuple[Any, Any], _Recent] = {}
    systems: dict[Any, _Recent] = {}
    out = np.full((queries.n_rows, len(FEATURE_NAMES)), np.nan)
    requests = past.numbers("requested_walltime_s").tolist()
    ranks = past.numbers("total_ranks").tolist()
    who = [past.texts(name) for name in ("system", "user", "app", "account")]
    event_list, end_list, runtime_list = events.tolist(), ends.tolist(), runtimes.tolist()
    next_event = 0
    for i in order.tolist():
        submit = submits[i]
        while next_event < len(event_list) and (math.isnan(submit)
                                                or end_list[event_list[next_event]] < submit):
            done = event_list[next_event]
            next_event += 1
            log_run = log_runtime(runtime_list[done])
            request = None if math.isnan(requests[done]) else requests[done]
            rank = None if math.isnan(ranks[done]) else ranks[done]
            system, user, app, account = (column[done] for column in who)
            if (key := _text(user)) is not None:
                if (memory := users.get((system, key))) is None:
                    memory = users[system, key] = _Recent(track_shapes=True)
                memory.add(log_run, request, rank)
            for group, key in ((apps, _app(app)), (accounts, _text(account))):
                if key is not None:
                    group.setdefault((system, key), _Recent()).add(log_run, request, rank)
            systems.setdefault(system, _Recent()).add(log_run, request, rank)
        out[i] = _describe(queries.row(i), users, apps, accounts, systems)
    return pd.DataFrame(out, columns=list(FEATURE_NAMES), index=jobs.index)


class JobColumns:
    """A frame's :data:`JOB_COLUMNS` as plain lists, one row built as a dict on demand.

    A dict per row for the whole history (``to_dict("records")``) repeats every key in
    every row; a million-job store is read with each column held once instead.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self.n_rows = len(frame)
        self.columns = {c: frame[c].tolist() for c in JOB_COLUMNS if c in frame.columns}

    def numbers(self, column: str) -> np.ndarray:
        """``column`` as floats, NaN where missing or not a number."""
        import numpy as np
        import pandas as pd

        if column not in self.columns:
            return np.full(self.n_rows, np.nan)
        values = pd.to_numeric(pd.Series(self.columns[column], dtype=object), errors="coerce")
        return values.to_numpy(dtype=float, na_value=np.nan)

    def texts(self, column: str) -> list[Any]:
        """``column`` as a list (None for every row when the frame lacks it)."""
        return self.columns.get(column, [None] * self.n_rows)

    def row(self, i: int) -> dict[str, Any]:
        return {c: values[i] for c, values in self.columns.items()}


def _app(value: Any) -> str | None:
    text = _text(value)
    return None if text is None or text.lower() in ANONYMOUS_APPS else text


def _describe(job: dict[str, Any], users: dict[tuple[Any, Any], _Recent],
              apps: dict[tuple[Any, Any], _Recent], accounts: dict[tuple[Any, Any], _Recent],
              systems: dict[Any, _Recent]) -> list[float]:
    nan = math.nan
    system = job.get("system")
    request = _num(job.get("requested_walltime_s"))
    ranks = _num(job.get("total_ranks"))
    nodes = _num(job.get("nodes"))
    log_request = math.log(max(request, 1.0)) if request else nan
    hour, weekday = _hour_weekday(_num(job.get("submit_epoch_s")))

    user = users.get((system, _text(job.get("user"))))
    if user is not None and user.n_jobs:
        runs = user.log_runtimes
        last2 = math.log(sum(math.exp(v) for v in list(runs)[-2:]) / len(list(runs)[-2:]))
        shape = user.by_shape.get((request, ranks))
        user_part = [
            math.log1p(user.n_jobs), runs[-1], last2, _median(runs), max(runs),
            _median(user.log_ratios), max(user.log_ratios, default=nan),
            user.log_ratios[-1] if user.log_ratios else nan,
            shape[0] if shape else nan, math.log1p(shape[1]) if shape else 0.0,
            float(request is not None and user.last_request_s == request),
            last2 - log_request,
        ]
    else:
        user_part = [0.0, nan, nan, nan, nan, nan, nan, nan, nan, 0.0, 0.0, nan]

    app = apps.get((system, _app(job.get("app"))))
    app_part = ([math.log1p(app.n_jobs), app.log_runtimes[-1], _median(app.log_runtimes),
                 max(app.log_runtimes)] if app is not None else [0.0, nan, nan, nan])
    account = accounts.get((system, _text(job.get("account"))))
    account_part = ([math.log1p(account.n_jobs), _median(account.log_runtimes),
                     _median(account.log_ratios)] if account is not None else [0.0, nan, nan])
    whole = systems.get(system)
    return [
        log_request, math.log(ranks) if ranks else nan, math.log(nodes) if nodes else nan,
        hour, weekday, *user_part, *app_part, *account_part,
        _median(whole.log_runtimes) if whole is not None else nan,
    ]
