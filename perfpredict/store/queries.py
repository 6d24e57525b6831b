"""Reading runs back out of the store: listing, statistics, export, and the frame the
predictor trains on."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, func, select, tuple_

from perfpredict.counts import check_count
from perfpredict.errors import BadInputError, NotFoundError, named_path
from perfpredict.ingest.records import RUN_KEY
from perfpredict.ingest.registry import FORMATS
from perfpredict.names import ResolvedName, given_names, refuse_blank, resolve_name
from perfpredict.remedies import LOAD_DATASETS
from perfpredict.store import Store
from perfpredict.store.batches import require_batches
from perfpredict.store.handle import takes_store
from perfpredict.store.schema import RUN_FIELDS, ingest_batches, rejects, runs
from perfpredict.utc import iso_utc

#: Leading columns of ``runs export --format csv``, named as ``ingest csv`` reads them.
EXPORT_COLUMNS = [
    "job_id", "app", "system", "problem_size", "variant", "nodes", "ranks_per_node",
    "threads_per_rank", "total_ranks", "runtime_s", "io_bytes", "requested_walltime_s", "user",
    "submit_time", "state",
]
_TIME_COLUMNS = {"submit_epoch_s": "submit_time", "start_epoch_s": "start_time",
                 "end_epoch_s": "end_time"}
#: The column of ``runs export`` naming the format each run was read from, which ``ingest
#: csv`` keeps as an extra field (:func:`source_format`).
SOURCE_FORMAT = "source_format"
#: (application, system) pairs asked for per query by ``runs_frame(app_systems=...)``:
#: PostgreSQL reads a list of row values as a chain of ORs, which ran out of stack at
#: 17,000 pairs (and 32,768 pairs bind more parameters than a statement may), and a
#: SQLite before 3.32 binds 999 at most.
PAIRS_PER_QUERY = 400


def named_apps(app: str | Iterable[str] | None) -> list[str]:
    """The applications ``app`` names: one name is one application, not its letters
    (``runs_frame(store, app="bert")`` asked for the runs of 'b', 'e', 'r' and 't'), and
    any collection of names is names, a pandas Series or a numpy array of them too
    (``app=runs.app.unique()`` was "the truth value of an array is ambiguous"). Anything
    else is refused: ``app=5`` was a TypeError, ``app=[5]`` silently no runs, and an
    empty or blank name (``runs export --app ""``) was said to be one the store holds no
    runs of, exit 1, where it is a name missing (:func:`~perfpredict.names.refuse_blank`)."""
    names = given_names(app, "app", "an application's name", "['LULESH']")
    for name in names:
        refuse_blank(name, "an application's name",
                     "give one the store holds, or leave it out for every application")
    return names


def _of_apps(query: Select[Any], app: str | Iterable[str] | None) -> Select[Any]:
    """``query`` narrowed to the runs of ``app`` (all runs when None or empty)."""
    names = named_apps(app)
    return query.where(runs.c.app.in_(names)) if names else query


def _limited(query: Select[Any], limit: int | None) -> Select[Any]:
    """``query`` with at most ``limit`` rows (None: all), as ``--limit`` takes it (0 or
    more): -1 was no limit on SQLite and an error of PostgreSQL's, and the text "3" was
    taken as a number."""
    if limit is None:
        return query
    check_count("limit", limit, least=0)
    return query.limit(limit)


def source_format() -> ColumnElement[str]:
    """The format a run was read from: its ingest batch's, or, for a run of a CSV that
    is another store's export, the format that store had read it from.

    Training tells benchmark rows from scheduler jobs by it
    (:func:`perfpredict.model.series.scaling_study_runs`): a store moved from SQLite to
    PostgreSQL by ``runs export`` and ``ingest csv`` had every sacct, PBS and SWF job
    come back as a benchmark row, and ``train`` fitted 421 series where the store it
    came from fitted 241. A value that names no ingest format other than csv is a
    user's own column, not an export's, and changes nothing.
    """
    exported = runs.c.extra[SOURCE_FORMAT].as_string()
    return case((and_(ingest_batches.c.format == "csv",
                      exported.in_([name for name in FORMATS if name != "csv"])), exported),
                else_=ingest_batches.c.format).label(SOURCE_FORMAT)


@takes_store
def iter_runs(store: Store, *, app: str | Sequence[str] | None = None, limit: int | None = None,
              batch_rows: int = 10_000, keys: bool = False,
              batch: int | None = None, formats: bool = False) -> Iterator[dict[str, Any]]:
    """Stored runs as dicts in id order, streamed so an export of millions stays small;
    with ``keys``, each with its ``natural_key`` too; with ``batch``, only the runs that
    ingest batch stored (what ``runs delete --batch`` would remove). An application
    ``app`` names that the store holds no runs of is a :class:`NotFoundError`, and one it
    holds in another letter case is found (:func:`resolve_apps`): ``runs export --app
    BERT > bert.csv`` wrote a header alone and exit 0. So is a batch it does not hold.
    With ``formats``, each with its :func:`source_format` too."""
    apps = resolved_app_names(store, app)
    names = ["id", *RUN_FIELDS, *(["natural_key"] if keys else [])]
    query = select(*[runs.c[name] for name in names]).order_by(runs.c.id)
    if formats:
        query = query.add_columns(source_format()).join(
            ingest_batches, runs.c.batch_id == ingest_batches.c.id)
    query = _of_apps(query, apps)
    if batch is not None:
        require_batches(store, [batch])
        query = query.where(runs.c.batch_id == batch)
    query = _limited(query, limit)
    with store.engine.connect() as conn:
        result = conn.execution_options(yield_per=batch_rows).execute(query)
        for row in result.mappings():
            yield dict(row)


def export_row(run: dict[str, Any], json_text: bool = True) -> dict[str, Any]:
    """A stored run in the CSV contract's vocabulary (times as ISO 8601 UTC), with its
    :data:`RUN_KEY` where ``run`` has its natural key; structured extra fields (a Darshan
    log's details) as JSON text, or, not ``json_text``, as the objects they are."""
    out = {k: v for k, v in run.items()
           if k not in {"id", "extra", "natural_key", *_TIME_COLUMNS}}
    for column, name in _TIME_COLUMNS.items():
        out[name] = iso_utc(run.get(column))
    if (natural_key := run.get("natural_key")) is not None:
        out[RUN_KEY] = natural_key.removeprefix(f"{run['system']}|")
    for key, value in (run.get("extra") or {}).items():
        # structured fields (a Darshan log's details) as JSON, which ingest csv reads back
        out.setdefault(key, json.dumps(value, sort_keys=True)
                       if json_text and isinstance(value, (dict, list)) else value)
    return out


@dataclass(frozen=True)
class RunExport:
    """``runs export``: the header and the rows, streamed from the store as they are read."""

    columns: list[str]
    rows: Iterator[dict[str, Any]]


@takes_store
def export_runs(store: Store, *, app: str | Sequence[str] | None = None,
                batch: int | None = None, json_text: bool = True) -> RunExport:
    """Every stored job in the CSV contract's vocabulary (:func:`export_row`), one pass to
    collect the extra fields' names and a second, lazy one for the rows.

    The columns are the contract's, then the other run columns, :data:`RUN_KEY` and
    :data:`SOURCE_FORMAT`, then the union of extra fields, so that a CSV of them ingests
    back into another store unchanged (a store moved to PostgreSQL trains as it did), and
    into one that holds the runs already (a restored backup, a merge, the scheduler log
    the export came from) without storing them twice. ``batch``: only the runs that
    ingest batch stored (a copy of what ``runs delete --batch`` removes).
    ``json_text=False`` keeps structured extra fields as objects, for a JSON export: as
    text there, a script had to decode a Darshan log's details from a string.
    """
    extra_keys: dict[str, None] = {}
    for run in iter_runs(store, app=app, batch=batch):
        for key in run.get("extra") or {}:
            extra_keys.setdefault(key, None)
    base = [*EXPORT_COLUMNS]
    for name in RUN_FIELDS:
        name = _TIME_COLUMNS.get(name, name)
        if name not in base and name != "extra":
            base.append(name)
    base += [RUN_KEY, SOURCE_FORMAT]
    columns = base + [k for k in extra_keys if k not in base]
    return RunExport(columns, (export_row(run, json_text) for run in iter_runs(
        store, app=app, keys=True, batch=batch, formats=True)))


#: Columns of ``runs rejects``: where each reject is, why, and the line as read.
REJECT_COLUMNS = ["file", "format", "line", "reason", "raw"]


@takes_store
def iter_rejects(store: Store, *, path: str | os.PathLike[str] | None = None,
                 limit: int | None = None) -> Iterator[dict[str, Any]]:
    """The records ingest kept as rejects (``--on-error skip``), file by file in the
    order they were ingested and line by line (:data:`REJECT_COLUMNS`; ``line`` is
    1-based, None for a whole file refused); ``path``: those of that file only, named as
    ingest named it. An ingest prints the first five of a file's rejects, and the rest
    were in the store with no command to read them. A file the store never ingested is a
    :class:`NotFoundError`."""
    query = (select(ingest_batches.c.path.label("file"), ingest_batches.c.format,
                    rejects.c.line_no.label("line"), rejects.c.reason, rejects.c.raw)
             .join(ingest_batches, rejects.c.batch_id == ingest_batches.c.id)
             .order_by(rejects.c.batch_id, rejects.c.line_no, rejects.c.id))
    with store.engine.connect() as conn:
        if path is not None:
            from perfpredict.ingest._text.lines import stream_name

            path = named_path(path, "the file whose rejects to list")
            # as ingest stored it: a file resolved, a stream by its name (<stdin>, which
            # '-' names as it does for ingest)
            names = {str(Path(path).resolve()), str(path), stream_name(Path(path))}
            if conn.execute(select(ingest_batches.c.id).where(
                    ingest_batches.c.path.in_(names)).limit(1)).first() is None:
                raise NotFoundError(f"{path} was never ingested into this store; "
                                    "'perfpredict runs rejects' without --file lists the "
                                    "rejects of every file it was")
            query = query.where(ingest_batches.c.path.in_(names))
        for row in conn.execute(_limited(query, limit)).mappings():
            yield dict(row)


@takes_store
def run_stats(store: Store) -> dict[str, Any]:
    """Counts a user checks after ingest: runs, applications, systems, batches, rejects;
    and per application and system its scales, in nodes, or in ranks where its runs give
    none (a benchmark table of core counts: "0 scales" would say nothing was measured)."""
    scales = [stat.label(f"{name}_{unit}")
              for unit, column in (("nodes", runs.c.nodes), ("ranks", runs.c.total_ranks))
              for name, stat in (("n", func.count(func.distinct(column))),
                                 ("min", func.min(column)), ("max", func.max(column)))]
    with store.engine.connect() as conn:
        per_app = conn.execute(
            select(runs.c.app, runs.c.system, func.count().label("n_runs"), *scales)
            .group_by(runs.c.app, runs.c.system).order_by(runs.c.app, runs.c.system)
        ).mappings().all()
        totals = {
            "n_runs": conn.execute(select(func.count()).select_from(runs)).scalar_one(),
            "n_apps": conn.execute(select(func.count(func.distinct(runs.c.app)))).scalar_one(),
            # systems that have runs, not catalog entries (every store holds the catalog)
            "n_systems": conn.execute(
                select(func.count(func.distinct(runs.c.system)))).scalar_one(),
            "n_batches": conn.execute(
                select(func.count()).select_from(ingest_batches)).scalar_one(),
            "n_rejects": conn.execute(select(func.count()).select_from(rejects)).scalar_one(),
            "n_censored": conn.execute(
                select(func.count()).select_from(runs).where(runs.c.censored)).scalar_one(),
        }
    return {**totals, "series": [_scales_row(r) for r in per_app]}


def _scales_row(row: Any) -> dict[str, Any]:
    unit = "nodes" if row["n_nodes"] or not row["n_ranks"] else "ranks"
    return {"app": row["app"], "system": row["system"], "n_runs": row["n_runs"],
            "n_scales": row[f"n_{unit}"], "min_scale": row[f"min_{unit}"],
            "max_scale": row[f"max_{unit}"], "scale_unit": unit}


def app_system_sizes(store: Store, *,
                     app: str | Sequence[str] | None = None) -> list[tuple[str, str, int]]:
    """(application, system, number of runs) of every pair in the store (of the
    applications ``app`` names, found as :func:`resolve_apps` finds them).

    No series spans two pairs, so they are the partitions Dask workers read the runs in.
    """
    query = (select(runs.c.app, runs.c.system, func.count())
             .group_by(runs.c.app, runs.c.system).order_by(runs.c.app, runs.c.system))
    query = _of_apps(query, resolved_app_names(store, app))
    with store.engine.connect() as conn:
        return [(a, s, int(n)) for a, s, n in conn.execute(query).all()]


def ingested_sha256s(store: Store) -> set[str]:
    """The checksums of every file ingested into the store (of any format)."""
    with store.engine.connect() as conn:
        return set(conn.execute(select(ingest_batches.c.sha256)).scalars())


def stored_apps(store: Store) -> list[str]:
    """Every application the store holds runs of, by name."""
    with store.engine.connect() as conn:
        return sorted(conn.execute(select(runs.c.app).distinct()).scalars())


@takes_store
def resolve_apps(store: Store, app: str | Iterable[str] | None) -> list[ResolvedName]:
    """The stored application each name of ``app`` means, as every command and library
    function taking an application finds it (:func:`~perfpredict.names.resolve_name`:
    the name, else the one stored name equal to it but for case and surrounding white
    space); each :class:`~perfpredict.names.ResolvedName` says the spelling used where it
    differs. A name the store holds no runs of is a :class:`NotFoundError` with the names
    it may have meant; ``train``, ``evaluate`` and ``runs export`` took names exactly, and
    an unknown one left them "nothing to train on: 0 runs" or a header alone."""
    names = named_apps(app)
    if not names:
        return []
    stored = stored_apps(store)
    resolved = []
    for name in names:
        found = resolve_name(name, stored, "application")
        if found is None:
            from perfpredict.names import close_names

            close = close_names(name, stored)
            more = " ..." if len(stored) > 12 else ""
            hint = (f"did you mean {', '.join(close)}?" if close else
                    f"its applications: {', '.join(stored[:12])}{more}" if stored else
                    f"ingest runs first (e.g. {LOAD_DATASETS})")
            raise NotFoundError(f"the store holds no runs of application {name!r}; {hint}")
        resolved.append(ResolvedName(name, found, "application"))
    return resolved


def resolved_app_names(store: Store, app: str | Iterable[str] | None) -> list[str]:
    """The stored names of the applications ``app`` names (:func:`resolve_apps`): what
    a function taking ``app=`` selects runs by."""
    return [resolved.stored for resolved in resolve_apps(store, app)]


def count_submitted_jobs(store: Store, *, app: str | Sequence[str] | None = None) -> int:
    """Runs with a submit time (of the applications ``app`` names, found as
    :func:`resolve_apps` finds them): the scheduler jobs the walltime advisor learns from."""
    query = select(func.count()).select_from(runs).where(runs.c.submit_epoch_s.is_not(None))
    query = _of_apps(query, resolved_app_names(store, app))
    with store.engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def _app_system_pairs(app_systems: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    """The distinct (application, system) pairs ``app_systems`` names, each checked: a
    pair of another length, or of other than names, failed in the database (SQLite's
    "sub-select returns 1 columns", PostgreSQL's "operator does not exist"), and a text
    was read as pairs of its letters."""
    wanted = "app_systems must be (application, system) pairs of names, as [('LULESH', 'Quartz')]"
    if isinstance(app_systems, str) or not isinstance(app_systems, Iterable):
        raise BadInputError(f"{wanted}; got {app_systems!r}")
    pairs: dict[tuple[str, str], None] = {}
    for pair in app_systems:
        if (isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2
                or not all(isinstance(name, str) for name in pair)):
            raise BadInputError(f"{wanted}; got {pair!r} among them")
        pairs.setdefault((pair[0], pair[1]), None)
    return list(pairs)


def frame_dtypes(columns: Iterable[Any]) -> dict[str, Any]:
    """The pandas dtype of each of ``columns`` (SQLAlchemy columns or labels) in
    :func:`runs_frame`, from its type in the schema rather than from the values read:
    pandas inferred them, so a column was float64 in one store and object in another,
    and every column object on an empty store (``df.io_bytes.mean()``, ``describe()``
    and plots failed or skipped them).

    Numbers are float64 with NaN where missing, counts (``nodes``, ``gpus``,
    ``exit_code``) included, as ``pandas.read_csv`` reads a column of whole numbers with
    gaps: pandas' nullable Int64 would show missing counts as ``pd.NA``, which the
    training code, numpy and plotting libraries read as neither a number nor NaN. A
    column that is never missing (``id``) is int64, a flag (``censored``) bool, text
    pandas' own text dtype (``str`` from pandas 3, object before), and ``extra`` (a
    dict per run, or None) object.
    """
    import numpy as np
    import pandas as pd

    text = pd.Series(["text"]).dtype
    dtypes: dict[str, Any] = {}
    for column in columns:
        kind = column.type.python_type
        if kind is int:
            dtypes[column.name] = np.int64 if getattr(column, "nullable", True) is False \
                else np.float64
        else:
            dtypes[column.name] = {bool: np.bool_, float: np.float64, str: text}.get(kind, object)
    return dtypes


@takes_store
def runs_frame(store: Store, *, app: str | Sequence[str] | None = None,  # type: ignore[no-untyped-def]
               with_source: bool = False,
               app_systems: Iterable[Sequence[str]] | None = None):
    """All runs as a pandas DataFrame (the predictor's and evaluator's input), with the
    format each was ingested from (``source_format``), each column of one dtype
    whatever the store and its runs (:func:`frame_dtypes`): numbers float64 with NaN
    where missing, ``censored`` bool, text as pandas holds text. Times are seconds since
    the Unix epoch (UTC) in the ``*_epoch_s`` columns, as stored;
    ``pd.to_datetime(df.submit_epoch_s, unit="s", utc=True)`` gives timestamps.

    ``app`` keeps the runs of those applications, each found as every command finds it
    (:func:`resolve_apps`: ``app="BERT"`` reads the store's bert, and one it holds no
    runs of is a :class:`NotFoundError`, not an empty frame); ``with_source`` adds the
    path of the file each run was ingested from; ``app_systems`` keeps only the runs of
    those (application, system) pairs, asked for :data:`PAIRS_PER_QUERY` at a time.

    >>> runs_frame(store).io_bytes.mean()  # doctest: +SKIP
    """
    import pandas as pd

    columns: list[Any] = [runs.c[name] for name in ["id", *RUN_FIELDS]]
    # benchmark rows or scheduler jobs (perfpredict.model.series.scaling_study_runs)
    columns.append(source_format())
    if with_source:
        columns.append(ingest_batches.c.path.label("source"))
    query = select(*columns).select_from(
        runs.join(ingest_batches, runs.c.batch_id == ingest_batches.c.id)).order_by(runs.c.id)
    query = _of_apps(query, resolved_app_names(store, app))
    queries = [query]
    if app_systems is not None:
        pairs = _app_system_pairs(app_systems)
        queries = [query.where(tuple_(runs.c.app, runs.c.system).in_(
            pairs[start:start + PAIRS_PER_QUERY]))
            for start in range(0, len(pairs), PAIRS_PER_QUERY)]
    with store.engine.connect() as conn:
        # rows as plain tuples, not a dict per row: pandas takes SQLAlchemy's Row for
        # an unknown type and probes each for a dtype (a failed key lookup per row),
        # which took longer than the query itself on a million runs
        rows = [tuple(row) for query in queries for row in conn.execute(query)]
    if len(queries) > 1:
        rows.sort(key=lambda row: row[0])  # in id order, as one query gives them
    frame = pd.DataFrame.from_records(rows, columns=[c.name for c in columns])
    return frame.astype(frame_dtypes(columns))
