"""The files a store was filled from, one ingest batch each: listing them, and deleting
what one stored.

A file ingested with the wrong ``--system``, a benchmark table whose runtimes were in
milliseconds, last month's accounting read into the test store: its runs train every
prediction after it, and ingesting the right file does not take them back out (the
wrong runs are other series, or the same jobs, already stored). Deleting its batch
removes the runs and rejects it stored and its record, in one transaction, so that
the file, or the right one, can be ingested again. A center's shared store cannot be
rebuilt from scratch for one wrong file.

What files share stays whole. A job's Darshan I/O is kept on the job's run, whichever
file came first (:mod:`perfpredict.store.io_first`): deleting the log's batch alone
would leave its I/O on a job it no longer explains, and deleting the job's batch alone
would take the log's I/O with it, so such batches are deleted together or not at all.
A job that two files held was stored once, from the first; deleting that file's batch
leaves the other file's record of it unstored, which ``ingest --reread`` of that file
stores (:attr:`BatchesDeleted.rereads`: the files whose records met the deleted runs,
as ingest recorded them in ``batch_overlaps``).

The store keeps a record of each deleted batch (:func:`list_deleted_batches`): a shared
store's users can see what left it, when and by whom, and an estimate can say that its
predictor learned from runs the store no longer holds.
"""

from __future__ import annotations

import getpass
import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any, NamedTuple

from sqlalchemy import Text, cast, func, select
from sqlalchemy.engine import Connection

from perfpredict.counts import first_names, is_number
from perfpredict.errors import BadInputError, NotFoundError, named_path
from perfpredict.ingest.records import DARSHAN_DETAILS
from perfpredict.store import Store
from perfpredict.store.dialect import wait_for_writers
from perfpredict.store.file_versions import earlier_versions
from perfpredict.store.handle import takes_store
from perfpredict.store.io_first import DARSHAN_FORMAT, logs_of
from perfpredict.store.schema import (
    artifacts,
    batch_deletion_apps,
    batch_deletions,
    batch_overlaps,
    ingest_batches,
    rejects,
    runs,
    systems,
)
from perfpredict.utc import iso_utc

#: Columns of ``runs batches``: which file, when and how it was read, and what of it the
#: store holds now (runs and rejects counted as stored, not as the ingest reported them:
#: a later file may have taken a job over). ``system`` is the systems its stored runs
#: are in, ``system_option`` the ``--system`` it was read with: a log that names its
#: cluster (sacct's Cluster field) stores its runs there whatever --system said, and a
#: listing that showed the option alone sent a user looking for runs under a system
#: that held none of them. ``stored_from`` is the batches, still held, that stored the
#: jobs its records met already stored (a job two files hold is stored once, from the
#: first): a dump that repeats an earlier file's jobs stores no run and showed a blank
#: system, as if it named none. None where the store did not record them (a file
#: ingested before schema revision 0009 that met stored jobs).
BATCH_COLUMNS = ["batch", "file", "format", "runs", "rejects", "ingested", "system",
                 "system_option", "records", "stored_from"]
#: Columns of ``runs batches --deleted``: which file, what it held when it was deleted,
#: when it was ingested and deleted, and by whom; ``system_option`` is the ``--system``
#: it was read with, as in :data:`BATCH_COLUMNS`.
DELETED_COLUMNS = ["batch", "file", "format", "runs", "rejects", "ingested", "deleted",
                   "deleted_by", "system_option"]


class Reread(NamedTuple):
    """A file whose records met runs a delete removes: ``ingest FORMAT --reread PATH
    [--system SYSTEM]`` stores them from it."""

    format: str
    path: str
    #: the --system it was read with
    system: str | None
    #: Its records that met the deleted runs; None where it was ingested before the
    #: store recorded which batches' runs a file met (schema revision 0009), after a
    #: deleted batch, and met runs already stored: they may be the deleted ones.
    n_records: int | None


@dataclass(frozen=True)
class BatchesDeleted:
    """What deleting ingest batches removed (or, ``dry_run``, would remove)."""

    #: the batches, as :func:`list_batches` lists them
    batches: list[dict[str, Any]]
    n_runs: int
    n_rejects: int
    dry_run: bool
    #: Systems only the deleted runs named, added to the catalog by their ingest (origin
    #: ``ingest``, no details a user gave): they go with them.
    systems: list[str] = field(default_factory=list)
    #: The files whose records met runs of the deleted batches (stored once, from the
    #: deleted file), which ``ingest FORMAT --reread FILE`` stores (:func:`_rereads`).
    rereads: list[Reread] = field(default_factory=list)
    #: When a predictor or walltime advisor was trained after the earliest deleted file
    #: was ingested (epoch seconds of the newest such training): it learned from runs
    #: the store no longer holds, and answers with them until trained again.
    trained_since_epoch_s: float | None = None


