"""The store writer: one ingested file's runs and rejects into the store, in one
transaction, with the natural keys that make re-ingest idempotent.

Parsers (:mod:`perfpredict.ingest`) hand it records and batches; it owns everything
SQL about an ingest: claiming the file's batch by sha256 (so two ingests of one file
at once store it once), natural keys (system + job id; for a row without one, its
content digest, the file's sha256 and its occurrence in the file), rejects, systems a
log names first, Darshan I/O attached to stored jobs, the runs of the earlier releases a
file replaces, and SQLite's page cache and Python's cycle collector while a file is
written (on PostgreSQL, the next chunk is parsed in a thread while one is stored).
"""

from __future__ import annotations

import gc
import hashlib
import json
import queue
import shlex
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.engine import Connection, Row

from perfpredict.counts import counted
from perfpredict.errors import BadInputError, DamagedStreamError
from perfpredict.ingest._text.lines import LineLookup
from perfpredict.ingest.records import (
    DARSHAN_DETAILS,
    DARSHAN_LOG_MARK,
    BadRecord,
    IngestOptions,
    ParsedItem,
    RunBatch,
    RunRecord,
    Skipped,
    job_key,
    reread_command,
)
from perfpredict.ingest.registry import (
    CONTENT_KEYED_FORMATS,
    LINE_FORMATS,
    WALL_CLOCK_FORMATS,
    names_system,
    other_format_fix,
)
from perfpredict.names import name_key
from perfpredict.store import Store
from perfpredict.store.dialect import (
    insert_ignoring_duplicates,
    insert_rows,
    insert_rows_ignoring_duplicates,
    wait_for_ingests_of,
)
from perfpredict.store.file_versions import batches_from, line_prefixes, rejected_lines_read
from perfpredict.store.io_first import (
    DARSHAN_FORMAT,
    IoOnlyRuns,
    ran_inside,
    ranks_with_logs,
    unheld,
    with_logs,
)
from perfpredict.store.job_identity import (
    JobTimes,
    ZoneMatch,
    clock_offset_text,
    same_job,
)
from perfpredict.store.occurrences import Occurrences
from perfpredict.store.schema import (
    batch_deletions,
    batch_overlaps,
    ingest_batches,
    rejects,
    runs,
    systems,
)

#: Encoded ``extra`` dicts kept for the rows and batches that follow (see _json_texts).
JSON_CACHE_ENTRIES = 4096
#: SQLite page cache while a file is ingested (64 MiB, within the 512 MiB budget).
INGEST_CACHE_KIB = 64 * 1024
#: Job ids looked up per statement when matching jobs to stored runs (:meth:`same_jobs`).
LOOKUP_CHUNK = 500
#: The columns of a reject as :meth:`_FileIngest.reject` keeps it.
REJECT_COLUMNS = ("batch_id", "line_no", "raw", "reason")
_RECORD_ONLY = {"line_no", "key", "mode"}
_CONTENT_FIELDS = [f for f in RunRecord.__slots__ if f not in _RECORD_ONLY]  # type: ignore[attr-defined]
#: Hashed into a benchmark row's content key. ``variant`` came after keys were first
#: stored, so it is hashed only where given (see content_digests).
_HASHED_FIELDS = [f for f in _CONTENT_FIELDS if f not in ("system", "variant")]

ProgressCallback = Callable[[int], None]
#: What a parser hands the writer: batches of runs, counts of jobs skipped, or single items.
Chunk = RunBatch | Skipped | list[ParsedItem]


