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
    import pandas as pd

#: Applications that say nothing about the job (SWF without executable numbers).
ANONYMOUS_APPS = frozenset({"", "unknown"})
RECENT_JOBS = 10
JOB_COLUMNS = (
    "system", "user", "account", "app", "partition", "nodes", "total_ranks",
    "requested_walltime_s", "submit_epoch_s", "start_epoch_s", "end_epoch_s", "runtime_s",
    "state", "censored",
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


@dataclass
class _Recent:
    """Rolling memory of one user's, application's or account's finished jobs."""

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


def known_end_epoch_s(row: dict[str, Any]) -> float | None:
    """When a run's runtime became known: its end, else submit + runtime (the earliest it
    can have ended, exact when the log's submit times are start times, as in NASA-iPSC)."""
    end = _num(row.get("end_epoch_s"))
    if end is not None:
        return end
    start = _num(row.get("start_epoch_s"))
    if start is None:
        start = _num(row.get("submit_epoch_s"))
    runtime = _num(row.get("runtime_s"))
    return start + runtime if start is not None and runtime is not None else None


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

    events: list[tuple[float, int, dict[str, Any]]] = []
    for position, row in enumerate(_records(history)):
        end = known_end_epoch_s(row)
        if end is None or _num(row.get("runtime_s")) is None:
            continue
        events.append((end, position, row))
    events.sort(key=lambda event: (event[0], event[1]))

    job_rows = _records(jobs)
    order = sorted(range(len(job_rows)), key=lambda i: (
        _num(job_rows[i].get("submit_epoch_s")) is None,
        _num(job_rows[i].get("submit_epoch_s")) or 0.0, i))
    users: dict[tuple[Any, Any], _Recent] = {}
    apps: dict[tuple[Any, Any], _Recent] = {}
    accounts: dict[tuple[Any, Any], _Recent] = {}
    systems: dict[Any, _Recent] = {}
    out = np.full((len(job_rows), len(FEATURE_NAMES)), np.nan)
    next_event = 0
    for i in order:
        job = job_rows[i]
        submit = _num(job.get("submit_epoch_s"))
        while next_event < len(events) and (submit is None or events[next_event][0] < submit):
            _, _, done = events[next_event]
            next_event += 1
            log_run = log_runtime(float(done["runtime_s"]))
            request = _num(done.get("requested_walltime_s"))
            ranks = _num(done.get("total_ranks"))
            system = done.get("system")
            for memory, who in ((users, _text(done.get("user"))),
                                (apps, _app(done.get("app"))),
                                (accounts, _text(done.get("account")))):
                if who is not None:
                    memory.setdefault((system, who), _Recent()).add(log_run, request, ranks)
            systems.setdefault(system, _Recent()).add(log_run, request, ranks)
        out[i] = _describe(job, users, apps, accounts, systems)
    return pd.DataFrame(out, columns=list(FEATURE_NAMES), index=jobs.index)


def _app(value: Any) -> str | None:
    text = _text(value)
    return None if text is None or text.lower() in ANONYMOUS_APPS else text


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    columns = [c for c in JOB_COLUMNS if c in frame.columns]
    return frame[columns].to_dict("records")  # type: ignore[return-value]


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