@takes_store
def list_batches(store: Store) -> list[dict[str, Any]]:
    """Every ingested file, in the order it was first ingested (:data:`BATCH_COLUMNS`;
    ``ingested`` in ISO 8601 UTC)."""
    with store.engine.connect() as conn:
        return [_listed(row) for row in _batch_rows(conn)]


@takes_store
def delete_batches(store: Store, batch_ids: int | Iterable[int] = (), *,
                   files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] = (),
                   dry_run: bool = False) -> BatchesDeleted:
    """Remove the runs and rejects the ingest batches ``batch_ids`` stored, and those of
    the batches that ingested ``files`` (found by their content: :func:`_batches_of`;
    each one or a list),
    and their records, in one transaction; with ``dry_run``, only say what would go. A
    batch the store does not hold is a :class:`NotFoundError`, as is a file it never
    ingested; batches that share a job's Darshan I/O with one not named, a
    :class:`BadInputError` naming them all, before anything is removed."""
    checksums = {_file_checksum(path): path for path in _one_or_many(files, (str, PurePath))}
    batch_ids = _batch_numbers(batch_ids)
    if not batch_ids and not checksums:
        raise BadInputError("name the ingest batch to delete (--batch ID, or --file PATH "
                            "for the file it was ingested from); 'perfpredict runs batches' "
                            "lists them")
    if store.read_only and not dry_run:
        raise BadInputError(f"the store at {store.safe_url} is read-only for you; deleting "
                            "from it needs a role or file permissions that may write it")
    with store.engine.begin() as conn:
        if not dry_run:
            # An ingest under way that met these batches' runs commits first: decided
            # before it did, the delete named no file to reread, and the jobs that ingest
            # found stored were lost with the deleted runs without a word.
            wait_for_writers(conn)
        wanted = sorted({*batch_ids, *(batch for sha256, path in checksums.items()
                                       for batch in _batches_of(conn, sha256, path))})
        listed = _batch_rows(conn, wanted)
        _refuse_missing(wanted, [row["batch"] for row in listed])
        _refuse_split_io(conn, set(wanted))
        n_runs = sum(row["runs"] for row in listed)
        n_rejects = sum(row["rejects"] for row in listed)
        rereads = _rereads(conn, wanted)
        first_ingested_s = min(row["ingested_epoch_s"] for row in listed)
        trained_s = conn.execute(select(func.max(artifacts.c.created_epoch_s)).where(
            artifacts.c.created_epoch_s >= first_ingested_s)).scalar()
        named_only_here = _systems_named_only_by(conn, wanted)
        if not dry_run:
            _record_deletions(conn, listed)
            # what other files met of these batches stays: their records of those jobs
            # are unstored now (ingest_file says so when such a file comes again)
            conn.execute(batch_overlaps.delete().where(batch_overlaps.c.batch_id.in_(wanted)))
            conn.execute(runs.delete().where(runs.c.batch_id.in_(wanted)))
            conn.execute(rejects.delete().where(rejects.c.batch_id.in_(wanted)))
            conn.execute(ingest_batches.delete().where(ingest_batches.c.id.in_(wanted)))
            conn.execute(systems.delete().where(systems.c.name.in_(named_only_here)))
    return BatchesDeleted([_listed(row) for row in listed], n_runs, n_rejects, dry_run,
                          named_only_here, rereads,
                          None if trained_s is None else float(trained_s))


@takes_store
def list_deleted_batches(store: Store) -> list[dict[str, Any]]:
    """Every ingest batch deleted from the store, in the order deleted
    (:data:`DELETED_COLUMNS`; times in ISO 8601 UTC)."""
    with store.engine.connect() as conn:
        return [{"batch": row.batch_id, "file": row.path, "format": row.format,
                 "runs": row.n_runs, "rejects": row.n_rejects,
                 "ingested": iso_utc(math.floor(row.ingested_epoch_s)),
                 "deleted": iso_utc(math.floor(row.deleted_epoch_s)),
                 "deleted_by": row.deleted_by, "system_option": row.system}
                for row in conn.execute(select(batch_deletions).order_by(batch_deletions.c.id))]


