"""Ingest files into the store: checksum, parse, store, in one transaction per file.

Guarantees a user relies on:

* A file already ingested (same sha256 and format) stores nothing and says so.
* Runs carry a natural key (system + job id, or a content hash for benchmark rows), so a
  job seen in two overlapping accounting dumps is stored once.
* ``on_error="fail"`` (default): the first bad record refuses the whole file with its
  path, 1-based line and reason; nothing from it is stored. ``on_error="skip"``: good
  records are stored and bad ones go to the rejects table with their reason.
* One transaction per file: a crash (even SIGKILL) leaves the store as it was before the
  file, and a rerun completes it.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection

from perfpredict.errors import BadInputError
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord
from perfpredict.ingest.registry import get_parser
from perfpredict.ingest.textio import file_sha256
from perfpredict.store import Store
from perfpredict.store.dialect import insert_ignoring_duplicates
from perfpredict.store.schema import ingest_batches, rejects, runs, systems

CHUNK_RECORDS = 5_000
_RECORD_ONLY = {"line_no", "key", "mode", "attach_fields"}
_CONTENT_FIELDS = [f for f in RunRecord.__slots__ if f not in _RECORD_ONLY]  # type: ignore[attr-defined]

ProgressCallback = Callable[[int], None]


@dataclass
class BatchReport:
    """What ingesting one file did, for the summary line and ``--format json``."""

    path: str
    format: str
    n_records: int = 0
    n_stored: int = 0
    n_attached: int = 0
    n_duplicates: int = 0
    n_rejected: int = 0
    already_ingested: bool = False
    new_systems: list[str] = field(default_factory=list)
    first_rejects: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _natural_key(system: str, record: RunRecord, seen: Counter[str]) -> str:
    if record.key is not None:
        return f"{system}|{record.key}"
    content = repr([getattr(record, name) for name in _CONTENT_FIELDS if name != "system"])
    digest = hashlib.sha1(content.encode("utf-8", "replace")).hexdigest()
    # Identical benchmark rows in one file are genuine repetitions: number them.
    seen[digest] += 1
    return f"{system}|sha1:{digest}#{seen[digest]}"


def _row(record: RunRecord, system: str, key: str, batch_id: int) -> dict[str, Any]:
    row = {name: getattr(record, name) for name in _CONTENT_FIELDS}
    row.update(system=system, natural_key=key, batch_id=batch_id, source_line=record.line_no)
    return row


def _chunks(items: Iterable[ParsedItem], size: int) -> Iterator[list[ParsedItem]]:
    chunk: list[ParsedItem] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _FileIngest:
    """State of one file's ingest inside its transaction."""

    def __init__(self, conn: Connection, path: Path, fmt: str, options: IngestOptions,
                 report: BatchReport, batch_id: int, catalog_names: dict[str, str]) -> None:
        self.conn, self.path, self.fmt, self.options = conn, path, fmt, options
        self.report, self.batch_id = report, batch_id
        self.seen: Counter[str] = Counter()
        self.known_systems = set(conn.execute(select(systems.c.name)).scalars())
        self.catalog_names = catalog_names

    def canonical_system(self, name: str) -> str:
        """A catalog entry's own name for ``name`` when it is one of its aliases ("frontier",
        a data set's long label), so one machine is one system in the store."""
        return self.catalog_names.get(name.strip().casefold(), name)

    def reject(self, bad: BadRecord) -> None:
        if self.options.on_error == "fail":
            raise BadInputError(
                f"{bad.reason}; nothing from this file was stored (fix the line, or pass "
                "--on-error skip to store the good records and keep this one as a reject)",
                path=self.path, line_no=bad.line_no,
            )
        self.report.n_rejected += 1
        if len(self.report.first_rejects) < 5:
            self.report.first_rejects.append({"line_no": bad.line_no, "reason": bad.reason})
        self.conn.execute(rejects.insert().values(
            batch_id=self.batch_id, line_no=bad.line_no, raw=bad.raw[:10_000], reason=bad.reason,
        ))

    def store(self, chunk: list[ParsedItem]) -> None:
        inserts: list[dict[str, Any]] = []
        for item in chunk:
            if isinstance(item, BadRecord):
                self.reject(item)
                continue
            self.report.n_records += 1
            system = item.system or self.options.system
            if not system:
                self.reject(BadRecord(item.line_no, item.app,
                                      "no system for this run; add a 'system' column or "
                                      "pass --system NAME"))
                continue
            system = self.canonical_system(system)
            self.ensure_system(system, item)
            key = _natural_key(system, item, self.seen)
            if item.mode == "attach" and self.attach(system, key, item):
                continue
            inserts.append(_row(item, system, key, self.batch_id))
        if inserts:
            self.conn.execute(insert_ignoring_duplicates(self.conn, runs, "natural_key"), inserts)

    def attach(self, system: str, key: str, record: RunRecord) -> bool:
        """Merge ``record.attach_fields`` into the stored run it describes; False if none.

        The run is found by system + job id (indexed), not by natural key: a scheduler
        dump with a Cluster column keys its jobs "cluster:id" while a Darshan log knows
        only the id. When a job id was reused, the run that started nearest the record
        wins. ``extra`` is merged, not replaced, so the scheduler's extra fields survive.
        """
        where = (runs.c.natural_key == key if record.job_id is None
                 else (runs.c.system == system) & (runs.c.job_id == record.job_id))
        candidates = self.conn.execute(
            select(runs.c.id, runs.c.start_epoch_s, runs.c.extra).where(where)).all()
        if not candidates:
            return False
        target = min(candidates, key=lambda row: abs(
            (row.start_epoch_s or 0.0) - (record.start_epoch_s or 0.0)))
        values = {name: getattr(record, name) for name in record.attach_fields}
        if "extra" in values:
            values["extra"] = {**(target.extra or {}), **(record.extra or {})}
        self.conn.execute(update(runs).where(runs.c.id == target.id).values(values))
        self.report.n_attached += 1
        return True

    def ensure_system(self, name: str, record: RunRecord) -> None:
        """A system first named by a log is created from what the log tells, and reported
        so the user can complete its catalog entry."""
        if name in self.known_systems:
            return
        self.known_systems.add(name)
        cores = None
        if record.nodes and record.total_ranks and record.threads_per_rank:
            cores = round(record.total_ranks * record.threads_per_rank / record.nodes)
        self.conn.execute(insert_ignoring_duplicates(self.conn, systems, "name"), [{
            "name": name, "cores_per_node": cores, "origin": "ingest", "details": {
                "note": f"created by ingest of {self.path.name}; complete it with "
                        "'perfpredict systems add FILE.toml'"},
        }])
        self.report.new_systems.append(name)


