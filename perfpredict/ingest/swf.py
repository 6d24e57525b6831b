"""Standard Workload Format (SWF, Parallel Workloads Archive, v2.2): one job per line.

A data line holds 18 whitespace-separated numbers; ``-1`` means missing in every field and
several fields may be fractional. Header comments (``; Key: value``) come before the first
data line; the parser reads:

* ``UnixStartTime``: epoch of time 0. Submit times are offsets from it, so
  ``submit_epoch_s = UnixStartTime + field 2``, ``start = submit + wait``,
  ``end = start + run``. ``UnixStartTime`` is UTC already (KTH: 843480031 is
  1996-09-23 12:00:31 UTC, its ``StartTime`` 14:00:31 CEST); ``TimeZoneString``
  (``Europe/Stockholm``) says where local time is and is kept as the ``timezone`` extra
  field so that time-of-day can be computed locally. Without ``UnixStartTime``, submit
  times of 1e8 or more are taken as absolute epochs (the Alea variant); smaller ones are
  relative to an unknown origin: the epochs stay unknown and the offset is kept as the
  ``swf_submit_offset_s`` extra field.
* ``Computer`` and ``Installation``: when ``--system`` is not given, the system is named
  ``"<Computer> at <Installation>"`` (``IBM SP2 at Swedish Royal Institute of Technology
  (KTH)``). Both are required: many installations ran the same computer, and a name from
  the computer alone would merge their job numbers. ``--system`` always wins.
* ``Queue:`` and ``Partition:`` lines (``;  0  interactive``) name queue and partition
  numbers; otherwise the numbers are kept as text.

Mapping: job number -> ``job_id`` and key; run time -> ``runtime_s``; allocated processors
(field 5, else the requested field 8) -> ``total_ranks``; requested time (field 9) ->
``requested_walltime_s``; status (field 11) -> ``state`` (1 COMPLETED, 0 FAILED, 5
CANCELLED, 2/3/4 PARTIAL, -1 unknown); user (12) -> ``user``; group (13) -> ``account``;
executable number (14) -> ``app`` (``exe-17``, or ``unknown``); queue (15) -> ``partition``;
partition (16), CPU time, memory, requested processors, preceding job and think time ->
extra fields. SWF has no node count.

Run time may exceed the requested time (KTH: 475 jobs): schedulers allowed a grace period,
so a job that *completed* past its request is an ordinary measurement. A job that failed or
was cancelled at or past its request was stopped by the limit: its run time is a lower
bound, so it is stored as ``state="TIMEOUT"``, ``censored=True`` (the log's status is kept
as the ``swf_status`` extra field).

Partial-execution records (status 2, 3, 4: checkpointed or swapped jobs) repeat their job's
number; they are keyed ``<job>.<k>`` (k-th partial record of the job) so they never replace
the job's summary line.

A line without exactly 18 fields is bad input. With ``--swf-allow-extra-fields``
(``IngestOptions.swf_allow_extra_fields``) a line with more fields (Alea's extended format
adds a node list, a queue name and a PBS resource spec) is read from its first 18 and the
rest is kept as the ``swf_extra_fields`` extra field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord
from perfpredict.ingest.textio import numbered_lines

DESCRIPTION = "Standard Workload Format (Parallel Workloads Archive), 18 fields per job"

N_FIELDS = 18
FIELD_NAMES = (
    "job number", "submit time", "wait time", "run time", "allocated processors",
    "average CPU time", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user", "group", "executable number", "queue",
    "partition", "preceding job", "think time",
)
#: Submit times at least this large are epochs (1973 onwards), not offsets from time 0.
ABSOLUTE_EPOCH_MIN_S = 1e8
_STATES = {1: "COMPLETED", 0: "FAILED", 5: "CANCELLED", 2: "PARTIAL", 3: "PARTIAL",
           4: "PARTIAL"}
_HEADER_ITEM = re.compile(r"^;\s*(?P<key>[A-Za-z][A-Za-z ]*?)\s*:\s*(?P<value>.*?)\s*$")
_NUMBERED_NAME = re.compile(r"^(?P<number>-?\d+)\s+(?P<name>\S.*?)\s*$")
_UNKNOWN = {"", "unknown", "none", "n/a"}


class _FieldError(ValueError):
    pass


@dataclass
class SwfHeader:
    """What the header comments say that the parser uses."""

    unix_start_time_s: float | None = None
    timezone: str | None = None
    computer: str | None = None
    installation: str | None = None
    queues: dict[int, str] = field(default_factory=dict)
    partitions: dict[int, str] = field(default_factory=dict)

    def system_name(self) -> str | None:
        """``"<Computer> at <Installation>"`` when the header names both, else None."""
        if self.computer and self.installation:
            return f"{self.computer} at {self.installation}"
        return None


def _known(value: str) -> str | None:
    return None if value.strip().lower() in _UNKNOWN else value.strip()


def read_header_line(header: SwfHeader, text: str) -> str | None:
    """Fold one ``;`` comment line into ``header``; returns a reason when it is malformed."""
    match = _HEADER_ITEM.match(text)
    if match is None:
        return None  # a continuation line or a bare ';'
    key, value = match["key"].lower(), match["value"]
    if key == "unixstarttime":
        if _known(value) is None:
            return None
        try:
            header.unix_start_time_s = float(value)
        except ValueError:
            return f"UnixStartTime must be epoch seconds, got {value!r}"
        if not math.isfinite(header.unix_start_time_s):
            return f"UnixStartTime must be finite, got {value!r}"
    elif key == "timezonestring":
        header.timezone = _known(value)
    elif key == "computer":
        header.computer = _known(value)
    elif key == "installation":
        header.installation = _known(value)
    elif key in {"queue", "partition"}:
        numbered = _NUMBERED_NAME.match(value)
        if numbered is not None:
            names = header.queues if key == "queue" else header.partitions
            names[int(numbered["number"])] = numbered["name"]
    return None


def _numbers(tokens: list[str]) -> list[float | None]:
    values: list[float | None] = []
    for index, token in enumerate(tokens):
        try:
            value = float(token)
        except ValueError:
            raise _FieldError(
                f"field {index + 1} ({FIELD_NAMES[index]}) must be a number, got {token!r}"
            ) from None
        if not math.isfinite(value):
            raise _FieldError(
                f"field {index + 1} ({FIELD_NAMES[index]}) must be finite, got {token!r}")
        if value == -1:
            values.append(None)
        elif value < 0:
            raise _FieldError(
                f"field {index + 1} ({FIELD_NAMES[index]}) must be >= 0 or -1 (missing), "
                f"got {token!r}")
        else:
            values.append(value)
    return values


def _whole(index: int, value: float | None) -> int | None:
    if value is None:
        return None
    if value != int(value):
        raise _FieldError(
            f"field {index + 1} ({FIELD_NAMES[index]}) must be a whole number, got {value:g}")
    return int(value)


def _positive_int(index: int, value: float | None) -> int | None:
    number = _whole(index, value)
    return number if number else None


def _record(tokens: list[str], header: SwfHeader, line_no: int,
            partial_counts: dict[int, int]) -> RunRecord:
    values = _numbers(tokens[:N_FIELDS])
    (job_f, submit_s, wait_s, run_s, alloc_f, cpu_s, mem_kb, req_procs_f, req_time_s,
     req_mem_kb, status_f, user_f, group_f, exe_f, queue_f, part_f, prev_f, think_s) = values
    job = _whole(0, job_f)
    if job is None:
        raise _FieldError("field 1 (job number) is missing (-1); every job needs its number")
    status = _whole(10, status_f)
    if status is not None and status not in _STATES:
        raise _FieldError(f"field 11 (status) must be 0, 1, 2, 3, 4, 5 or -1, got {status}")
    extra: dict[str, Any] = {}

    submit_epoch_s: float | None = None
    if submit_s is not None:
        if header.unix_start_time_s is not None:
            submit_epoch_s = header.unix_start_time_s + submit_s
        elif submit_s >= ABSOLUTE_EPOCH_MIN_S:
            submit_epoch_s = submit_s
        else:
            extra["swf_submit_offset_s"] = submit_s
    start_epoch_s = (submit_epoch_s + wait_s
                     if submit_epoch_s is not None and wait_s is not None else None)
    end_epoch_s = (start_epoch_s + run_s
                   if start_epoch_s is not None and run_s is not None else None)

    allocated, requested = _positive_int(4, alloc_f), _positive_int(7, req_procs_f)
    state = _STATES.get(status) if status is not None else None
    requested_walltime_s = req_time_s if req_time_s else None
    censored = False
    if (status in (0, 5) and run_s is not None and requested_walltime_s is not None
            and run_s >= requested_walltime_s):
        state, censored = "TIMEOUT", True
    if censored or state == "PARTIAL":
        extra["swf_status"] = status

    key = str(job)
    if state == "PARTIAL":
        partial_counts[job] = partial_counts.get(job, 0) + 1
        key = f"{job}.{partial_counts[job]}"

    queue, partition = _whole(14, queue_f), _whole(15, part_f)
    for name, value in (
        ("swf_partition", header.partitions.get(partition, str(partition))
         if partition is not None else None),
        ("swf_avg_cpu_time_s", cpu_s), ("swf_used_memory_kb_per_proc", mem_kb),
        ("swf_requested_procs", requested), ("swf_requested_memory_kb_per_proc", req_mem_kb),
        ("swf_preceding_job", _whole(16, prev_f)), ("swf_think_time_s", think_s),
        ("timezone", header.timezone),
    ):
        if value is not None:
            extra[name] = value
    if len(tokens) > N_FIELDS:
        extra["swf_extra_fields"] = tokens[N_FIELDS:]

    user, group, exe = _whole(11, user_f), _whole(12, group_f), _whole(13, exe_f)
    return RunRecord(
        app=f"exe-{exe}" if exe is not None else "unknown",
        total_ranks=allocated or requested,
        runtime_s=run_s,
        requested_walltime_s=requested_walltime_s,
        state=state,
        censored=censored,
        user=str(user) if user is not None else None,
        account=str(group) if group is not None else None,
        partition=header.queues.get(queue, str(queue)) if queue is not None else None,
        job_id=str(job),
        submit_epoch_s=submit_epoch_s,
        start_epoch_s=start_epoch_s,
        end_epoch_s=end_epoch_s,
        extra=extra or None,
        line_no=line_no,
        key=key,
    )


def _width_reason(n_fields: int, allow_extra: bool) -> str | None:
    if n_fields == N_FIELDS or (allow_extra and n_fields > N_FIELDS):
        return None
    if n_fields > N_FIELDS:
        return (f"expected {N_FIELDS} whitespace-separated SWF fields, found {n_fields}; "
                "this is an extended SWF variant (Alea's has 21), not standard SWF: pass "
                "--swf-allow-extra-fields to read the first 18 fields and keep the rest as "
                "extra fields")
    return (f"expected {N_FIELDS} whitespace-separated SWF fields, found {n_fields}; the line "
            "is truncated or not SWF (--swf-allow-extra-fields only helps with longer lines)")


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    header = SwfHeader()
    in_header = True
    partial_counts: dict[int, int] = {}
    system: str | None = None
    for line_no, text in numbered_lines(path):
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            if in_header:
                reason = read_header_line(header, stripped)
                if reason is not None:
                    yield BadRecord(line_no, text, reason)
            continue
        if in_header:
            in_header = False
            system = None if options.system else header.system_name()
        tokens = stripped.split()
        reason = _width_reason(len(tokens), options.swf_allow_extra_fields)
        if reason is None and not options.system and system is None:
            reason = ("the SWF header has no '; Computer:' and '; Installation:' lines to "
                      "name the system; pass --system NAME")
        if reason is not None:
            yield BadRecord(line_no, text, reason)
            continue
        try:
            record = _record(tokens, header, line_no, partial_counts)
        except _FieldError as exc:
            yield BadRecord(line_no, text, str(exc))
            continue
        record.system = system
        yield record