def _one_or_many(given: Any, one: type | tuple[type, ...]) -> list[Any]:
    """``given`` as a list: one of kind ``one`` alone, as ``app=`` takes one name, else
    what the iterable holds. A file named alone as text was read letter by letter (its
    first, "/", refused as "a directory"), a batch number alone was a TypeError."""
    if isinstance(given, one):
        return [given]
    return list(given) if isinstance(given, Iterable) else [given]


def _batch_numbers(batch_ids: Any) -> list[int]:
    """``batch_ids`` (one or many) as the whole numbers batches are numbered by, else a
    :class:`BadInputError`: the text "12" named batches 1 and 2 and was refused as "no
    ingest batch 1, 2" in a store that held both, and True was an SQLAlchemy error."""
    numbers = _one_or_many(batch_ids, (int, str, bytes))
    wrong = [n for n in numbers if not is_number(n, whole=True)]
    if wrong:
        raise BadInputError(f"batch_ids must be batch numbers, as [2] ('perfpredict runs "
                            f"batches' lists them), got {wrong[0]!r}")
    return [int(n) for n in numbers]


def _file_checksum(path: str | os.PathLike[str]) -> str:
    """The checksum ingest identifies the file at ``path`` by, or a :class:`BadInputError`
    where there is no file to read."""
    from perfpredict.ingest._text.lines import STDIN_NAME, STDIN_PATH, file_sha256

    path = named_path(path, "a file whose batches to delete")
    if str(path) == STDIN_PATH:  # ingest reads it; here it answered "No such file"
        raise BadInputError(f"{path}: standard input cannot name the file to delete; name "
                            "the file its output was saved to, or the batch (--batch ID: "
                            f"'perfpredict runs batches' lists what was piped in as "
                            f"{STDIN_NAME})")
    try:
        return file_sha256(Path(path))
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read it ({exc.strerror or exc}); name a file "
                            "that was ingested, or its batch (--batch ID) from 'perfpredict "
                            "runs batches'") from exc


def _batches_of(conn: Connection, sha256: str, path: str | os.PathLike[str]) -> list[int]:
    """The batches that ingested the file ``path`` whose checksum is ``sha256``: ingest
    knows a file by its content (in any format it was read as), so the same file under
    another name is found, and an edited one is not, which is a :class:`NotFoundError`
    naming the batches ingested from that path before its content changed. A file that
    grew by lines appended since an earlier ingest from its path holds that batch's
    rows too, which ingest stored once (:mod:`perfpredict.store.file_versions`): its
    earlier versions' batches are the file's as well."""
    same = conn.execute(select(ingest_batches.c.id).where(ingest_batches.c.sha256 == sha256))
    found = [*earlier_versions(conn, str(Path(path).resolve()), Path(path), sha256),
             *same.scalars()]
    if found:
        return found
    earlier = sorted(conn.execute(select(ingest_batches.c.id).where(
        ingest_batches.c.path == str(Path(path).resolve()))).scalars())
    raise NotFoundError(
        f"{path}: this store never ingested this file's content" + (
            f"; its path was ingested as batch{'es' if len(earlier) > 1 else ''} "
            f"{', '.join(map(str, earlier))} when it held something else: delete "
            f"{'them' if len(earlier) > 1 else 'it'} with "
            f"{' '.join(f'--batch {i}' for i in earlier)}" if earlier else
            "; 'perfpredict runs batches' lists the files it did"))


def require_batches(store: Store, batch_ids: Sequence[int]) -> None:
    """A :class:`NotFoundError` naming those of ``batch_ids`` the store does not hold."""
    with store.engine.connect() as conn:
        _refuse_missing(batch_ids, conn.execute(select(ingest_batches.c.id).where(
            ingest_batches.c.id.in_(batch_ids))).scalars())


def _refuse_missing(wanted: Iterable[int], held: Iterable[int]) -> None:
    missing = sorted(set(wanted) - set(held))
    if missing:
        raise NotFoundError(f"no ingest batch {', '.join(map(str, missing))} in this store; "
                            "'perfpredict runs batches' lists them")