def _catalog_names(store: Store) -> dict[str, str]:
    """Every catalog name and alias, case-folded, mapped to its entry's name (seeding the
    shipped catalog first, so a machine it knows is never reported as new)."""
    from perfpredict.catalog import list_systems

    return {alias.casefold(): spec.name for spec in list_systems(store)
            for alias in (spec.name, *spec.aliases)}


def ingest_file(store: Store, fmt: str, path: str | Path, options: IngestOptions | None = None,
                progress: ProgressCallback | None = None) -> BatchReport:
    """Ingest one file of format ``fmt`` into ``store``; see the module doc for guarantees."""
    options = options or IngestOptions()
    path = Path(path)
    parse = get_parser(fmt)
    if not path.is_file():
        raise BadInputError("no such file; check the path", path=path)
    sha256 = file_sha256(path)
    report = BatchReport(path=str(path), format=fmt)
    catalog_names = _catalog_names(store)
    with store.engine.begin() as conn:
        # Claiming the batch's unique (sha256, format) decides whether the file is new,
        # also when another ingest of it runs at the same time (two cron jobs): this one
        # waits for the other's outcome instead of failing on the unique index.
        batch_id: int | None = conn.execute(
            insert_ignoring_duplicates(conn, ingest_batches, "sha256", "format").values(
                path=str(path.resolve()), sha256=sha256, format=fmt, system=options.system,
                started_epoch_s=time.time(), n_records=0, n_stored=0, n_duplicates=0,
                n_rejected=0,
            ).returning(ingest_batches.c.id)).scalar()
        if batch_id is None:
            report.already_ingested = True
            report.n_duplicates = conn.execute(select(ingest_batches.c.n_records).where(
                ingest_batches.c.sha256 == sha256, ingest_batches.c.format == fmt)).scalar_one()
            return report
        state = _FileIngest(conn, path, fmt, options, report, batch_id, catalog_names)
        for chunk in _chunks(parse(path, options), CHUNK_RECORDS):
            state.store(chunk)
            if progress:
                progress(len(chunk))
        report.n_stored = conn.execute(
            select(func.count()).select_from(runs).where(runs.c.batch_id == batch_id)
        ).scalar_one()
        report.n_duplicates = report.n_records - report.n_stored - report.n_attached
        conn.execute(ingest_batches.update().where(ingest_batches.c.id == batch_id).values(
            n_records=report.n_records, n_stored=report.n_stored,
            n_duplicates=report.n_duplicates, n_rejected=report.n_rejected,
        ))
    return report


def ingest_paths(store: Store, fmt: str, paths: Iterable[str | Path],
                 options: IngestOptions | None = None,
                 progress: ProgressCallback | None = None) -> list[BatchReport]:
    """Ingest several files, each in its own transaction (a bad one stops the rest)."""
    return [ingest_file(store, fmt, p, options, progress) for p in paths]
