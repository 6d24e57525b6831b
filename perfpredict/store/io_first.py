"""A job's Darshan I/O, whichever comes first: the log or the job's accounting.

A Darshan log attaches its I/O to the stored scheduler job of its system and id that it
ran inside (:meth:`perfpredict.store.writer._FileIngest.attach`). Logs often arrive
first: Darshan writes one as each job ends, while a center dumps its accounting weekly.
Such a log is stored as a run of its own (its ranks, its run time, its I/O), keyed by
its job id and start apart from the job's own key, and when the job's accounting comes,
the job takes the log's I/O over and the log's run goes (:class:`IoOnlyRuns`): one run
per job, as when the log came second, not a second run of the same job beside it. A job
runs one log per executable (per srun, or per process without MPI), so a job's logs add
up: their I/O bytes (:func:`with_logs`), and their ranks as the most that ran at once
(:func:`ranks_with_logs`), in either order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from perfpredict.ingest.records import DARSHAN_DETAILS, DARSHAN_LOG_MARK
from perfpredict.store.schema import ingest_batches, runs

#: The format name of a Darshan log's batch.
DARSHAN_FORMAT = "darshan"
#: How far (seconds) a log's start may lie outside its job's start and end: Darshan's
#: clock is the compute node's, the scheduler's the controller's.
CLOCK_SLACK_S = 60.0


def ran_inside(log_start_s: float | None, job_start_s: float | None,
               job_end_s: float | None) -> bool:
    """Whether a Darshan log that started at ``log_start_s`` belongs to the job of its
    id that ran from ``job_start_s`` to ``job_end_s``: a job id reused later, or an
    earlier incarnation of a requeued job, is another run. A time not known decides
    nothing."""
    if log_start_s is None:
        return True
    if job_start_s is not None and log_start_s < job_start_s - CLOCK_SLACK_S:
        return False
    return job_end_s is None or log_start_s <= job_end_s + CLOCK_SLACK_S


def logs_of(details: Any) -> list[dict[str, Any]]:
    """The Darshan logs a run's details hold: one log's dict, or a list of a job's logs."""
    return [] if details is None else list(details) if isinstance(details, list) else [details]


def with_logs(io_bytes: float | None, extra: dict[str, Any] | None,
              logs_io_bytes: float | None, logs: Any) -> tuple[float | None, dict[str, Any]]:
    """A run's I/O bytes and extra fields with the Darshan ``logs`` (one log's details
    or a list) and their bytes added: the logs of a job's executables add up, and
    replace the scheduler's own file-system counter; a log the run holds already (read
    again) adds no bytes, only the details its stored ones lack (:func:`refreshed`)."""
    extra = dict(extra or {})
    held = refreshed(extra.get(DARSHAN_DETAILS), logs)
    if held:
        extra[DARSHAN_DETAILS] = held[0] if len(held) == 1 else held
    new = unheld(held, logs)
    if not new:
        return io_bytes, extra
    if held and io_bytes is not None and logs_io_bytes is not None:
        io_bytes += logs_io_bytes
    elif not held or io_bytes is None:
        io_bytes = logs_io_bytes
    merged = held + new
    extra[DARSHAN_DETAILS] = merged[0] if len(merged) == 1 else merged
    return io_bytes, extra


def unheld(held: Any, logs: Any) -> list[dict[str, Any]]:
    """Those of the Darshan ``logs`` that a run's ``held`` logs do not include (by the
    log's file name)."""
    names = {log.get("log") for log in logs_of(held)}
    return [log for log in logs_of(logs) if log.get("log") not in names]


def refreshed(held: Any, logs: Any) -> list[dict[str, Any]]:
    """A run's ``held`` logs, each given what the same log read again (among ``logs``)
    has and its stored details lack: a log stored by a release that kept no start and
    end times (``start_epoch_s``, ``end_epoch_s``) did not get them from ``ingest
    --reread``, which is what reads a file again for what the store lacks."""
    read = {log.get("log"): log for log in logs_of(logs)}
    return [{**log, **{key: value for key, value in read.get(log.get("log"), {}).items()
                       if log.get(key) is None}}
            for log in logs_of(held)]


def peak_ranks(logs: Any) -> int | None:
    """The most ranks a job's Darshan ``logs`` (one log's details or a list) ran at
    once: the sum of ``nprocs`` over the logs running at the same moment, at its
    largest. A job's sruns one after another ran at the largest one's ranks, the same
    sruns side by side (or non-MPI processes, one log each) at their sum; the first
    log's ranks were neither. Logs touching at an instant (one ends the second the next
    starts, as Darshan's whole-second clocks often say) ran one after the other. A log
    without its times (stored before they were kept) is counted alone. None when no log
    gives its ranks."""
    events: list[tuple[float, int, int]] = []  # (time, order at that time, ranks added)
    alone = 0
    for log in logs_of(logs):
        ranks = log.get("nprocs")
        if not isinstance(ranks, int) or ranks <= 0:
            continue
        start, end = log.get("start_epoch_s"), log.get("end_epoch_s")
        if start is None or end is None or end < start:
            alone = max(alone, ranks)
            continue
        # at one time: positive-length logs end (0), then logs start (1), then logs of
        # no length end (2), so that they count with the logs starting with them
        events += [(start, 1, ranks), (end, 0 if end > start else 2, -ranks)]
    peak = running = 0
    for _, _, added in sorted(events):
        running += added
        peak = max(peak, running)
    return max(peak, alone) or None