def _systems_named_only_by(conn: Connection, batch_ids: Sequence[int]) -> list[str]:
    """The systems that ingest added to the catalog (origin ``ingest``) and no run but
    those of ``batch_ids`` names: a wrong ``--system`` would stay listed by ``systems
    list`` after its runs were gone."""
    named_elsewhere = select(runs.c.system).where(runs.c.batch_id.not_in(batch_ids))
    return list(conn.execute(
        select(systems.c.name).where(
            systems.c.origin == "ingest",
            systems.c.name.in_(select(runs.c.system).where(runs.c.batch_id.in_(batch_ids))),
            systems.c.name.not_in(named_elsewhere))
        .order_by(systems.c.name)).scalars())


def _batch_rows(conn: Connection, batch_ids: Sequence[int] | None = None
                ) -> list[dict[str, Any]]:
    """The batches (``batch_ids``, or all) as :data:`BATCH_COLUMNS`, each with its
    ``ingested_epoch_s`` and ``sha256`` too; their runs and rejects counted as stored now."""
    def per_batch(table: Any) -> Any:
        counted = select(table.c.batch_id, func.count().label("n")).group_by(table.c.batch_id)
        if batch_ids is not None:  # only those counted (runs by their batch index)
            counted = counted.where(table.c.batch_id.in_(batch_ids))
        return counted.subquery()

    n_runs, n_rejects = per_batch(runs), per_batch(rejects)
    run_systems = _run_systems(conn, batch_ids)
    stored_from = _stored_from(conn, batch_ids)
    query = (select(ingest_batches, n_runs.c.n.label("n_runs"),
                    n_rejects.c.n.label("n_rejects_now"))
             .outerjoin(n_runs, n_runs.c.batch_id == ingest_batches.c.id)
             .outerjoin(n_rejects, n_rejects.c.batch_id == ingest_batches.c.id)
             .order_by(ingest_batches.c.id))
    if batch_ids is not None:
        query = query.where(ingest_batches.c.id.in_(batch_ids))
    return [{"batch": row.id, "file": row.path, "format": row.format,
             "runs": row.n_runs or 0, "rejects": row.n_rejects_now or 0,
             "ingested": iso_utc(math.floor(row.started_epoch_s)),
             "system": first_names(run_systems[row.id]) if run_systems.get(row.id) else None,
             "system_option": row.system, "records": row.n_records,
             "stored_from": stored_from.get(row.id, []),
             "ingested_epoch_s": row.started_epoch_s, "sha256": row.sha256}
            for row in conn.execute(query)]


def _run_systems(conn: Connection, batch_ids: Sequence[int] | None) -> dict[int, list[str]]:
    """The systems the runs of each batch (``batch_ids``, or all) are stored under, in
    name order: a few of the hundreds an MLPerf table names are shown by ``first_names``."""
    query = select(runs.c.batch_id, runs.c.system).distinct()
    if batch_ids is not None:
        query = query.where(runs.c.batch_id.in_(batch_ids))
    found: dict[int, list[str]] = {}
    for batch_id, system in conn.execute(query.order_by(runs.c.batch_id, runs.c.system)):
        found.setdefault(batch_id, []).append(system)
    return found


def _stored_from(conn: Connection, batch_ids: Sequence[int] | None
                 ) -> dict[int, list[int] | None]:
    """The batches, still held, whose runs the records of each batch (``batch_ids``, or
    all) met (its ``batch_overlaps``), in batch order; None for a batch whose overlaps
    name no batch (ingested before the store recorded them)."""
    query = (select(batch_overlaps.c.batch_id, batch_overlaps.c.met_batch_id)
             .outerjoin(ingest_batches, ingest_batches.c.id == batch_overlaps.c.met_batch_id)
             .where(batch_overlaps.c.met_batch_id.is_(None) | ingest_batches.c.id.is_not(None))
             .order_by(batch_overlaps.c.batch_id, batch_overlaps.c.met_batch_id))
    if batch_ids is not None:
        query = query.where(batch_overlaps.c.batch_id.in_(batch_ids))
    found: dict[int, list[int] | None] = {}
    for batch_id, met_batch_id in conn.execute(query):
        met = found.setdefault(batch_id, [])
        if met_batch_id is None:
            found[batch_id] = None
        elif met is not None:
            met.append(met_batch_id)
    return found