@dataclass
class BatchReport:
    """What ingesting one file did, for the summary line and ``--format json``."""

    path: str
    format: str
    n_records: int = 0
    n_stored: int = 0
    n_attached: int = 0
    #: Jobs stored that took the I/O of a Darshan log stored before their accounting.
    n_joined_io: int = 0
    n_duplicates: int = 0
    #: Of those already in the store: runs that took fields they lacked from a record of
    #: the same run (a ``sacct -X`` dump, then one with the steps that give ranks per
    #: node, MaxRSS and I/O; a Darshan log they hold, read again), none they had changed.
    n_filled: int = 0
    n_rejected: int = 0
    #: Of a file skipped as already ingested: the records its earlier ingest rejected
    #: (under --on-error skip), which only --reread reads again once what refused them
    #: is fixed (a missing --system refused a whole file, and the rerun with it was
    #: skipped saying no more than "already ingested").
    n_rejected_earlier: int = 0
    #: Of a file skipped as already ingested: its records that met jobs only a batch
    #: deleted since had stored (:func:`_met_deleted`), which the store lacks until
    #: --reread of the file stores them (a nightly re-ingest said "already ingested" and
    #: left the gap).
    n_met_deleted: int = 0
    #: ``n_met_deleted`` is at most that many: the file was ingested before the store
    #: recorded which batches' runs a file met (schema revision 0009).
    met_deleted_at_most: bool = False
    #: Jobs not run yet (pending, running...), skipped.
    n_unfinished: int = 0
    #: Records with a runtime (a file whose records have none gets a warning).
    n_with_runtime: int = 0
    already_ingested: bool = False
    #: The earlier batch whose file this one is, grown by lines appended
    #: (:func:`_row_keys`): its rows are known by the ones that batch stored.
    grown_from_batch: int | None = None
    #: The earlier batch whose file this one is with lines it rejected fixed since (and
    #: perhaps lines appended; :func:`_row_keys`): the rows it stored are known as its,
    #: and only the lines fixed are stored. The user did as the rejection said (fixed the
    #: line, ingested the file again), and every row but that line was stored twice.
    fixed_from_batch: int | None = None
    #: The lines ``fixed_from_batch`` rejected that this reading read (rejected no more).
    fixed_lines: list[int] = field(default_factory=list)
    #: Runs of earlier releases of the file removed before it was stored (see
    #: :func:`write_file`'s ``replaces``).
    n_replaced: int = 0
    new_systems: list[str] = field(default_factory=list)
    #: Systems the file (or --system) named that are stored under a catalog entry's
    #: other name, by the name given ("perlmutter": "Perlmutter-GPU"): the runs of a
    #: cluster are not where its name says, and only 'runs list' showed it.
    catalog_names: dict[str, str] = field(default_factory=dict)
    first_rejects: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # what a notebook shows of ingest_file(...) and datasets.ingest(...): the counts
        # and the warnings, where the dataclass's repr spelled out twenty fields, most of
        # them zero, and the first rejects' raw lines (600 characters a file, the
        # warnings last); the fields are all still there
        return (f"BatchReport(path={self.path!r}, format={self.format!r}, "
                f"n_records={self.n_records}, n_stored={self.n_stored}, "
                f"n_duplicates={self.n_duplicates}, n_rejected={self.n_rejected}, "
                f"already_ingested={self.already_ingested}, warnings={self.warnings!r})")

    def met_deleted_warning(self, system: str | None) -> str:
        """What a file skipped as already ingested lacks since a delete (a nightly
        re-ingest said "already ingested" and left the gap; ``--format json`` had only
        the count), and the command that stores it."""
        up_to, why = ("up to ", " (it was ingested before the store recorded whose runs a "
                      "file met: all it met then, as a file ingested before it was deleted "
                      "since)") if self.met_deleted_at_most else ("", "")
        return (f"{up_to}{counted(self.n_met_deleted, 'record')} of it met jobs that only a "
                f"file deleted since had stored, so the store lacks them{why}; "
                f"{reread_command(self.format, self.path, system)} stores them")

    def other_system_warning(self, stored_system: str, given_system: str) -> str:
        """What a file skipped as already ingested under another ``--system`` of a log
        that never names its machine (PBS, LSF, Grid Engine, Darshan) stored: a rerun
        with the right system said "already ingested" alone, its runs left under the
        wrong one."""
        return (f"it was ingested with --system {stored_system}, and its runs are stored "
                f"under {stored_system}, not {given_system}; to store them under "
                f"{given_system}, take it out first (perfpredict runs delete --file "
                f"{shlex.quote(self.path)}) and ingest it again")

    def add_warnings(self) -> None:
        """The warnings a user must see: a file that gave nothing, or no runtimes."""
        if self.n_records or self.n_rejected or self.n_unfinished:
            if self.n_records and not self.n_with_runtime and not self.n_attached:
                self.warnings.append(
                    f"none of the {self.n_records} records has a runtime (no Elapsed, "
                    "ElapsedRaw or runtime_s, and no Start and End); they cannot train "
                    "a prediction")
            return
        self.warnings.append("the file holds no records; is it empty, or of another "
                             "format than " + repr(self.format) + "?")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The text columns of a run and the most characters each holds (PostgreSQL refuses a
#: longer value, where SQLite stores it: a store stays one a center can move to a server).
TEXT_LIMITS: dict[str, int] = {
    column.name: int(getattr(column.type, "length", 0)) for column in runs.columns
    if getattr(column.type, "length", None) and column.name != "natural_key"}


def _unfit_texts(batch: RunBatch) -> dict[int, str]:
    """The rows of ``batch`` with a text a store cannot keep, and why: longer than its
    column (an application name of 450 characters), or holding a NUL character, which
    PostgreSQL refuses in any text. A PostgreSQL store failed the whole file on such a
    row with an internal error, ``--on-error skip`` or not. Each column is checked at once
    (its longest value, its values joined) and row by row only where that fails."""
    unfit: dict[int, str] = {}
    for name, limit in TEXT_LIMITS.items():
        values = batch.columns.get(name)
        texts = [v for v in values or () if isinstance(v, str)]
        if not texts or (max(map(len, texts)) <= limit and "\x00" not in "".join(texts)):
            continue
        for i, value in enumerate(values or ()):
            if not isinstance(value, str) or i in unfit:
                continue
            if "\x00" in value:
                unfit[i] = f"{name} holds a NUL character, which a store cannot keep; remove it"
            elif len(value) > limit:
                unfit[i] = (f"{name} is {len(value)} characters long, more than the {limit} a "
                            "store keeps; shorten it")
    return unfit


def content_digests(batch: RunBatch, rows: list[int]) -> list[str]:
    """SHA-1 of ``repr`` of the list of each row's :data:`_HASHED_FIELDS`: the identity
    of a benchmark row without one of its own, which stored runs carry, so it must never
    change. Formatting every value with one ``%r`` template (``None`` where the batch has
    no such column) gives that text without building a list per row. A row with a
    ``variant`` has it appended to the list, so rows without one keep the keys they had
    before variants existed, and rows told apart only by their variant are not merged."""
    template = "[" + ", ".join("%r" if name in batch.columns else "None"
                               for name in _HASHED_FIELDS) + "]"
    columns = [batch.columns[name] for name in _HASHED_FIELDS if name in batch.columns]
    variants = batch.column("variant")
    if len(rows) < len(batch):
        columns = [[column[i] for i in rows] for column in columns]
        variants = [variants[i] for i in rows]
    rows_values = zip(*columns, strict=True) if columns else [()] * len(rows)
    sha1 = hashlib.sha1
    with_variant = template[:-1] + ", %r]"
    return [sha1((template % values if variant is None else with_variant % (*values, variant))
                 .encode("utf-8", "replace")).hexdigest()
            for values, variant in zip(rows_values, variants, strict=True)]


def _content_key(system: str, digest: str, file_sha256: str, occurrence: int) -> str:
    """The natural key of a row identified by its content: the content digest, the
    file's sha256 and the occurrence of that content in the file
    (:class:`~perfpredict.store.occurrences.Occurrences`). Identical benchmark rows are
    genuine repetitions, within a file or in a later one: both are kept."""
    return f"{system}|sha1:{digest}@{file_sha256}#{occurrence}"


def _json_texts(values: list[Any], cache: dict[int, tuple[Any, str]]) -> list[str | None]:
    """JSON of each value, encoding a dict shared by many rows (a batch parser's extra
    fields per distinct combination, shared from block to block) once. ``cache`` holds
    each encoded dict beside its text, so that no other object takes its id meanwhile."""
    out: list[str | None] = []
    for value in values:
        if value is None:
            out.append(None)
            continue
        found = cache.get(id(value))
        if found is None:
            if len(cache) >= JSON_CACHE_ENTRIES:
                cache.clear()
            found = cache[id(value)] = (value, json.dumps(value))
        out.append(found[1])
    return out


#: Where each format names a run's system, for the fix when a run names none.
_NAMES_SYSTEM_BY = {
    "csv": "add a 'system' column",
    "sacct": "export with the Cluster field (sacct --format ...,Cluster)",
    "sacct-json": "export with a cluster (sacct --json of a slurmdbd-backed cluster)",
    "jobcomp": "use a log whose lines have Cluster=",
    "swf": "give the file its '; Computer:' header line",
}

#: When a scheduler job already stored is met again, the record that replaces it: a later
#: incarnation of a requeued job (it started later, or had not started), the same run
#: now ended (a dump taken while it ran, then one after), or, where neither says when
#: it started, the later line of one file (sacct lists incarnations in order). ``sacct
#: -D`` lists a requeued job's incarnations under one job id, and Slurm's jobcomp log
#: writes each; the first kept would be the run a node failure cut short, the one that
#: counted lost. I/O bytes a Darshan log attached stay with the same run (:data:`SAME_RUN`)
#: unless the new record has its own, and go with an incarnation replaced: the log did not
#: run inside the later one.
LATER_INCARNATION = (
    "excluded.job_id IS NOT NULL AND ("
    "excluded.start_epoch_s > runs.start_epoch_s"
    " OR (runs.start_epoch_s IS NULL AND excluded.start_epoch_s IS NOT NULL)"
    " OR (excluded.start_epoch_s = runs.start_epoch_s AND runs.end_epoch_s IS NULL"
    " AND excluded.end_epoch_s IS NOT NULL)"
    " OR (excluded.start_epoch_s IS NULL AND runs.start_epoch_s IS NULL"
    " AND excluded.batch_id = runs.batch_id))")
#: The record met again is the stored run's own (it started when the stored one did, or
#: neither says when).
SAME_RUN = ("excluded.start_epoch_s = runs.start_epoch_s"
            " OR (excluded.start_epoch_s IS NULL AND runs.start_epoch_s IS NULL)")


class _FileIngest:
    """State of one file's ingest inside its transaction."""

    def __init__(self, conn: Connection, path: Path, fmt: str, options: IngestOptions,
                 report: BatchReport, batch_id: int, system_names: SystemNames,
                 sha256: str, read_from: Path | None = None) -> None:
        self.conn, self.path, self.fmt, self.options = conn, path, fmt, options
        self.report, self.batch_id, self.sha256 = report, batch_id, sha256
        self.seen = Occurrences()
        self.json_cache: dict[int, tuple[Any, str]] = {}
        self.known_systems = set(conn.execute(select(systems.c.name)).scalars())
        self.system_names = system_names
        #: The applications of the runs inserted, for :meth:`case_twin_warnings`.
        self.apps: set[str] = set()
        self.io_only = None if fmt == DARSHAN_FORMAT else IoOnlyRuns(conn, batch_id)
        #: Whether the store held runs of each system when this file first named it.
        self.had_runs: dict[str, bool] = {}
        self.batch_formats: dict[int, str] = {}
        #: Jobs stored twice a zone apart, by how far the wall-clock reading is off the
        #: epoch times (:meth:`settle_zones`), and the readings this file replaced.
        self.zone_offsets_s: Counter[int] = Counter()
        self.replaced_readings: set[int] = set()
        #: Rejects not inserted yet, as rows of :data:`REJECT_COLUMNS` (:meth:`store_rejects`).
        self.pending_rejects: list[tuple[Any, ...]] = []
        #: Records of this file that met another batch's run, by that batch
        #: (:meth:`count_met`, kept as ``batch_overlaps``).
        self.met: Counter[int] = Counter()
        #: The file's lines, for rejects (:meth:`refused`): a stream's are its copy's.
        self.lines = LineLookup(read_from or path) if fmt in LINE_FORMATS else None
        #: The most processes a record of this file ran on each system beyond what the
        #: machine's catalog entry can hold (:meth:`check_ranks`).
        self.beyond_machine: dict[str, int] = {}

    def canonical_system(self, name: str) -> str:
        """The system a run naming ``name`` is stored under (:meth:`SystemNames.canonical`),
        so one machine is one system in the store."""
        system = self.system_names.canonical(name, self.known_systems)
        if name_key(system) != name_key(name):
            self.report.catalog_names.setdefault(name, system)
        return system

    def refused(self, line_no: int | None, app: str, reason: str) -> BadRecord:
        """A record refused once parsed, with its line as the raw text where the format
        has one per record, else its application: ``runs rejects`` showed a sacct job's
        name as the raw text of the line it named."""
        line = self.lines.text(line_no) if self.lines and line_no else None
        return BadRecord(line_no, app if line is None else line, reason)

    def reject(self, bad: BadRecord) -> None:
        if bad.whole_file and self.report.n_records:
            # Found after records of the file (a streamed sacct --json document cut short
            # after its first jobs): nothing in it is a good record, so what was stored of
            # it is undone as for a damaged stream, and this is its one reject.
            raise DamagedStreamError(bad.reason, path=self.path, line_no=bad.line_no)
        if self.options.on_error == "fail":
            reason, whole_file = bad.reason, bad.whole_file
            if other := self.other_format(reason):
                # a file of another format: no line of it is to fix, and the parser's
                # fix is for a file of its own (SWF's extra fields, sacct's export)
                reason, whole_file = other, True
            # a whole-file reason names its own fix (a rename, a flag, an export), and
            # skipping bad records stores nothing of such a file: only the other files
            fix = ("; --on-error skip goes on with the other files and keeps this one as a "
                   "reject" if whole_file else
                   " (fix the line, or pass --on-error skip to store the good records and "
                   "keep this one as a reject)")
            raise BadInputError(f"{reason}; nothing from this file was stored{fix}",
                                path=self.path, line_no=bad.line_no)
        self.report.n_rejected += 1
        if len(self.report.first_rejects) < 5:
            self.report.first_rejects.append({"line_no": bad.line_no, "reason": bad.reason})
        self.pending_rejects.append(  # NUL as text: PostgreSQL keeps none
            (self.batch_id, bad.line_no, bad.raw[:10_000].replace("\x00", "\\x00"), bad.reason))

    def other_format(self, reason: str) -> str | None:
        """The format the file looks like where its parser refused it with ``reason``
        before any good record (:func:`~perfpredict.ingest.registry.other_format_fix`),
        else None."""
        if self.report.n_records:
            return None
        return other_format_fix(self.path, self.fmt, reason, self.options.read_as)

    def store_rejects(self) -> None:
        """The rejects kept since the last call, inserted together, in the order they
        came (:meth:`reject`): one statement each made a file of 200,000 bad lines take
        15-20 s on SQLite, 37-39 s on PostgreSQL."""
        insert_rows(self.conn, rejects, REJECT_COLUMNS, self.pending_rejects)
        self.pending_rejects = []

    def store(self, chunk: list[ParsedItem]) -> None:
        """Single items in order: runs are inserted together, up to the next item that
        must see them stored (a bad record may end the ingest; an attach looks runs up)."""
        inserts: list[RunRecord] = []
        for item in chunk:
            if isinstance(item, RunRecord) and item.mode == "insert":
                inserts.append(item)
                continue
            if inserts:
                self.store_batch(RunBatch.of(inserts))
                inserts = []
            if isinstance(item, BadRecord):
                self.reject(item)
            else:
                self.store_attached(item)
        if inserts:
            self.store_batch(RunBatch.of(inserts))

    def system_of(self, given: str | None, line_no: int | None, app: str) -> str | None:
        """The canonical system of a run, or None (rejected) when neither the run nor
        ``--system`` names one."""
        system = given or self.options.system
        if not system:
            self.reject(self.refused(line_no, app, f"no system for this run; "
                                     f"{_NAMES_SYSTEM_BY.get(self.fmt, 'add a system column')} "
                                     "or pass --system NAME"))
            return None
        return self.canonical_system(system)

    def store_attached(self, record: RunRecord) -> None:
        """A record that belongs to a stored run (Darshan I/O), inserted when none is."""
        batch = RunBatch.of([record])
        if unfit := _unfit_texts(batch):
            self.reject(self.refused(record.line_no, record.app, unfit[0]))
            return
        system = self.system_of(record.system, record.line_no, record.app)
        if system is None:
            return
        self.check_ranks(system, record.total_ranks)
        self.count_records(batch)
        key = self.natural_keys(batch, [system])[0]
        if not self.attach(system, key, record):
            self.insert(batch, [system], [key])

    def count_records(self, batch: RunBatch) -> None:
        """Count the rows of ``batch`` as records of the file, once they passed the checks
        here: a row rejected here is counted as rejected only, not also as a record
        "already in the store" (the records neither stored nor attached)."""
        self.report.n_records += len(batch)
        self.report.n_with_runtime += sum(v is not None for v in batch.column("runtime_s"))

    def store_batch(self, batch: RunBatch) -> None:
        unfit = _unfit_texts(batch)
        for i, reason in unfit.items():
            self.reject(self.refused(batch.column("line_no")[i],
                                     batch.column("app")[i] or "", reason))
        if unfit:  # rejected (--on-error skip): left out
            batch = batch.take([i for i in range(len(batch)) if i not in unfit])
        decided = self.systems_of(batch)
        systems = [system for system in decided if system is not None]
        if len(systems) < len(batch):  # rejected rows (--on-error skip) are left out
            batch = batch.take([i for i, system in enumerate(decided) if system is not None])
        self.count_records(batch)
        self.insert(batch, systems, self.natural_keys(batch, systems))

    def natural_keys(self, batch: RunBatch, systems: list[str]) -> list[str]:
        """Each row's natural key: system and the parser's key, or the row's content."""
        keys = batch.column("key")
        natural = [f"{system}|{key}" if key is None or key[:1] == ":"
                   else f"{system}|{self.job_key(key, system)}"
                   for system, key in zip(systems, keys, strict=True)]
        unkeyed = [i for i, key in enumerate(keys) if key is None]
        digests = content_digests(batch, unkeyed)
        for i, digest, occurrence in zip(unkeyed, digests, self.seen.count(digests),
                                         strict=True):
            natural[i] = _content_key(systems[i], digest, self.sha256, occurrence)
        return natural

    def job_key(self, key: str, system: str) -> str:
        """A key as a job's is stored now when it is one of before one key per job,
        ``cluster:id`` of a cluster that is ``system`` (the ``run_key`` of an earlier
        ``runs export``), so the export ingested where its jobs are stores none twice;
        any other key as it is."""
        cluster, colon, job_id = key.partition(":")
        if colon and cluster and self.system_names.canonical(cluster,
                                                             self.known_systems) == system:
            return job_key(job_id, None)
        return key

    def systems_of(self, batch: RunBatch) -> list[str | None]:
        """:meth:`system_of` per row, deciding each distinct name once; a row that names
        none (and no ``--system``) is rejected on its own, with its line."""
        names = batch.column("system")
        distinct = set(names)
        decided = {name: self.system_of(name, None, "") for name in distinct
                   if name or self.options.system}
        if len(decided) == len(distinct):
            return [decided[name] for name in names]
        return [decided[name] if name in decided else self.system_of(name, line_no, app)
                for name, line_no, app in zip(names, batch.column("line_no"),
                                              batch.column("app"), strict=True)]

    def insert(self, batch: RunBatch, systems: list[str], natural_keys: list[str]) -> None:
        """Insert the rows of ``batch`` with their canonical systems and natural keys; a
        key already stored is skipped (counted as a duplicate at the end)."""
        if not len(batch):
            return
        # in order of first appearance, so that the report lists new systems as the file does
        for system in sorted(set(systems) - self.known_systems, key=systems.index):
            self.ensure_system(system)
        # Fields the parser never gives stay out of the statement (NULL): fewer bindings.
        values = {name: batch.columns[name] for name in _CONTENT_FIELDS if name in batch.columns}
        values["system"] = systems
        values.setdefault("censored", [False] * len(batch))
        self.apps.update(batch.column("app"))
        natural_keys, zone_matches = self.same_jobs(batch, systems, natural_keys)
        if zone_matches:
            self.settle_zones(batch, values, natural_keys, zone_matches)
        if "extra" in values:
            values["extra"] = _json_texts(values["extra"], self.json_cache)
        values["natural_key"] = natural_keys
        values["batch_id"] = [self.batch_id] * len(batch)
        values["source_line"] = batch.column("line_no")
        inserted = insert_rows_ignoring_duplicates(
            self.conn, runs, list(values), list(zip(*values.values(), strict=True)),
            "natural_key", replace_where=LATER_INCARNATION, kept=("io_bytes",),
            kept_where=SAME_RUN, filled_where=SAME_RUN, unfilled=("batch_id", "source_line"))
        self.report.n_filled += inserted.n_filled
        if inserted.some_left_out:
            self.count_met(natural_keys)
        self.give_job_ids(batch, natural_keys)
        if self.io_only is not None:
            self.report.n_joined_io += self.io_only.join(systems, batch.column("job_id"))

    def count_met(self, natural_keys: list[str]) -> None:
        """Count the rows of ``natural_keys`` whose run is another batch's: left out as
        stored already (or filling the stored run's empty fields), by that batch. Looked
        up only where the insert left rows out, so a file that meets nothing stored
        costs no lookup."""
        distinct = sorted(set(natural_keys))
        held_by: dict[str, int] = {}
        for start in range(0, len(distinct), LOOKUP_CHUNK):
            held_by.update((row.natural_key, row.batch_id) for row in self.conn.execute(
                select(runs.c.natural_key, runs.c.batch_id).where(
                    runs.c.natural_key.in_(distinct[start:start + LOOKUP_CHUNK]),
                    runs.c.batch_id != self.batch_id)))
        self.met.update(held_by[key] for key in natural_keys if key in held_by)

    def store_overlaps(self) -> None:
        """Keep :attr:`met` as this batch's ``batch_overlaps``, in place of what an
        earlier reading of the file kept."""
        self.conn.execute(batch_overlaps.delete().where(
            batch_overlaps.c.batch_id == self.batch_id))
        insert_rows(self.conn, batch_overlaps, ("batch_id", "met_batch_id", "n_records"),
                    [(self.batch_id, met_batch_id, n_records)
                     for met_batch_id, n_records in sorted(self.met.items())])

    def same_jobs(self, batch: RunBatch, systems: list[str],
                  natural_keys: list[str]) -> tuple[list[str], list[ZoneMatch]]:
        """Each row's natural key, or the key of the stored run that is the same job read
        from an export that keys it otherwise: one without a ``Submit`` column (a job is
        keyed ``id@submit`` where its submit time is known, :func:`job_key`), an array
        task by its JobIDRaw where it is stored as ``123_4`` (a jobcomp log without
        ``ArrayJobId``, :func:`~perfpredict.ingest.sacct.rows.key_id`), an export of a
        release before submit times were keyed. Such a job met again was stored twice.
        Also the rows that are a stored run read in another zone (:class:`ZoneMatch`),
        which :meth:`settle_zones` stores once.

        A stored run of the row's system and job id is the same job when both were
        submitted in the same second; where either lacks a submit time, when both started
        in the same second; where neither tells, when it is the only run of that id and
        nothing says otherwise (:func:`may_be`; two, and the id was reused: which one it
        is, nothing says, and the row is kept apart rather than taken for one of them);
        else, where the row or the run was read from wall-clock text, when all its times
        differ by one zone offset (:func:`zone_shift`: sacct's JSON, in epoch
        seconds, and a ``sacct -P`` dump in local time read as UTC gave one job two
        submit times, and two runs). Looked up only for systems the store held runs of
        before this file (not in a first ingest), by the indexed system and job id."""
        job_ids, keys = batch.column("job_id"), batch.column("key")
        rows = [i for i, (job_id, key) in enumerate(zip(job_ids, keys, strict=True))
                if job_id is not None and key is not None and DARSHAN_LOG_MARK not in key
                and self.held_runs_of(systems[i])]
        if not rows:
            return natural_keys, []
        wanted: dict[str, set[str]] = {}
        for i in rows:
            wanted.setdefault(systems[i], set()).add(job_ids[i])
        stored: dict[tuple[str, str], list[Any]] = {}
        for system, ids in wanted.items():
            ordered = sorted(ids)
            for start in range(0, len(ordered), LOOKUP_CHUNK):
                for row in self.conn.execute(
                        select(runs.c.id, runs.c.natural_key, runs.c.job_id, runs.c.batch_id,
                               *(runs.c[name] for name in JobTimes._fields))
                        .where(runs.c.system == system,
                               runs.c.job_id.in_(ordered[start:start + LOOKUP_CHUNK]),
                               ~runs.c.natural_key.contains(DARSHAN_LOG_MARK,
                                                            autoescape=True))):
                    stored.setdefault((system, row.job_id), []).append(row)
        out = list(natural_keys)
        times = list(zip(*(batch.column(name) for name in JobTimes._fields), strict=True))
        zone_matches: list[ZoneMatch] = []
        for i in rows:
            candidates = stored.get((systems[i], job_ids[i]), [])
            if candidates and all(run.natural_key != out[i] for run in candidates):
                same = same_job(JobTimes(*times[i]), out[i], candidates, self.zone_read)
                if same is None:
                    continue
                run, shift = same
                if shift is not None:
                    zone_matches.append(ZoneMatch(i, shift, run))
                else:
                    out[i] = run.natural_key
        return out, zone_matches

    def zone_read(self, run: Any) -> bool:
        """Whether this file or the stored ``run`` gives wall-clock times, which a zone may
        have put hours off (:data:`~perfpredict.ingest.registry.WALL_CLOCK_FORMATS`)."""
        return (self.fmt in WALL_CLOCK_FORMATS
                or self.format_of(run.batch_id) in WALL_CLOCK_FORMATS)

    def format_of(self, batch_id: int) -> str:
        """The format of the file ingested as batch ``batch_id``."""
        fmt = self.batch_formats.get(batch_id)
        if fmt is None:
            fmt = self.batch_formats[batch_id] = self.conn.execute(
                select(ingest_batches.c.format).where(ingest_batches.c.id == batch_id)
            ).scalar_one()
        return fmt

    def settle_zones(self, batch: RunBatch, values: dict[str, list[Any]],
                     natural_keys: list[str], zone_matches: list[ZoneMatch]) -> None:
        """Store once each row of ``batch`` that is a stored run read in another zone,
        with the times read from epoch seconds; ``values`` (the insert's columns, ``extra``
        not encoded yet) and ``natural_keys`` are changed in place.

        Where this file gives wall-clock times (or both do), the row is the stored run
        met again: it takes the run's key and its times shifted back to the run's, and is
        then what any record met again is (a duplicate, or the same run now ended). Where
        the stored run is the wall-clock reading and this file gives epoch seconds (sacct's
        JSON after a local-time dump), the reading is removed and the row stored in its
        place, with the I/O a Darshan log gave the reading where the row has none: in
        either order the store holds the job once, as the epoch record says, UTC-true."""
        for name in (*JobTimes._fields[:3], "io_bytes", "extra"):
            values[name] = list(values.get(name) or batch.column(name))
        for match in zone_matches:
            if self.fmt in WALL_CLOCK_FORMATS:
                natural_keys[match.row] = match.run.natural_key
                for name, offset_s in zip(JobTimes._fields[:3], match.shift, strict=True):
                    if values[name][match.row] is not None:
                        values[name][match.row] -= offset_s
                self.zone_offsets_s[match.shift.named_s] += 1
                continue
            if match.run.id in self.replaced_readings:  # a job twice in this file
                continue
            self.replaced_readings.add(match.run.id)
            reading = self.conn.execute(select(runs.c.io_bytes, runs.c.extra)
                                        .where(runs.c.id == match.run.id)).one()
            if values["io_bytes"][match.row] is None:
                values["io_bytes"][match.row] = reading.io_bytes
            logs = (reading.extra or {}).get(DARSHAN_DETAILS)
            extra = values["extra"][match.row] or {}
            if logs is not None and DARSHAN_DETAILS not in extra:
                values["extra"][match.row] = {**extra, DARSHAN_DETAILS: logs}
            self.conn.execute(runs.delete().where(runs.c.id == match.run.id))
            self.conn.execute(update(ingest_batches)
                              .where(ingest_batches.c.id == match.run.batch_id)
                              .values(n_stored=ingest_batches.c.n_stored - 1))
            self.zone_offsets_s[-match.shift.named_s] += 1

    def check_ranks(self, system: str, total_ranks: float | None) -> None:
        """Note a record of more processes than ``system``'s machine has hardware threads
        (:attr:`SystemNames.threads`): a Darshan log, which names no machine, read with
        the ``--system`` of another (its hostname is not in it, and its mount points and
        file-system types are nowhere in the catalog to be held against)."""
        limit = self.system_names.threads.get(system)
        if limit is not None and total_ranks is not None and total_ranks > limit:
            self.beyond_machine[system] = max(int(total_ranks),
                                              self.beyond_machine.get(system, 0))

    def machine_warnings(self) -> list[str]:
        """What :meth:`check_ranks` found, once per system: the records are stored (a
        catalog entry may be wrong too), and the user told which to check."""
        return [f"a record of this file ran {total_ranks:,} processes, more than "
                f"{system} has hardware threads ({self.system_names.threads[system]:,}: "
                f"its catalog entry's nodes x cores per node x {MAX_THREADS_PER_CORE}): it "
                f"cannot have run on {system}; check that --system names the machine it "
                f"ran on ('perfpredict systems show {system}')"
                for system, total_ranks in self.beyond_machine.items()]

    def zone_warning(self) -> list[str]:
        """What :meth:`settle_zones` did, and how to read such a dump: the offsets of the
        wall-clock readings from the epoch times (or, where both were wall-clock, from
        the runs stored first)."""
        if not self.zone_offsets_s:
            return []
        n_jobs = sum(self.zone_offsets_s.values())
        offsets = ", ".join(f"{clock_offset_text(offset_s)} for {n}"
                            for offset_s, n in sorted(self.zone_offsets_s.items()))
        return [f"{n_jobs} {'job' if n_jobs == 1 else 'jobs'} of this file "
                f"{'was' if n_jobs == 1 else 'were'} stored already with times a zone apart "
                f"(wall-clock times off by {offsets}): each is stored once, with the times "
                "read from epoch seconds where a file gives them, else as first stored. Read "
                "a local-time dump with --timezone ZONE (the zone of the machine that wrote "
                "it), or export it with TZ=UTC sacct"]

    def give_job_ids(self, batch: RunBatch, natural_keys: list[str]) -> None:
        """A run stored under the id its key names (an array task ``123_4`` read from an
        export without JobIDRaw) takes the JobIDRaw a record of it gives (``130``), by
        which its Darshan log and a jobcomp line without ``ArrayJobId`` find it."""
        renamed = [{"stored_key": natural_key, "shown": key[1:].partition("@")[0],
                    "raw": job_id}
                   for natural_key, key, job_id in zip(natural_keys, batch.column("key"),
                                                       batch.column("job_id"), strict=True)
                   if job_id is not None and key is not None and key[:1] == ":"
                   and key[1:].partition("@")[0] not in (job_id, "")
                   and DARSHAN_LOG_MARK not in key]
        if renamed:
            self.conn.execute(update(runs).where(
                runs.c.natural_key == bindparam("stored_key"),
                runs.c.job_id == bindparam("shown")).values(job_id=bindparam("raw")),
                renamed)

    def held_runs_of(self, system: str) -> bool:
        """Whether the store held runs of ``system`` when this file first named it."""
        held = self.had_runs.get(system)
        if held is None:
            held = self.had_runs[system] = self.conn.execute(
                select(runs.c.id).where(runs.c.system == system).limit(1)).first() is not None
        return held

    def case_twin_warnings(self) -> list[str]:
        """A warning per application of this file whose name another stored one has in
        other letter case ("FlowSim", "flowsim"). Training keeps them apart, and a command
        asked for "FLOWSIM" refuses it as naming both
        (:func:`~perfpredict.names.resolve_name`): the runs of one code split in two
        without a word. Read off the series index, which leads with the application."""
        mine = {app.casefold() for app in self.apps}
        spellings: dict[str, list[str]] = {}
        for app in self.conn.execute(select(runs.c.app).distinct()).scalars():
            if app.casefold() in mine:
                spellings.setdefault(app.casefold(), []).append(app)
        return [f"applications {', '.join(map(repr, sorted(names)))} differ only in "
                "letter case: training keeps them apart and a command finds either only "
                "by its exact name; make the names match"
                for names in spellings.values() if len(names) > 1]

    def attach(self, system: str, key: str, record: RunRecord) -> bool:
        """Add a Darshan log's I/O to the stored run of its job (a log it holds already
        counts among those already in the store); False if there is none.

        The run is found by system + job id (indexed), not by natural key: Grid Engine
        keys its jobs "id@submit time" (its ids wrap around) while a Darshan log knows
        only the id. A run of that id that the log did not run inside is another job
        (:func:`~perfpredict.store.io_first.ran_inside`); of those it did, the run that
        started nearest the record wins. The job's other extra fields stay, a job's logs
        add up (:func:`~perfpredict.store.io_first.with_logs`), and a job whose
        accounting gives no ranks takes the most its logs ran at once
        (:func:`~perfpredict.store.io_first.ranks_with_logs`; a log read again gives them
        to a job that took the log over before it did).
        """
        where = (runs.c.natural_key == key if record.job_id is None
                 else (runs.c.system == system) & (runs.c.job_id == record.job_id))
        candidates = [row for row in self.conn.execute(
            select(runs.c.id, runs.c.batch_id, runs.c.start_epoch_s, runs.c.end_epoch_s,
                   runs.c.io_bytes, runs.c.total_ranks, runs.c.extra)
            .where(where)) if ran_inside(record.start_epoch_s, row.start_epoch_s,
                                         row.end_epoch_s)]
        if not candidates:
            return False
        target = min(candidates, key=lambda row: abs(
            (row.start_epoch_s or 0.0) - (record.start_epoch_s or 0.0)))
        io_bytes, extra = with_logs(target.io_bytes, target.extra, record.io_bytes,
                                    (record.extra or {}).get(DARSHAN_DETAILS))
        total_ranks = ranks_with_logs(target.total_ranks,
                                      (target.extra or {}).get(DARSHAN_DETAILS),
                                      extra.get(DARSHAN_DETAILS))
        changed = (io_bytes, extra, total_ranks) != (target.io_bytes, target.extra or {},
                                                     target.total_ranks)
        if changed:
            self.conn.execute(update(runs).where(runs.c.id == target.id)
                              .values(io_bytes=io_bytes, extra=extra, total_ranks=total_ranks))
        if unheld((target.extra or {}).get(DARSHAN_DETAILS),
                  (record.extra or {}).get(DARSHAN_DETAILS)):
            self.report.n_attached += 1
            return True
        # held already (read again): among those already in the store, and said to be
        # given what it lacked where it was, not attached to a job as a log new to it
        self.report.n_filled += changed
        if target.batch_id != self.batch_id:  # from another file
            self.met[target.batch_id] += 1
        return True

    def ensure_system(self, name: str) -> None:
        """A system first named by a log is created as a placeholder holding no facts,
        and reported so the user can complete its catalog entry. A run's ranks times
        threads per node is no node's core count (Castro's runs on Summit, one rank per
        GPU, made it 6 of 42).

        Reported only when this ingest created it: another ingest running at the same
        time may create it first (on PostgreSQL both read the systems before either
        committed, and both said "new system"), and then the insert stores nothing."""
        if name in self.known_systems:
            return
        self.known_systems.add(name)
        created = self.conn.execute(
            insert_ignoring_duplicates(self.conn, systems, "name").values(
                name=name, origin="ingest", details={
                    "note": f"created by ingest of {self.path.name}; complete it with "
                            "'perfpredict systems add FILE.toml'"},
            ).returning(systems.c.name)).scalar()
        if created is not None:
            self.report.new_systems.append(name)


@contextmanager
def _large_page_cache(conn: Connection) -> Iterator[None]:
    """SQLite's page cache at :data:`INGEST_CACHE_KIB` while a file is stored. With the
    default 2 MB, inserting a large file re-reads pages of the natural-key index
    (content hashes land anywhere in it): a third of the time of 500k CSV rows. The
    setting belongs to the pooled connection, so it is put back."""
    if conn.dialect.name != "sqlite":
        yield
        return
    previous = int(conn.exec_driver_sql("PRAGMA cache_size").scalar_one())
    conn.exec_driver_sql(f"PRAGMA cache_size=-{INGEST_CACHE_KIB}")
    try:
        yield
    finally:
        conn.exec_driver_sql(f"PRAGMA cache_size={previous}")


@contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Python's cycle collector off while a file is parsed and stored. An ingest makes
    millions of short-lived containers (row tuples, lists, dicts) and next to no garbage
    cycles, so the collector's passes over them cost 5-9% of a 1M-line sacct ingest and
    found a few hundred objects; everything else is still freed by reference counts."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: Chunks parsed ahead of the one being stored, on PostgreSQL (see _parsed_ahead).
CHUNKS_AHEAD = 1


@contextmanager
def _parsed_ahead(chunks: Iterable[Chunk], server: bool) -> Iterator[Iterator[Chunk]]:
    """``chunks`` parsed in a thread, up to :data:`CHUNKS_AHEAD` ahead of the chunk being
    stored, when the store is a server's (``server``). PostgreSQL's insert of a chunk
    (its indexes, the foreign key) is most of the time of a file's ingest, and the driver
    waits for it without holding the GIL, so the next chunk is parsed meanwhile, on the
    core the server does not use, as ``psql`` reads a file while the server loads it.
    A parser's error reaches the caller where its chunk would have; a caller that stops
    early (a bad record) stops the parser after the chunk it is on.

    SQLite inserts in this process, and its ingest target is against sqlite3's
    ``.import``, which uses one core: it reads them in turn."""
    if not server:
        yield iter(chunks)
        return
    ready: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=CHUNKS_AHEAD)
    stopping = threading.Event()

    def hand_over(item: tuple[str, Any]) -> bool:
        """``item`` queued once there is room; False if the writer stopped first."""
        while not stopping.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def parse() -> None:
        try:
            for chunk in chunks:
                if not hand_over(("chunk", chunk)):
                    return
            hand_over(("end", None))
        except BaseException as exc:  # raised in the writer, where its chunk would be
            hand_over(("raised", exc))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    def parsed() -> Iterator[Chunk]:
        while True:
            kind, value = ready.get()
            if kind == "end":
                return
            if kind == "raised":
                raise value
            yield value

    parser = threading.Thread(target=parse, name="perfpredict-parse", daemon=True)
    parser.start()
    try:
        yield parsed()
    finally:
        stopping.set()
        parser.join()


