"""One SWF line at a time: the header comments, and the rule for every field.

These functions are the definition of how a line is read (see :mod:`.swf` for the
format and the mapping to runs). :mod:`.columns` reads the common lines of a block
as columns, with these rules applied once per distinct value where they build values,
and hands every line it cannot vouch for to :meth:`LineReader.read`, in order.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from perfpredict.ingest import fields
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import (
    BadRecord,
    IngestOptions,
    ParsedItem,
    RunRecord,
    content_tagged_key,
    timed_key,
)

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


#: Header lines that say what the data lines mean, by the :class:`SwfHeader` field each
#: sets: a comment after the data giving another value starts another trace.
_MEANING_LINES = {"UnixStartTime": "unix_start_time_s", "TimeZoneString": "timezone",
                  "Computer": "computer", "Installation": "installation"}


@dataclass
class SwfHeader:
    """What the header comments say that the parser uses."""

    unix_start_time_s: float | None = None
    timezone: str | None = None
    computer: str | None = None
    installation: str | None = None
    queues: dict[int, str] = field(default_factory=dict)
    partitions: dict[int, str] = field(default_factory=dict)

    def queue_name(self, queue: int | None) -> str | None:
        """The name of queue number ``queue`` from the header, else the number."""
        return self.queues.get(queue, str(queue)) if queue is not None else None

    def system_name(self) -> str | None:
        """``"<Computer> at <Installation>"`` when the header names both, else None."""
        if self.computer and self.installation:
            return f"{self.computer} at {self.installation}"
        return None


def _shown(value: str | float | None) -> str:
    """A header value as its line gives it (epoch seconds without '.0')."""
    if value is None:
        return "none"
    if isinstance(value, str):
        return repr(value)
    return str(int(value)) if value.is_integer() else str(value)


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
            start_s = fields.plain_float(value)
        except ValueError:
            return f"UnixStartTime must be epoch seconds, got {value!r}"
        if not math.isfinite(start_s):
            return f"UnixStartTime must be finite, got {value!r}"
        # only a good value is kept: a rejected header line must not date the jobs
        header.unix_start_time_s = start_s
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


def _field_name(index: int) -> str:
    return f"field {index + 1} ({FIELD_NAMES[index]})"


def _numbers(tokens: list[str]) -> list[float | None]:
    """The fields as numbers, None for SWF's -1 (missing)."""
    values: list[float | None] = []
    for index, token in enumerate(tokens):
        value = fields.number(_field_name(index), token, missing=frozenset())
        if value == -1:
            values.append(None)
        elif value is not None and value < 0:
            raise FieldError(
                f"{_field_name(index)} must be >= 0 or -1 (missing), got {token!r}")
        else:
            values.append(value)
    return values


def _whole(index: int, value: float | None) -> int | None:
    return fields.whole_number(_field_name(index), value)


def _positive_int(index: int, value: float | None) -> int | None:
    number = _whole(index, value)
    return number if number else None


def app_name(exe: int | None) -> str:
    return f"exe-{exe}" if exe is not None else "unknown"


def number_text(number: int | None) -> str | None:
    return str(number) if number is not None else None


def state_of(status: int | None, reached_limit: bool) -> tuple[str | None, bool]:
    """State and whether the run time is censored. A job that failed or was cancelled
    at or past its requested time was stopped by the limit."""
    if status in (0, 5) and reached_limit:
        return "TIMEOUT", True
    return (_STATES.get(status) if status is not None else None), False


def reached_limit(run_s: float | None, requested_walltime_s: float | None) -> bool:
    return run_s is not None and requested_walltime_s is not None and run_s >= requested_walltime_s


def epochs_s(header: SwfHeader, submit_s: float | None, wait_s: float | None,
             run_s: float | None) -> tuple[float | None, float | None, float | None, float | None]:
    """Submit, start and end epochs, and the submit offset when its origin is unknown."""
    submit_epoch_s: float | None = None
    offset_s: float | None = None
    if submit_s is not None:
        if header.unix_start_time_s is not None:
            submit_epoch_s = header.unix_start_time_s + submit_s
        elif submit_s >= ABSOLUTE_EPOCH_MIN_S:
            submit_epoch_s = submit_s
        else:
            offset_s = submit_s
    start_epoch_s = (submit_epoch_s + wait_s
                     if submit_epoch_s is not None and wait_s is not None else None)
    end_epoch_s = (start_epoch_s + run_s
                   if start_epoch_s is not None and run_s is not None else None)
    return submit_epoch_s, start_epoch_s, end_epoch_s, offset_s