def ranks_with_logs(ranks: int | None, held_logs: Any, logs: Any) -> int | None:
    """A job's ranks once it holds ``logs`` (all of its Darshan logs, ``held_logs`` the
    ones it held before): its accounting's when the accounting gives them (it counts
    every task, the logs only the instrumented ones), else the most its logs ran at
    once (:func:`peak_ranks`). Ranks equal to what its held logs give came from those
    logs (PBS and LSF accounting give none; a job that took its log over without them
    lost the only count of its ranks in the store), so they are counted again with the
    new logs."""
    if ranks is not None and not (logs_of(held_logs) and ranks == peak_ranks(held_logs)):
        return ranks
    return peak_ranks(logs) or ranks


@dataclass(frozen=True, slots=True)
class IoOnlyRun:
    """A stored run of Darshan logs alone: what its job takes over from it."""

    run_id: int
    batch_id: int
    start_epoch_s: float | None
    io_bytes: float | None
    logs: Any


class IoOnlyRuns:
    """The I/O-only runs of one ingest's systems, read once per system: a store holds
    one per Darshan log at most, and most files are of one system."""

    def __init__(self, conn: Connection, batch_id: int) -> None:
        self.conn, self.batch_id = conn, batch_id
        self.by_system: dict[str, dict[str, list[IoOnlyRun]]] = {}

    def of_system(self, system: str) -> dict[str, list[IoOnlyRun]]:
        """Those of ``system``, by job id: the runs keyed as a log's
        (:func:`~perfpredict.ingest.records.darshan_log_key`)."""
        found = self.by_system.get(system)
        if found is None:
            found = {}
            for row in self.conn.execute(
                    select(runs.c.id, runs.c.batch_id, runs.c.job_id, runs.c.start_epoch_s,
                           runs.c.io_bytes, runs.c.extra)
                    .where(runs.c.system == system, runs.c.job_id.is_not(None),
                           runs.c.natural_key.contains(DARSHAN_LOG_MARK, autoescape=True))):
                found.setdefault(row.job_id, []).append(IoOnlyRun(
                    row.id, row.batch_id, row.start_epoch_s, row.io_bytes,
                    (row.extra or {}).get(DARSHAN_DETAILS)))
            self.by_system[system] = found
        return found

    def join(self, systems: Sequence[str], job_ids: Sequence[str | None]) -> int:
        """After a chunk of jobs is stored: each job this ingest stored (inserted, or
        replaced an earlier incarnation with) takes over the I/O-only runs of its id that
        ran inside it, their I/O and, where it gives none, their ranks
        (:func:`ranks_with_logs`), and they are deleted; how many were. A job the store
        did not take (an earlier incarnation than the one stored) takes nothing: its logs
        stay."""
        wanted: dict[str, set[str]] = {}
        for system, job_id in zip(systems, job_ids, strict=True):
            if job_id is not None and job_id in self.of_system(system):
                wanted.setdefault(system, set()).add(job_id)
        taken: list[IoOnlyRun] = []
        for system, ids in wanted.items():
            stored = self.conn.execute(
                select(runs.c.id, runs.c.job_id, runs.c.start_epoch_s, runs.c.end_epoch_s,
                       runs.c.io_bytes, runs.c.total_ranks, runs.c.extra)
                .where(runs.c.batch_id == self.batch_id, runs.c.system == system,
                       runs.c.job_id.in_(sorted(ids)),  # jobs, not an export's log rows
                       ~runs.c.natural_key.contains(DARSHAN_LOG_MARK, autoescape=True))
            ).all()
            for job in stored:
                logs = self.by_system[system][job.job_id]
                inside = [log for log in logs if ran_inside(
                    log.start_epoch_s, job.start_epoch_s, job.end_epoch_s)]
                if not inside:
                    continue
                io_bytes, extra = job.io_bytes, job.extra
                for log in inside:
                    io_bytes, extra = with_logs(io_bytes, extra, log.io_bytes, log.logs)
                    logs.remove(log)
                self.conn.execute(update(runs).where(runs.c.id == job.id).values(
                    io_bytes=io_bytes, extra=extra, total_ranks=ranks_with_logs(
                        job.total_ranks, (job.extra or {}).get(DARSHAN_DETAILS),
                        extra.get(DARSHAN_DETAILS))))
                taken += inside
        for log in taken:
            self.conn.execute(runs.delete().where(runs.c.id == log.run_id))
            self.conn.execute(update(ingest_batches)
                              .where(ingest_batches.c.id == log.batch_id)
                              .values(n_stored=ingest_batches.c.n_stored - 1))
        return len(taken)