#: The most hardware threads a core of any machine runs (POWER8 and POWER9's SMT8; x86
#: and Arm cores run 1 to 4): a bound on what a job may run without oversubscribing
#: every thread, generous enough that no real job of the machine passes it.
MAX_THREADS_PER_CORE = 8


def hardware_threads(nodes: int | None, cores_per_node: int | None) -> int | None:
    """The most processes a job of a machine of ``nodes`` nodes of ``cores_per_node``
    cores runs, at :data:`MAX_THREADS_PER_CORE` a core; None where the catalog lacks
    either number."""
    return nodes * cores_per_node * MAX_THREADS_PER_CORE if nodes and cores_per_node else None


@dataclass(frozen=True)
class SystemNames:
    """The store's systems by :func:`~perfpredict.catalog.name_key` (case, spaces and
    punctuation ignored): the catalog's entries (the shipped ones, seeded first so that a
    machine they know is never reported as new, and users') with their aliases, and the
    systems ingest created for names logs gave."""

    catalog: dict[str, str]
    placeholders: dict[str, str]
    #: The hardware threads of each machine the catalog gives the size of
    #: (:func:`hardware_threads`), which no job's processes outnumber.
    threads: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, store: Store) -> SystemNames:
        from perfpredict.catalog import list_systems

        specs = list_systems(store)
        described = [spec for spec in specs if spec.origin != "ingest"]
        return cls({name_key(alias): spec.name for spec in described
                    for alias in (spec.name, *spec.aliases)},
                   {name_key(spec.name): spec.name for spec in specs
                    if spec.origin == "ingest"},
                   {spec.name: threads for spec in described
                    if (threads := hardware_threads(spec.nodes, spec.cores_per_node))})

    def canonical(self, name: str, stored: set[str]) -> str:
        """The system a run naming ``name`` is stored under: the catalog entry it names
        ("frontier", a data set's long label), else the system of that very name
        (``stored``: the store's systems), else a system ingest created for another
        spelling of it (a cluster "THETA" for a log read with ``--system theta``).

        The very name before the other spelling: a file naming two spellings of one key
        ("...-NVBRIDGE (Dell)" and "...-NVBridge (Dell)" in MLPerf's results; also
        "SYS-420GP-TNAR" and "SYS-420GP-TNAR+", two machines) made two systems at its
        first ingest, which every later one folded into one, so the file read again, or
        an export read into the store it came from, stored their runs a second time."""
        key = name_key(name)
        if key in self.catalog:
            return self.catalog[key]
        return name if name in stored else self.placeholders.get(key, name)

    def same(self, name: str, other: str) -> bool:
        """Whether two names given with ``--system`` are one system ("frontier" and
        "Frontier", a catalog entry and its alias)."""
        return name_key(self.canonical(name, set())) == name_key(self.canonical(other, set()))