def extra_fields(header: SwfHeader, submit_offset_s: float | None, swf_status: int | None,
                 partition: int | None, cpu_s: float | None, mem_kb: float | None,
                 requested_procs: int | None, req_mem_kb: float | None,
                 preceding_job: int | None, think_s: float | None) -> dict[str, Any]:
    """The extra fields of a job, in the order they are stored."""
    extra: dict[str, Any] = {}
    for name, value in (
        ("swf_submit_offset_s", submit_offset_s), ("swf_status", swf_status),
        ("swf_partition", header.partitions.get(partition, str(partition))
         if partition is not None else None),
        ("swf_avg_cpu_time_s", cpu_s), ("swf_used_memory_kb_per_proc", mem_kb),
        ("swf_requested_procs", requested_procs),
        ("swf_requested_memory_kb_per_proc", req_mem_kb),
        ("swf_preceding_job", preceding_job), ("swf_think_time_s", think_s),
        ("timezone", header.timezone),
    ):
        if value is not None:
            extra[name] = value
    return extra


#: The fields (0-based) that tell a job of a trace without ``UnixStartTime`` from another
#: of its number: submit offset, wait and run time, processors, requested time, status,
#: user, group, executable, queue, partition, preceding job; whole numbers, which both
#: readers give alike (CPU time and memory may be fractional, and are left out).
_IDENTITY_FIELDS = [0, 1, 2, 3, 4, 7, 8, 10, 11, 12, 13, 14, 15, 16]


def identity_digests(numbers: np.ndarray) -> list[str]:
    """For each column of ``numbers`` (the 18 fields by row, NaN where missing), the
    digest that keys its job where no epoch does (:func:`job_key`)."""
    chosen = numbers[_IDENTITY_FIELDS]
    # whole seconds as floats (a damaged line's 1e400 is inf, no integer), -0.0 as 0.0
    whole = np.ascontiguousarray((np.where(np.isnan(chosen), -1.0, np.round(chosen)) + 0.0).T)
    return [hashlib.sha1(row.tobytes()).hexdigest() for row in whole]


def job_key(key: str, submit_epoch_s: float | None, digest: Callable[[], str]) -> str:
    """A job's key: its number (``key``) and submit epoch, or, where the trace gives no
    epoch (no ``UnixStartTime``), its number and the digest of its fields
    (:func:`~perfpredict.ingest.records.content_tagged_key`)."""
    if submit_epoch_s is None:
        return content_tagged_key(key, digest())
    return timed_key(key, submit_epoch_s)


