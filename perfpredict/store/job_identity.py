"""Whether a scheduler job met again is a run the store already holds: the same system
and job id, told apart by when it was submitted, started and ended, and by how long it ran.

Apart from the writer (:mod:`perfpredict.store.writer`, which owns the SQL) because it is
the rule a reader of the store needs to trust: a job read twice (overlapping dumps, the
same job in sacct and in the jobcomp log, a dump read in the wrong zone, a job across a
clock change) is stored once, while a later job that reused the id is kept as its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from perfpredict.ingest.records import content_tagged

#: The most a zone's clock is off UTC (UTC-12 to UTC+14), and the step of the offsets
#: zones use: a quarter-hour (India's +5:30, Nepal's +5:45, Chatham's +12:45).
ZONE_OFFSET_MAX_S = 14 * 3600
ZONE_OFFSET_STEP_S = 15 * 60
#: The most a zone's clock changes at once (daylight saving time: an hour, Lord Howe
#: Island's half an hour).
CLOCK_CHANGE_MAX_S = 3600


def clock_offset_text(offset_s: int) -> str:
    """``+05:30`` for 19800 s: how far a clock is ahead (``-04:00``: behind)."""
    minutes = abs(offset_s) // 60
    return f"{'-' if offset_s < 0 else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


class JobTimes(NamedTuple):
    """When a job was submitted, started and ended (epoch seconds) and how long it ran:
    what tells whether a stored run of its system and job id is the same job."""

    submit_epoch_s: float | None
    start_epoch_s: float | None
    end_epoch_s: float | None
    runtime_s: float | None


class ZoneShift(NamedTuple):
    """How many seconds a record's submit, start and end times are later than a stored
    run's, one job read in two zones (:func:`zone_shift`)."""

    submit_s: int
    start_s: int
    end_s: int

    @property
    def named_s(self) -> int:
        """The offset a warning names: the start's, or where the start was read at
        UTC's own time (London's winter, the clocks changed while the job waited or ran)
        the other time's."""
        return next(offset_s for offset_s in (self.start_s, *self) if offset_s)


def is_zone_offset(offset_s: int) -> bool:
    return not offset_s % ZONE_OFFSET_STEP_S and abs(offset_s) <= ZONE_OFFSET_MAX_S


def zone_shift(record: JobTimes, run: Any) -> ZoneShift | None:
    """How far ``record``'s times are later than those of the stored ``run`` when both
    are one job, one of them read from wall-clock text in a zone other than the one it
    was written in (:data:`~perfpredict.ingest.registry.WALL_CLOCK_FORMATS`; sacct in
    local time read as UTC), else None.

    The same job: its start differs by a whole number of quarter-hours of at most 14 h
    (a zone's offset), and its submit time (where both have one) and end differ by that
    same offset to the second (see below where the clocks changed), not all of them by
    nothing; where either has no end, its runtime is the same to the second (sacct's
    Elapsed, the JSON's ``elapsed``, which no zone changes). A zone shifts every time
    of a dump alike; two jobs that reused an id agree on all of that only by chance: a
    job's start and end to the second are unlike another job's, and scheduler ids do
    not come back within hours (Slurm's grow until a slurmdbd reset, PBS's and LSF's
    wrap after about a million jobs), while id reuse keeps its meaning otherwise: a
    later job of a reused id is submitted days or years later, and is kept as a run of
    its own. Without a start on both sides nothing is shifted to compare (a job
    cancelled while pending), and the two stay apart.

    Where the clocks changed while the job waited or ran (daylight saving time), its
    times are shifted by two offsets, the later times by the other: the offsets, in time
    order, change once, by at most an hour (Lord Howe's half hour, everyone else's hour).
    Where that change falls between start and end, the runtime must be the same to the
    second on both sides: the wall-clock reading's end less its start is then its
    runtime off by exactly the change, which a job of its own that reused the id never
    is. A time one side lacks is taken as shifted as the start (a run not ended yet)."""
    if record.start_epoch_s is None or run.start_epoch_s is None:
        return None
    start_s = round(record.start_epoch_s) - round(run.start_epoch_s)
    submit_s = end_s = start_s
    if record.submit_epoch_s and run.submit_epoch_s:  # a submit time of 0 is none
        submit_s = round(record.submit_epoch_s) - round(run.submit_epoch_s)
    same_runtime = (record.runtime_s is not None and run.runtime_s is not None
                    and round(record.runtime_s) == round(run.runtime_s))
    if record.end_epoch_s is not None and run.end_epoch_s is not None:
        end_s = round(record.end_epoch_s) - round(run.end_epoch_s)
    elif not same_runtime:
        return None
    shift = ZoneShift(submit_s, start_s, end_s)
    if not any(shift) or not all(is_zone_offset(offset_s) for offset_s in shift):
        return None
    if end_s != start_s and not same_runtime:
        return None
    changed_twice = submit_s != start_s != end_s
    if changed_twice or max(shift) - min(shift) > CLOCK_CHANGE_MAX_S:
        return None
    return shift


class ZoneMatch(NamedTuple):
    """A row of a batch that is the stored ``run`` read in another zone: its times are
    ``shift`` later than the run's (:func:`zone_shift`)."""

    row: int
    shift: ZoneShift
    run: Any


def may_be(record: JobTimes, key: str, run: Any) -> bool:
    """Whether ``run``, the only stored run of a job id, may be the job of ``record``
    (keyed ``key``) where no time tells: not when both are keyed by what they did and the
    keys differ (:func:`~perfpredict.ingest.records.content_tagged_key`: job 1 of two SWF
    traces without ``UnixStartTime``), nor when they ran for different times (an ended
    job's runtime does not change: job 1 of such a trace, and the stored job 1 of a
    trace of the machine with epochs)."""
    if content_tagged(key) and content_tagged(run.natural_key):
        return False
    return (record.runtime_s is None or run.runtime_s is None
            or round(record.runtime_s) == round(run.runtime_s))


def same_job(record: JobTimes, key: str, candidates: list[Any],
              zone_read: Callable[[Any], bool]) -> tuple[Any, ZoneShift | None] | None:
    """The stored run among ``candidates`` (of one job id) that is the job of ``record``
    (keyed ``key``), and how far ``record``'s times are later than its (None: read in one
    zone), or None (the writer's ``_FileIngest.same_jobs``). A submit time of 0 is none,
    as in keys.

    ``zone_read(run)``: whether ``record`` or ``run`` is a reading of wall-clock text, which
    a zone may have put hours off (:func:`zone_shift`); two records read from epoch
    seconds are never one job at another time."""
    undecided = []
    for run in candidates:
        if record.submit_epoch_s and run.submit_epoch_s:
            told = round(record.submit_epoch_s) == round(run.submit_epoch_s)
        elif record.start_epoch_s is not None and run.start_epoch_s is not None:
            told = round(record.start_epoch_s) == round(run.start_epoch_s)
        else:
            undecided.append(run)
            continue
        if told:
            return run, None
    if len(candidates) == 1 and undecided and may_be(record, key, undecided[0]):
        return undecided[0], None
    shifted = [(run, shift) for run in candidates if zone_read(run)
               and (shift := zone_shift(record, run)) is not None]
    # two runs of the id, each the record in another zone: which one it is, nothing says
    return shifted[0] if len(shifted) == 1 else None


__all__ = ["CLOCK_CHANGE_MAX_S", "JobTimes", "ZoneMatch", "ZoneShift", "clock_offset_text",
           "is_zone_offset", "may_be", "same_job", "zone_shift"]