def write_file(store: Store, path: Path, fmt: str, sha256: str, options: IngestOptions,
               chunks: Iterable[Chunk],
               progress: ProgressCallback | None = None,
               replaces: Sequence[str] = (), stored_as: str | None = None,
               read_from: Path | None = None) -> BatchReport:
    """Store the parsed ``chunks`` of the file ``path`` (checksum ``sha256``) in one
    transaction; nothing when the file was ingested before, unless ``options.reread`` or
    nothing but rejects was kept of it: then its batch takes what the store lacks of it,
    and its rejects are this reading's.

    ``replaces``: checksums of earlier releases of the same file (a bundled data set
    whose rows were corrected). Their runs are removed in the same transaction, before
    the file's are stored, so a store that loaded one holds the corrected runs once and
    a failed ingest leaves the earlier ones in place.

    ``stored_as``: the name the batch is stored under, for ``runs rejects --file``; by
    default the resolved path (a stream's is its name: ``<stdin>``). ``read_from``: the
    file the chunks were parsed from where ``path`` names a stream (its temporary copy),
    whose lines rejects keep.
    """
    report = BatchReport(path=str(path), format=fmt)
    system_names = SystemNames.of(store)
    with store.engine.begin() as conn:
        wait_for_ingests_of(conn, stored_as or str(path.resolve()))
        # Looked up first: a claim that finds the file stored uses up a batch id all the
        # same (an insert ignored still draws from the sequence), and a nightly re-ingest
        # of a folder left the ids of its batches with gaps of its files' count.
        stored = _stored_batch(conn, sha256, fmt)
        batch_id: int | None = None
        if stored is None:
            # Claiming the batch's unique (sha256, format) decides whether the file is
            # new, also when another ingest of it runs at the same time (two cron jobs):
            # this one waits for the other's outcome instead of failing on the unique
            # index.
            batch_id = conn.execute(
                insert_ignoring_duplicates(conn, ingest_batches, "sha256", "format").values(
                    path=stored_as or str(path.resolve()), sha256=sha256, format=fmt,
                    system=options.system, started_epoch_s=time.time(), n_records=0,
                    n_stored=0, n_duplicates=0, n_rejected=0,
                ).returning(ingest_batches.c.id)).scalar()
            if batch_id is None:  # the other ingest stored it first
                stored = _stored_batch(conn, sha256, fmt)
        n_stored_before = 0
        if stored is not None:
            # A file of which only rejects were kept (--on-error skip of a file that named
            # no system) is read again: said to be ingested already, the file was never
            # stored once the user gave the --system its rejects asked for.
            if not options.reread and not (stored.n_rejected and not stored.n_stored):
                report.already_ingested = True
                report.n_duplicates = stored.n_records
                report.n_rejected_earlier = stored.n_rejected
                report.n_met_deleted, report.met_deleted_at_most = _met_deleted(conn, stored.id)
                if report.n_met_deleted:
                    report.warnings.append(report.met_deleted_warning(options.system))
                if (options.system and stored.system and not names_system(fmt)
                        and not system_names.same(stored.system, options.system)):
                    report.warnings.append(report.other_system_warning(stored.system,
                                                                       options.system))
                return report
            batch_id = stored.id
            conn.execute(rejects.delete().where(rejects.c.batch_id == batch_id))
            n_stored_before = _count_runs(conn, batch_id)
        assert batch_id is not None  # claimed above, or the stored batch's
        row_keys = _RowKeys(sha256)
        if fmt in CONTENT_KEYED_FORMATS:
            row_keys = _row_keys(conn, stored_as or str(path.resolve()), read_from or path,
                                 fmt, sha256)
            report.grown_from_batch = row_keys.grown_from
            report.fixed_from_batch = row_keys.fixed_from
        state = _FileIngest(conn, path, fmt, options, report, batch_id, system_names,
                            row_keys.sha256, read_from)
        try:
            with conn.begin_nested():
                if replaces:
                    report.n_replaced = _drop_releases(conn, fmt, replaces)
                _store_chunks(state, chunks, progress)
        except DamagedStreamError as damage:
            # A file that cannot be read to its end stores nothing, its earlier release
            # stays: it is a file to copy again, and the copy, a new file, would store
            # its benchmark rows (keyed by the file's checksum) a second time beside the
            # part read of this one. Refused as a file whose header cannot be read is,
            # by a state that knows nothing of what the savepoint undid (systems added,
            # jobs found a zone apart, rejects pending).
            report = BatchReport(path=str(path), format=fmt)
            state = _FileIngest(conn, path, fmt, options, report, batch_id, system_names,
                                row_keys.sha256, read_from)
            state.reject(BadRecord(damage.line_no, "", damage.reason, whole_file=True))
            state.store_rejects()
        n_stored = _count_runs(conn, batch_id)
        report.n_stored = n_stored - n_stored_before
        report.n_duplicates = report.n_records - report.n_stored - report.n_attached
        report.add_warnings()
        if report.first_rejects and (
                other := state.other_format(report.first_rejects[0]["reason"])):
            # under --on-error skip, a file of another format is a reject per line, each
            # with the fix for a line of this format
            report.warnings.append(f"every record was rejected: {other}")
        state.store_overlaps()
        if row_keys.fixed_from is not None:
            rejected_now = set(conn.execute(select(rejects.c.line_no).where(
                rejects.c.batch_id == batch_id)).scalars())
            report.fixed_lines = [line_no for line_no in row_keys.fixed_lines
                                  if line_no not in rejected_now]
        if report.n_records:
            _drop_misread_batches(conn, sha256, fmt)
        report.warnings += state.zone_warning()
        report.warnings += state.machine_warnings()
        if report.n_stored:
            report.warnings += state.case_twin_warnings()
        if report.n_stored and row_keys.edited_from and stored_as is None:
            # a stream's name is every stream's: another table piped in is no edit
            report.warnings.append(_edited_warning(row_keys.edited_from))
        # The batch's row counts its runs in all (read again, the file's runs before too).
        # A file first read without the --system its rejects asked for keeps the one it
        # was read again with: 'runs batches' showed none for it, and the 'ingest
        # --reread' a delete names for it left --system out, rejecting every record.
        given_system = ({"system": options.system} if stored is not None
                        and stored.system is None and options.system else {})
        # Stamped again as the transaction's last statement: 'train' notes when it read
        # the store, and an estimate names the runs of batches stamped after that as
        # unseen. Stamped at the claim alone, a file whose ingest began before train read
        # the store and committed after was taken as learned from, and its runs were
        # never named (14,640 runs on PostgreSQL, an ingest of 8 s beside a train).
        restamped = ({"started_epoch_s": time.time()} if stored is None or report.n_stored
                     else {})
        conn.execute(ingest_batches.update().where(ingest_batches.c.id == batch_id).values(
            n_records=report.n_records, n_stored=n_stored,
            n_duplicates=max(report.n_records - n_stored - report.n_attached, 0),
            n_rejected=report.n_rejected, **given_system, **restamped,
        ))
    return report


