"""Runs a Darshan log stored before its job's accounting, joined to that job when the
scheduler's record arrives.

A Darshan log attaches its I/O to the stored scheduler job with its system and job id
(:meth:`perfpredict.store.writer._FileIngest.attach`). Logs often arrive first: Darshan
writes one as each job ends, while a center dumps its accounting weekly. Such a log is
stored as a run of its own (its ranks, its run time, its I/O), and when the job's
accounting comes it must become that job's I/O, not a second run of the same job beside
it, nor keep the job's nodes and walltime out of the store because the key is taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from perfpredict.ingest.records import RunBatch
from perfpredict.store.schema import ingest_batches, runs

#: The format name of a Darshan log's batch: its runs are the I/O-only ones.
DARSHAN_FORMAT = "darshan"
#: How far (seconds) a log's start may lie outside its job's start and end: Darshan's
#: clock is the compute node's, the scheduler's the controller's.
CLOCK_SLACK_S = 60.0


def ran_inside(log_start_s: float | None, job_start_s: float | None,
               job_end_s: float | None) -> bool:
    """Whether a Darshan log that started at ``log_start_s`` belongs to the job of its
    id that ran from ``job_start_s`` to ``job_end_s``: a job id reused later is another
    job. A time not known decides nothing."""
    if log_start_s is None:
        return True
    if job_start_s is not None and log_start_s < job_start_s - CLOCK_SLACK_S:
        return False
    return job_end_s is None or log_start_s <= job_end_s + CLOCK_SLACK_S


@dataclass(frozen=True, slots=True)
class IoOnlyRun:
    """A stored run of a Darshan log alone: what its job takes over from it."""

    run_id: int
    start_epoch_s: float | None
    io_bytes: float | None
    extra: dict[str, Any] | None



class IoOnlyRuns:
    """The I/O-only runs of one ingest's systems, read once per system (a store holds a
    run per Darshan log at most, and most files are of one system)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.by_system: dict[str, dict[str, list[IoOnlyRun]]] = {}

    def of_system(self, system: str) -> dict[str, list[IoOnlyRun]]:
        found = self.by_system.get(system)
        if found is None:
            darshan_batches = select(ingest_batches.c.id).where(
                ingest_batches.c.format == DARSHAN_FORMAT)
            rows = self.conn.execute(
                select(runs.c.id, runs.c.job_id, runs.c.start_epoch_s, runs.c.io_bytes,
                       runs.c.extra)
                .where(runs.c.system == system, runs.c.job_id.is_not(None),
                       runs.c.batch_id.in_(darshan_batches))).all()
            found = {}
            for row in rows:
                found.setdefault(row.job_id, []).append(
                    IoOnlyRun(row.id, row.start_epoch_s, row.io_bytes, row.extra))
            self.by_system[system] = found
        return found

    def join(self, batch: RunBatch, systems: Sequence[str]) -> tuple[RunBatch, list[int]]:
        """``batch`` with each job that has an I/O-only run taking that run's I/O bytes
        and Darshan details (the log's I/O replaces the scheduler's file-system counter,
        as when the log attaches), and the ids of the runs taken, which the caller
        deletes before inserting the batch. The batch's shared ``extra`` dicts are not
        changed."""
        if not any(self.of_system(system) for system in set(systems)):
            return batch, []
        io_bytes = list(batch.column("io_bytes"))
        extras = list(batch.column("extra"))
        taken: list[int] = []
        for i, (system, job_id, start, end) in enumerate(zip(
                systems, batch.column("job_id"), batch.column("start_epoch_s"),
                batch.column("end_epoch_s"), strict=True)):
            candidates = self.by_system[system].get(job_id) if job_id is not None else None
            match = next((run for run in candidates or ()
                          if ran_inside(run.start_epoch_s, start, end)), None)
            if match is None:
                continue
            candidates.remove(match)  # type: ignore[union-attr]
            taken.append(match.run_id)
            if match.io_bytes is not None:
                io_bytes[i] = match.io_bytes
            extras[i] = {**(extras[i] or {}), **(match.extra or {})}
        if not taken:
            return batch, taken
        return RunBatch({**batch.columns, "io_bytes": io_bytes, "extra": extras}), taken