def _record_deletions(conn: Connection, listed: list[dict[str, Any]]) -> None:
    """Keep a record of each batch about to be deleted (``batch_deletions``), with the
    runs of each application it holds (``batch_deletion_apps``)."""
    batch_ids = [row["batch"] for row in listed]
    apps: dict[int, list[dict[str, Any]]] = {}
    for batch_id, app, n_runs in conn.execute(
            select(runs.c.batch_id, runs.c.app, func.count())
            .where(runs.c.batch_id.in_(batch_ids)).group_by(runs.c.batch_id, runs.c.app)):
        apps.setdefault(batch_id, []).append({"app": app, "n_runs": n_runs})
    deleted_s, deleted_by = time.time(), _login()
    for row in listed:
        deletion_id = conn.execute(batch_deletions.insert().values(
            batch_id=row["batch"], path=row["file"], sha256=row["sha256"],
            format=row["format"], system=row["system_option"],
            ingested_epoch_s=row["ingested_epoch_s"], deleted_epoch_s=deleted_s,
            deleted_by=deleted_by, n_runs=row["runs"], n_rejects=row["rejects"],
        ).returning(batch_deletions.c.id)).scalar_one()
        if apps.get(row["batch"]):
            conn.execute(batch_deletion_apps.insert(), [
                {"deletion_id": deletion_id, **of_app} for of_app in apps[row["batch"]]])


def _login() -> str | None:
    """The operating system's name for the user deleting, where it has one (a container
    run under a numeric id without a passwd entry has none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def _listed(row: dict[str, Any]) -> dict[str, Any]:
    return {column: row[column] for column in BATCH_COLUMNS}


def _refuse_split_io(conn: Connection, deleted: set[int]) -> None:
    """Refuse to delete a batch without the batches it shares Darshan I/O with: a run of
    one holding the I/O of a log another ingested (the log's batch is told by its file's
    name, as the run's details name the log)."""
    log_batches: dict[str, list[int]] = {}
    for batch_id, path in conn.execute(select(ingest_batches.c.id, ingest_batches.c.path)
                                       .where(ingest_batches.c.format == DARSHAN_FORMAT)):
        log_batches.setdefault(PurePath(path).name, []).append(batch_id)
    if not log_batches:
        return
    linked: set[int] = set()
    for run in conn.execute(select(runs.c.batch_id, runs.c.extra).where(
            cast(runs.c.extra, Text).contains(f'"{DARSHAN_DETAILS}"', autoescape=True))):
        for log in logs_of((run.extra or {}).get(DARSHAN_DETAILS)):
            for log_batch in log_batches.get(str(log.get("log")), []):
                if (log_batch in deleted) != (run.batch_id in deleted):
                    linked |= {log_batch, run.batch_id}
    others = sorted(linked - deleted)
    if not others:
        return
    named = ", ".join(f"{row['batch']} ({row['file']})" for row in _batch_rows(conn, others))
    together = " ".join(f"--batch {i}" for i in sorted(deleted | linked))
    raise BadInputError(
        f"batch{'es' if len(others) > 1 else ''} {named} share{'' if len(others) > 1 else 's'} "
        "Darshan I/O with what you asked to delete (a job's run holds the I/O of a log "
        f"ingested from another file): delete them together ({together}), then ingest "
        "again the files that were right")


def _rereads(conn: Connection, deleted: Sequence[int]) -> list[Reread]:
    """The files whose records met runs of the ``deleted`` batches: a job two files held
    was stored once, from the first, so the store lacks their records of those jobs once
    it is deleted, and ``ingest --reread`` of them stores them. Ingest records the
    batches whose runs a file's records met (``batch_overlaps``); a file ingested before
    it did (its one row names no batch) is named where it came after a deleted batch,
    as it may have met its runs."""
    n_met: dict[int, int | None] = {}
    for batch_id, met_batch_id, n_records in conn.execute(
            select(batch_overlaps.c.batch_id, batch_overlaps.c.met_batch_id,
                   batch_overlaps.c.n_records).where(
                batch_overlaps.c.batch_id.not_in(deleted),
                batch_overlaps.c.met_batch_id.in_(deleted)
                | (batch_overlaps.c.met_batch_id.is_(None)
                   & (batch_overlaps.c.batch_id > min(deleted))))):
        before = n_met.get(batch_id, 0)
        n_met[batch_id] = (None if met_batch_id is None or before is None
                           else before + n_records)
    return [Reread(row.format, row.path, row.system, n_met[row.id])
            for row in conn.execute(
                select(ingest_batches.c.id, ingest_batches.c.format, ingest_batches.c.path,
                       ingest_batches.c.system)
                .where(ingest_batches.c.id.in_(n_met)).order_by(ingest_batches.c.id))]