class _RowKeys(NamedTuple):
    """How the benchmark rows of a file are keyed (:func:`_row_keys`)."""

    #: the checksum in their keys: the file's own, or the first version's it extends
    sha256: str
    #: the earlier batch from the same path that this file extends, if any
    grown_from: int | None = None
    #: else the earlier batch from the same path whose file this one is with lines it
    #: rejected fixed since, and those lines
    fixed_from: int | None = None
    fixed_lines: tuple[int, ...] = ()
    #: else the earlier batches from the same path whose rows are still stored: this
    #: file is an edit of theirs, and its rows are stored again beside them
    edited_from: tuple[int, ...] = ()


def _row_keys(conn: Connection, stored_path: str, file: Path, fmt: str, sha256: str
              ) -> _RowKeys:
    """How the benchmark rows of ``file`` (checksum ``sha256``; its batch's path
    ``stored_path``, ``<stdin>`` for a stream) are keyed: by the earlier batch whose
    file it extends, if any, or else by its own checksum, with the batches it is an edit
    of.

    A row without a job id is known by its content, its file's checksum and its
    occurrence there (:func:`_content_key`), so that the same row in another file, a
    measurement repeated, is kept. A file that grew by lines appended since it was
    ingested (:mod:`perfpredict.store.file_versions`) is no other file: its rows take
    the keys of the first version's, so the nightly ingest of a results CSV a benchmark
    script appends to stores the lines added, where it stored every earlier row again.
    Only an earlier batch that stored such rows counts (one of a header alone would tie
    every later file to it).

    So is a file whose lines an earlier batch rejected were fixed since, its other lines
    unchanged (:func:`~perfpredict.store.file_versions.rejected_lines_read`): the
    rejection said to fix the line and ingest the file again, which stored every other
    row twice. The newest such batch is the one: a second fix reads the file the first
    fix stored, whose rejects are the lines still to fix."""
    earlier = batches_from(conn, stored_path, sha256, fmt)
    versions = set(line_prefixes(earlier, file))
    fixed = rejected_lines_read(conn, [b for b in earlier if b[0] not in versions], file)
    edited_from: list[int] = []
    fixed_keys: _RowKeys | None = None
    for batch_id, _ in earlier:
        key = conn.execute(select(runs.c.natural_key).where(
            runs.c.batch_id == batch_id, runs.c.natural_key.contains("|sha1:")).limit(1)
        ).scalar()
        if key is None:
            continue
        # system|sha1:<row digest>@<file checksum>#<occurrence>
        keys_sha256 = key.rpartition("@")[2].partition("#")[0]
        if batch_id in versions:
            return _RowKeys(keys_sha256, batch_id)
        if batch_id in fixed:
            fixed_keys = _RowKeys(keys_sha256, fixed_from=batch_id,
                                  fixed_lines=tuple(fixed[batch_id]))
        else:
            edited_from.append(batch_id)
    return fixed_keys or _RowKeys(sha256, edited_from=tuple(edited_from))