def _record(tokens: list[str], header: SwfHeader, line_no: int,
            partial_counts: dict[int, int]) -> RunRecord:
    values = _numbers(tokens[:N_FIELDS])
    (job_f, submit_s, wait_s, run_s, alloc_f, cpu_s, mem_kb, req_procs_f, req_time_s,
     req_mem_kb, status_f, user_f, group_f, exe_f, queue_f, part_f, prev_f, think_s) = values
    job = _whole(0, job_f)
    if job is None:
        raise FieldError("field 1 (job number) is missing (-1); every job needs its number")
    status = _whole(10, status_f)
    if status is not None and status not in _STATES:
        raise FieldError(f"field 11 (status) must be 0, 1, 2, 3, 4, 5 or -1, got {status}")
    submit_epoch_s, start_epoch_s, end_epoch_s, offset_s = epochs_s(header, submit_s, wait_s,
                                                                    run_s)
    allocated, requested = _positive_int(4, alloc_f), _positive_int(7, req_procs_f)
    requested_walltime_s = req_time_s if req_time_s else None
    state, censored = state_of(status, reached_limit(run_s, requested_walltime_s))

    key = str(job)
    if state == "PARTIAL":
        partial_counts[job] = partial_counts.get(job, 0) + 1
        key = f"{job}.{partial_counts[job]}"
    # A trace numbers its jobs from 1: two traces of one machine share job numbers.
    key = job_key(key, submit_epoch_s, lambda: identity_digests(np.array(
        [[math.nan if value is None else value] for value in values]))[0])

    queue, partition = _whole(14, queue_f), _whole(15, part_f)
    extra = extra_fields(header, offset_s, status if censored or state == "PARTIAL" else None,
                         partition, cpu_s, mem_kb, requested, req_mem_kb, _whole(16, prev_f),
                         think_s)
    if len(tokens) > N_FIELDS:
        extra["swf_extra_fields"] = tokens[N_FIELDS:]

    user, group, exe = _whole(11, user_f), _whole(12, group_f), _whole(13, exe_f)
    return RunRecord(
        app=app_name(exe),
        total_ranks=allocated or requested,
        runtime_s=run_s,
        requested_walltime_s=requested_walltime_s,
        state=state,
        censored=censored,
        user=number_text(user),
        account=number_text(group),
        partition=header.queue_name(queue),
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


class LineReader:
    """The per-line reading of an SWF file: header state, system, partial records.

    The definition of every rule; :mod:`.columns` reads the common lines of a block
    as columns and hands every other line here, in order.
    """

    def __init__(self, options: IngestOptions) -> None:
        self.options = options
        self.header = SwfHeader()
        self.in_header = True
        self.partial_counts: dict[int, int] = {}
        self.system: str | None = None

    @property
    def needs_system(self) -> bool:
        """True when data lines cannot be stored: no ``--system`` and no header name."""
        return not self.options.system and self.system is None

    def other_trace(self, text: str) -> str | None:
        """Why the comment ``text``, after the data lines, starts another trace: it gives
        another value of a header line that says what the data lines mean (their time 0,
        their system). Traces joined in one file (``cat *.swf``) were read by the first
        one's header, so a second trace of the machine numbered from 1 again was "already
        in the store" whole, and another machine's jobs were stored as the first's."""
        again = SwfHeader()
        read_header_line(again, text)
        for label, attr in _MEANING_LINES.items():
            given, first = getattr(again, attr), getattr(self.header, attr)
            if given is not None and given != first:
                return (f"a header line after the data lines gives {label} "
                        f"{_shown(given)}, the header at the top {_shown(first)}: the file "
                        "joins SWF traces; ingest each trace as a file of its own")
        return None

    def read(self, text: str, line_no: int) -> ParsedItem | None:
        """The run or bad record of one line; None for blank and comment lines."""
        stripped = text.strip()
        if not stripped:
            return None
        if stripped.startswith(";"):
            if self.in_header:
                reason = read_header_line(self.header, stripped)
                if reason is not None:
                    return BadRecord(line_no, text, reason)
            elif (reason := self.other_trace(stripped)) is not None:
                return BadRecord(line_no, text, reason, whole_file=True)
            return None
        first_data_line = self.in_header
        if self.in_header:
            self.in_header = False
            self.system = None if self.options.system else self.header.system_name()
        if "\ufffd" in stripped:  # SWF is numbers: a byte that is no text is damage
            return BadRecord(line_no, text, "the line holds bytes that are not text (shown "
                             "as \ufffd); SWF lines are numbers, so the file is damaged here")
        tokens = stripped.split()
        reason = _width_reason(len(tokens), self.options.swf_allow_extra_fields)
        if reason is None and self.needs_system:
            return BadRecord(line_no, text, "the SWF header has no '; Computer:' and "
                             "'; Installation:' lines to name the system; pass --system NAME",
                             whole_file=True)
        if reason is not None:
            # an extended variant shows on its first data line, and every line is alike
            return BadRecord(line_no, text, reason,
                             whole_file=first_data_line and len(tokens) > N_FIELDS)
        try:
            record = _record(tokens, self.header, line_no, self.partial_counts)
        except FieldError as exc:
            return BadRecord(line_no, text, str(exc))
        record.system = self.system
        return record
