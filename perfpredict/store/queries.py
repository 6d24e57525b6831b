"""Reading runs back out of the store: listing, statistics, export, and the frame the
predictor trains on."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import IO, Any

from sqlalchemy import Select, func, select, tuple_

from perfpredict.store import Store
from perfpredict.store.schema import RUN_FIELDS, ingest_batches, rejects, runs, systems

#: Leading columns of ``runs export --format csv``, named as ``ingest csv`` reads them.
EXPORT_COLUMNS = [
    "job_id", "app", "system", "problem_size", "variant", "nodes", "ranks_per_node",
    "threads_per_rank", "total_ranks", "runtime_s", "io_bytes", "requested_walltime_s", "user",
    "submit_time", "state",
]
_TIME_COLUMNS = {"submit_epoch_s": "submit_time", "start_epoch_s": "start_time",
                 "end_epoch_s": "end_time"}


def _of_apps(query: Select[Any], app: Sequence[str] | None) -> Select[Any]:
    """``query`` narrowed to the runs of ``app`` (all runs when None or empty)."""
    return query.where(runs.c.app.in_(list(app))) if app else query


def _iso(epoch_s: float | None) -> str | None:
    if epoch_s is None:
        return None
    return datetime.fromtimestamp(epoch_s, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def iter_runs(store: Store, *, app: Sequence[str] | None = None, limit: int | None = None,
              batch_rows: int = 10_000) -> Iterator[dict[str, Any]]:
    """Stored runs as dicts in id order, streamed so an export of millions stays small."""
    query = select(*[runs.c[name] for name in ["id", *RUN_FIELDS]]).order_by(runs.c.id)
    query = _of_apps(query, app)
    if limit is not None:
        query = query.limit(limit)
    with store.engine.connect() as conn:
        result = conn.execution_options(yield_per=batch_rows).execute(query)
        for row in result.mappings():
            yield dict(row)


def export_row(run: dict[str, Any]) -> dict[str, Any]:
    """A stored run in the CSV contract's vocabulary (times as ISO 8601 UTC)."""
    out = {k: v for k, v in run.items() if k not in {"id", "extra", *_TIME_COLUMNS}}
    for column, name in _TIME_COLUMNS.items():
        out[name] = _iso(run.get(column))
    for key, value in (run.get("extra") or {}).items():
        out.setdefault(key, value)
    return out


def export_csv(store: Store, out: IO[str], *, app: Sequence[str] | None = None) -> int:
    """Write every stored job as one CSV row; returns the number of rows written.

    The header is the contract's columns, then the other run columns, then the union of
    extra fields, so that the file ingests back into another store unchanged.
    """
    extra_keys: dict[str, None] = {}
    for run in iter_runs(store, app=app):
        for key in run.get("extra") or {}:
            extra_keys.setdefault(key, None)
    base = [*EXPORT_COLUMNS]
    for name in RUN_FIELDS:
        name = _TIME_COLUMNS.get(name, name)
        if name not in base and name != "extra":
            base.append(name)
    header = base + [k for k in extra_keys if k not in base]
    writer = csv.DictWriter(out, fieldnames=header, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    n_rows = 0
    for run in iter_runs(store, app=app):
        row = export_row(run)
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
        n_rows += 1
    return n_rows


def run_stats(store: Store) -> dict[str, Any]:
    """Counts a user checks after ingest: runs, applications, systems, batches, rejects."""
    with store.engine.connect() as conn:
        per_app = conn.execute(
            select(runs.c.app, runs.c.system, func.count().label("n_runs"),
                   func.count(func.distinct(runs.c.nodes)).label("n_scales"),
                   func.min(runs.c.nodes).label("min_nodes"),
                   func.max(runs.c.nodes).label("max_nodes"))
            .group_by(runs.c.app, runs.c.system).order_by(runs.c.app, runs.c.system)
        ).mappings().all()
        totals = {
            "n_runs": conn.execute(select(func.count()).select_from(runs)).scalar_one(),
            "n_apps": conn.execute(select(func.count(func.distinct(runs.c.app)))).scalar_one(),
            "n_systems": conn.execute(select(func.count()).select_from(systems)).scalar_one(),
            "n_batches": conn.execute(
                select(func.count()).select_from(ingest_batches)).scalar_one(),
            "n_rejects": conn.execute(select(func.count()).select_from(rejects)).scalar_one(),
            "n_censored": conn.execute(
                select(func.count()).select_from(runs).where(runs.c.censored)).scalar_one(),
        }
    return {**totals, "series": [dict(r) for r in per_app]}


def app_system_sizes(store: Store, *,
                     app: Sequence[str] | None = None) -> list[tuple[str, str, int]]:
    """(application, system, number of runs) of every pair in the store.

    No series spans two pairs, so they are the partitions Dask workers read the runs in.
    """
    query = (select(runs.c.app, runs.c.system, func.count())
             .group_by(runs.c.app, runs.c.system).order_by(runs.c.app, runs.c.system))
    query = _of_apps(query, app)
    with store.engine.connect() as conn:
        return [(a, s, int(n)) for a, s, n in conn.execute(query).all()]


def count_submitted_jobs(store: Store, *, app: Sequence[str] | None = None) -> int:
    """Runs with a submit time: the scheduler jobs the walltime advisor learns from."""
    query = select(func.count()).select_from(runs).where(runs.c.submit_epoch_s.is_not(None))
    query = _of_apps(query, app)
    with store.engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def runs_frame(store: Store, *, app: Sequence[str] | None = None,  # type: ignore[no-untyped-def]
               with_source: bool = False,
               app_systems: Sequence[tuple[str, str]] | None = None):
    """All runs as a pandas DataFrame (the predictor's and evaluator's input).

    ``with_source`` adds the path of the file each run was ingested from;
    ``app_systems`` keeps only the runs of those (application, system) pairs.
    """
    import pandas as pd

    columns: list[Any] = [runs.c[name] for name in ["id", *RUN_FIELDS]]
    if with_source:
        columns.append(ingest_batches.c.path.label("source"))
    query = select(*columns).select_from(
        runs.join(ingest_batches, runs.c.batch_id == ingest_batches.c.id)).order_by(runs.c.id)
    query = _of_apps(query, app)
    if app_systems is not None:
        query = query.where(tuple_(runs.c.app, runs.c.system).in_(list(app_systems)))
    with store.engine.connect() as conn:
        # rows as plain tuples, not a dict per row: pandas takes SQLAlchemy's Row for
        # an unknown type and probes each for a dtype (a failed key lookup per row),
        # which took longer than the query itself on a million runs
        frame = pd.DataFrame.from_records([tuple(row) for row in conn.execute(query)],
                                          columns=[c.name for c in columns])
    return frame