def _edited_warning(earlier_batches: tuple[int, ...]) -> str:
    """What an ingest of a file edited since it was ingested from the same path says: a
    results table with one runtime corrected stored every row again, the uncorrected ones
    twice, which a fit then weighs as repeated measurements, without a word."""
    ids = ", ".join(map(str, earlier_batches))
    delete = " ".join(f"--batch {batch}" for batch in earlier_batches)
    return (f"it was ingested before from this path with other content ("
            f"{'batch' if len(earlier_batches) == 1 else 'batches'} {ids}), not grown by "
            "lines appended, so its rows without a job id are stored again beside those, "
            "as repeated measurements; if this file replaces it, 'perfpredict runs delete "
            f"{delete}' takes the earlier runs out")


def _stored_batch(conn: Connection, sha256: str, fmt: str
                  ) -> Row[Any, Any, Any, Any, Any] | None:
    """The batch that stored the file of checksum ``sha256`` as ``fmt``, if any: its id,
    counts and the --system it was given (:func:`write_file`)."""
    return conn.execute(select(
        ingest_batches.c.id, ingest_batches.c.n_records, ingest_batches.c.n_stored,
        ingest_batches.c.n_rejected, ingest_batches.c.system).where(
        ingest_batches.c.sha256 == sha256, ingest_batches.c.format == fmt)).one_or_none()


def _drop_misread_batches(conn: Connection, sha256: str, fmt: str) -> None:
    """Drop the batches of the file of checksum ``sha256`` read as another format than
    ``fmt`` that read no record of it, only rejects, now that ``fmt`` read records.

    Under --on-error skip a PBS log given to 'ingest sge' is a reject per line, and the
    warning names 'ingest pbs'; read so, the file was stored whole while 'runs stats'
    still counted the wrong reading's rejects, and 'runs rejects' listed lines that
    were stored, until the batch was deleted by hand."""
    misread = conn.execute(select(ingest_batches.c.id).where(
        ingest_batches.c.sha256 == sha256, ingest_batches.c.format != fmt,
        ingest_batches.c.n_records == 0, ingest_batches.c.n_stored == 0,
        ingest_batches.c.n_rejected > 0)).scalars().all()
    if misread:
        conn.execute(batch_overlaps.delete().where(batch_overlaps.c.batch_id.in_(misread)))
        conn.execute(rejects.delete().where(rejects.c.batch_id.in_(misread)))
        conn.execute(ingest_batches.delete().where(ingest_batches.c.id.in_(misread)))


def _store_chunks(state: _FileIngest, chunks: Iterable[Chunk],
                  progress: ProgressCallback | None) -> None:
    """The parsed ``chunks`` of a file stored in turn (:func:`write_file`)."""
    conn = state.conn
    with (_large_page_cache(conn), _cycle_collection_paused(),
          _parsed_ahead(chunks, conn.dialect.name != "sqlite") as parsed):
        for chunk in parsed:
            if isinstance(chunk, Skipped):
                state.report.n_unfinished += chunk.n_unfinished
                continue
            if isinstance(chunk, RunBatch):
                state.store_batch(chunk)
            else:
                state.store(chunk)
            state.store_rejects()
            if progress:
                progress(len(chunk))


def _met_deleted(conn: Connection, batch_id: int) -> tuple[int, bool]:
    """The records of the batch ``batch_id`` that met runs of batches deleted since, and
    whether that is only at most so many: a job two files held was stored once, from the
    first, and deleting that file left this one's record of it unstored. Told by the
    batch's ``batch_overlaps``; a file ingested before they were kept (one row, the batch
    met unknown) may have met any batch ingested before it, and counts all its records
    met where such a batch was deleted after it was ingested."""
    rows = conn.execute(select(batch_overlaps.c.met_batch_id, batch_overlaps.c.n_records)
                        .where(batch_overlaps.c.batch_id == batch_id)).all()
    held = set(conn.execute(select(ingest_batches.c.id).where(ingest_batches.c.id.in_(
        [row.met_batch_id for row in rows if row.met_batch_id is not None]))).scalars())
    n_met = sum(row.n_records for row in rows
                if row.met_batch_id is not None and row.met_batch_id not in held)
    unrecorded = sum(row.n_records for row in rows if row.met_batch_id is None)
    if unrecorded and conn.execute(select(batch_deletions.c.id).where(
            batch_deletions.c.batch_id < batch_id,
            batch_deletions.c.deleted_epoch_s >= select(ingest_batches.c.started_epoch_s)
            .where(ingest_batches.c.id == batch_id).scalar_subquery())
            .limit(1)).first() is not None:
        return n_met + unrecorded, True
    return n_met, False


def _count_runs(conn: Connection, batch_id: int) -> int:
    return int(conn.execute(
        select(func.count()).select_from(runs).where(runs.c.batch_id == batch_id)).scalar_one())


def _drop_releases(conn: Connection, fmt: str, sha256s: Sequence[str]) -> int:
    """Remove the runs and rejects of the batches of ``fmt`` ingested from the files with
    checksums ``sha256s``; the number of runs removed. The batches themselves stay, with
    nothing stored, so an older perfpredict loading its copy of the file again stores
    nothing rather than a second copy."""
    batch_ids = select(ingest_batches.c.id).where(
        ingest_batches.c.sha256.in_(sha256s), ingest_batches.c.format == fmt)
    n_runs: int = conn.execute(runs.delete().where(runs.c.batch_id.in_(batch_ids))).rowcount
    conn.execute(rejects.delete().where(rejects.c.batch_id.in_(batch_ids)))
    conn.execute(ingest_batches.update().where(ingest_batches.c.id.in_(batch_ids)).values(
        n_stored=0, n_rejected=0))
    return n_runs
