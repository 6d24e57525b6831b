"""One ``sacct -P`` line at a time: the layout of the fields, and the rule for every field.

These functions are the definition of how a row is read. :mod:`.columns` applies
the same rules to whole columns (once per distinct value, or with a column reader from
:mod:`.field_columns` for the common spelling) and sends every row it cannot read that
way to :func:`read_line`, so an odd value gets the same value or error on either path.
Each rule takes the row as a mapping of lower-case column names to the raw text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from perfpredict.ingest import fields
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import BadRecord, IngestOptions, RunRecord, job_key

#: Field order of Open XDMoD's documented export (``sacct --noheader --parsable2 --format``).
XDMOD_COLUMNS = (
    "jobid", "jobidraw", "cluster", "partition", "qos", "account", "group", "gid", "user",
    "uid", "submit", "eligible", "start", "end", "elapsed", "exitcode", "state", "nnodes",
    "ncpus", "reqcpus", "reqmem", "reqtres", "alloctres", "timelimit", "nodelist", "jobname",
)

# 123, 123_4 (array task), 176+0 (het component), each optionally .batch/.extern/.0
_JOB_ID = re.compile(r"^(?P<base>\d+(?:[_+]\d+)?)(?:\.(?P<step>[A-Za-z0-9_+-]+))?$")
_ARRAY_TASK = re.compile(r"^(?P<job>\d+)_(?P<task>\d+)")
_HET_COMPONENT = re.compile(r"^(?P<job>\d+)\+(?P<offset>\d+)")
_TASK_OR_COMPONENT = re.compile(r"\d+[_+]\d+")
#: A pending array remainder as sacct shows it: sbatch --array's index list (ranges
#: with an optional step, comma separated) and an optional %N throttle.
_INDEX_RANGE = r"\d+(?:-\d+(?::[1-9]\d*)?)?"
_ARRAY_REMAINDER = re.compile(rf"^\d+_\[(?P<indexes>{_INDEX_RANGE}(?:,{_INDEX_RANGE})*)"
                              r"(?:%\d+)?\]$")
_EXIT_CODE = re.compile(r"^(?P<code>\d+):(?P<signal>\d+)$")
# TimelimitRaw prints Slurm's NO_VAL / INFINITE as these when there is no limit.
_NO_LIMIT_MINUTES = {"4294967294", "4294967295"}

Row = Mapping[str, str]


@dataclass
class Layout:
    """How the lines of this file split into named fields."""

    columns: tuple[str, ...]
    delimiter: str
    trailing_delimiter: bool
    #: The columns were not named (no header line, no ``--columns``), so Open XDMoD's
    #: order was taken, and the file's first line does not have as many fields: most
    #: likely a headerless export of other columns, not one damaged line.
    assumed_wrongly: bool = False
    #: The columns are ``--columns``': a line of another count may say the option is wrong.
    named_by_option: bool = False

    def split(self, text: str) -> list[str] | None:
        """The fields of a line, or None when their count differs from the columns (a
        delimiter inside a value, or a line cut short: rejecting beats mis-shifting every
        later field).

        One rule for ``-P`` and ``-p``: a line has exactly one field per column; with
        ``-p`` every line also ends with the delimiter, which is not a field. So under
        ``-p`` a line of one field too few (whose last delimiter would otherwise pass
        for a field) is refused like the same line under ``-P``.
        """
        cells = text.split(self.delimiter)
        if self.trailing_delimiter:
            if cells[-1]:
                return None
            cells.pop()
        return cells if len(cells) == len(self.columns) else None

    def n_fields(self, text: str) -> int:
        """How many fields the line has under this layout (for the message)."""
        cells = text.split(self.delimiter)
        return len(cells) - (1 if self.trailing_delimiter and not cells[-1] else 0)

    def index(self, name: str) -> int | None:
        """Position of column ``name``, None when the file does not have it."""
        return self.columns.index(name) if name in self.columns else None


def detect_layout(text: str, options: IngestOptions) -> tuple[Layout, bool]:
    """The layout from the first line, and whether that line is a header to skip."""
    delimiter = "^|^" if "^|^" in text else "|"
    cells = [c.strip().lower() for c in text.split(delimiter)]
    trailing = len(cells) > 1 and not cells[-1]
    names = cells[:-1] if trailing else cells
    is_header = "jobid" in names or "jobidraw" in names
    if options.columns:
        columns = tuple(c.strip().lower() for c in options.columns)
        is_header = is_header and names == list(columns)
    elif is_header:
        columns = tuple(names)
    else:
        columns = XDMOD_COLUMNS
    if not is_header:
        trailing = len(cells) == len(columns) + 1 and not cells[-1]
    assumed_wrongly = columns is XDMOD_COLUMNS and not trailing and len(cells) != len(columns)
    return (Layout(columns, delimiter, trailing, assumed_wrongly,
                   named_by_option=bool(options.columns)), is_header)


# --- the allocation row of a job ----------------------------------------------------------

def state(row: Row, keep_unfinished: bool = False) -> tuple[str | None, str | None]:
    """Base state (None: not finished, so not a run, unless ``keep_unfinished``) and the
    full text when it says more (``CANCELLED by 102216``)."""
    text = row.get("state", "")
    base = fields.slurm_state(text, keep_unfinished=True)
    detail = text.strip() if text.strip() != base else None
    if base in fields.SLURM_UNFINISHED_STATES and not keep_unfinished:
        return None, detail
    return base, detail


#: Columns that give a job's runtime; without them it is End - Start.
ELAPSED_COLUMNS = frozenset({"elapsedraw", "elapsed"})


def runtime_from_times_s(start: float | None, end: float | None) -> float | None:
    """The runtime of a dump without Elapsed or ElapsedRaw (jobstats asks sacct for
    ``jobidraw,start,end,...`` only): End - Start, None when either is not set."""
    return None if start is None or end is None else end - start


def runtime_s(row: Row) -> float | None:
    """Runtime from ElapsedRaw, else Elapsed (see :func:`runtime_from_times_s` for
    dumps with neither)."""
    raw_elapsed = row.get("elapsedraw", "").strip()
    if raw_elapsed:
        return float(fields.count("ElapsedRaw", raw_elapsed) or 0)
    return fields.duration_s("Elapsed", row.get("elapsed", ""))


def requested_walltime_s(row: Row) -> float | None:
    minutes = row.get("timelimitraw", "").strip()
    if minutes:
        if minutes.upper() in fields.NO_LIMIT or minutes in _NO_LIMIT_MINUTES:
            return None
        limit = fields.count("TimelimitRaw", minutes)
        return None if limit is None else fields.check_duration_s("TimelimitRaw", limit * 60.0)
    return fields.duration_s("Timelimit", row.get("timelimit", ""))


def exit_code(row: Row) -> tuple[int | None, int | None]:
    """The exit code as a shell reports it, and the signal."""
    text = row.get("exitcode", "").strip()
    if not text:
        return None, None
    match = _EXIT_CODE.match(text)
    if match is None:
        raise FieldError(f"ExitCode {text!r} is not <return code>:<signal> like 0:0")
    code = fields.count("ExitCode", match["code"])
    signal = fields.count("ExitCode signal", match["signal"])
    return fields.exit_code(code, signal), signal


def nodes(row: Row) -> int | None:
    return fields.count("NNodes", row.get("nnodes") or row.get("allocnodes"), zero_is_none=True)


def gpus(row: Row) -> int | None:
    return fields.gpus_from_tres(fields.tres(row.get("alloctres", "")))


def text_or_none(row: Row, name: str) -> str | None:
    return row.get(name, "").strip() or None


def app_and_extra(row: Row, options: IngestOptions) -> tuple[str, dict[str, Any]]:
    """The application and the extra fields read from the row's descriptive columns (all
    but the job id and times, which nearly every row has its own of)."""
    _, state_detail = state(row)
    _, signal = exit_code(row)
    job_name = row.get("jobname", "")
    app = fields.app_name(job_name, row.get("comment"), options)
    extra: dict[str, Any] = {
        "cpus": fields.count("NCPUS", row.get("ncpus") or row.get("alloccpus"),
                             zero_is_none=True),
        "qos": text_or_none(row, "qos"),
        "req_mem": text_or_none(row, "reqmem"),
        "state_detail": state_detail,
        "exit_signal": signal or None,
        "timezone": options.timezone,
        "job_name": job_name.strip() if app != job_name.strip() else None,
    }
    return app, {k: v for k, v in extra.items() if v is not None}


def job_id_extra(display_id: str, job_id: str) -> dict[str, Any]:
    """What the displayed job id adds when it differs from JobIDRaw: array task or
    heterogeneous-job component."""
    extra: dict[str, Any] = {}
    if display_id and display_id != job_id:
        extra["slurm_job_id"] = display_id
    if array := _ARRAY_TASK.match(display_id):
        extra.update(array_job_id=array["job"], array_task_id=int(array["task"]))
    if het := _HET_COMPONENT.match(display_id):
        extra.update(het_job_id=het["job"], het_job_offset=int(het["offset"]))
    return extra


def key_id(display_id: str, job_id: str) -> str:
    """The id a job is keyed by: an array task's ``123_4`` or a het component's ``176+0``
    as sacct's JobID shows it, else its JobIDRaw.

    A task's JobIDRaw (``130``) is in an export only where JobIDRaw is, while JobID,
    sacct's JSON (``array.job_id``, ``array.task_id``) and the jobcomp log
    (``ArrayJobId``, ``ArrayTaskId``) all name the task ``123_4``: keyed by its JobIDRaw,
    one task read from exports with and without that column was stored twice. The
    JobIDRaw stays the run's job id, by which its Darshan log (``SLURM_JOB_ID``) finds
    it; an export with JobIDRaw alone cannot tell a task from a job, and its tasks are
    matched to those stored by their JobIDRaw and submit time
    (:meth:`perfpredict.store.writer._FileIngest.same_jobs`)."""
    return display_id if _TASK_OR_COMPONENT.fullmatch(display_id) else job_id


def times(row: Row, zone: ZoneInfo) -> tuple[float | None, float | None, float | None]:
    """Submit, start and end in epoch seconds UTC.

    A Start or End in the hour clocks went back over is the occurrence that makes End
    less Start the job's Elapsed, where the dump has it: a job from 01:20 summer time to
    01:40 winter time that ran 80 minutes ended at the second 01:40, and read as the
    first it ended an hour early. Otherwise each is its first occurrence, End its second
    where the first would precede the Start: a job that started at 02:50 summer time
    and ended at 02:10 winter time ran 20 minutes; read both as first occurrences it was
    refused as ending before it started, and with it the whole file."""
    start = fields.local_epoch_s("Start", row.get("start", ""), zone)
    end = fields.local_epoch_s("End", row.get("end", ""), zone)
    if start is not None and end is not None:
        start, end = _unfolded(row, zone, start, end)
    check_order(start, end, row)
    return fields.local_epoch_s("Submit", row.get("submit", ""), zone), start, end


def _unfolded(row: Row, zone: ZoneInfo, start: float, end: float) -> tuple[float, float]:
    """:func:`times`' Start and End, read first as their first occurrences."""
    starts = [start, fields.local_epoch_s("Start", row.get("start", ""), zone, later=True)]
    ends = [end, fields.local_epoch_s("End", row.get("end", ""), zone, later=True)]
    if starts[0] == starts[1] and ends[0] == ends[1]:
        return start, end  # neither is in an hour met twice
    elapsed_s = runtime_s(row) if ELAPSED_COLUMNS & row.keys() else None
    if elapsed_s is not None:
        for first, last in ((s, e) for s in starts for e in ends):
            if first is not None and last is not None and round(last - first) == elapsed_s:
                return first, last
    return start, end if end >= start else (ends[1] or end)


def check_order(start: float | None, end: float | None, row: Row) -> None:
    if start is not None and end is not None and end < start:
        raise FieldError(f"End {row.get('end')!r} is before Start {row.get('start')!r}")


def job_record(row: Row, job_id: str, line_no: int, zone: ZoneInfo,
               options: IngestOptions) -> RunRecord | None:
    """The run of an allocation row, or None for a job that has not finished."""
    base_state, _ = state(row, keep_unfinished=not options.require_runtime)
    if base_state is None:
        return None
    code, _ = exit_code(row)
    submit, start, end = times(row, zone)
    if base_state in fields.SLURM_UNFINISHED_STATES:
        runtime = None  # a pending or running job has no runtime yet
    elif ELAPSED_COLUMNS & row.keys():
        runtime = runtime_s(row)
    else:
        runtime = runtime_from_times_s(start, end)
    app, extra = app_and_extra(row, options)
    display_id = row.get("jobid", "").strip()
    extra.update(job_id_extra(display_id, job_id))
    cluster = row.get("cluster", "").strip()
    return RunRecord(
        app=app, system=cluster or None, nodes=nodes(row), gpus=gpus(row), runtime_s=runtime,
        requested_walltime_s=requested_walltime_s(row), state=base_state, exit_code=code,
        user=text_or_none(row, "user"), account=text_or_none(row, "account"),
        partition=text_or_none(row, "partition"), job_id=job_id, submit_epoch_s=submit,
        start_epoch_s=start, end_epoch_s=end, censored=base_state == "TIMEOUT",
        extra=extra, line_no=line_no, key=job_key(key_id(display_id, job_id), submit),
    )


# --- step rows ------------------------------------------------------------------------------

@dataclass
class StepUsage:
    """What one step row adds to its job (None: the row does not say)."""

    max_rss_bytes: float | None
    disk_in_bytes: float | None
    disk_out_bytes: float | None
    tasks: int | None
    nodes: int | None


def disk_bytes(row: Row, column: str) -> float | None:
    """``fs/disk`` of a TRESUsage list; a key without a value counts as 0 bytes."""
    disk = fields.tres_value(row.get(column, ""), "fs/disk")
    return None if disk is None else fields.memory_bytes(f"{column} fs/disk", disk) or 0.0


def step_usage(row: Row, step_name: str) -> StepUsage:
    """MaxRSS, I/O bytes and tasks of a step row. The extern step holds one placeholder
    task per node, never the application, so its tasks do not count."""
    rss = fields.memory_bytes("MaxRSS", row.get("maxrss", ""))
    disk_in, disk_out = disk_bytes(row, "tresusageintot"), disk_bytes(row, "tresusageouttot")
    tasks = fields.count("NTasks", row.get("ntasks"), zero_is_none=True)
    if not tasks or step_name == "extern":
        return StepUsage(rss, disk_in, disk_out, None, None)
    return StepUsage(rss, disk_in, disk_out, tasks, nodes(row))


def array_task_count(job_id: str) -> int:
    """How many jobs ``job_id`` stands for: a pending array remainder its tasks
    (``4190105_[1-3]`` 3, ``12_[1,5,9-11]`` 5, ``12_[0-15:4]`` 4, ``12_[1-100%10]`` 100:
    a throttle limits how many run at once, not how many there are), any other id one.

    >>> array_task_count("4190105_[1-3]"), array_task_count("4190105_7")
    (3, 1)
    """
    match = _ARRAY_REMAINDER.match(job_id.strip())
    if match is None:
        return 1
    n_tasks = 0
    for indexes in match["indexes"].split(","):
        span, _, step = indexes.partition(":")
        first, _, last = span.partition("-")
        n_tasks += len(range(int(first), int(last or first) + 1, int(step or 1)))
    return max(n_tasks, 1)


# --- a whole line -----------------------------------------------------------------------------

@dataclass
class JobLine:
    """An allocation row: its run (None: not finished, or the row is bad)."""

    base: str
    line_no: int
    record: RunRecord | None
    #: The job has not finished: skipped, and counted as such.
    unfinished: bool = False


@dataclass
class PendingTasksLine:
    """A pending array remainder (``4103947_[1-3]``): tasks not started yet, so not runs
    (read as one job when no runtime is required)."""

    line_no: int


@dataclass
class StepLine:
    """A step row: what it adds to its job, or why it cannot be read (reported only when
    its job is a run)."""

    base: str
    raw_id: str
    line_no: int
    usage: StepUsage | None
    reason: str | None


def field_count_reason(layout: Layout, text: str) -> str:
    found = layout.n_fields(text)
    expected = len(layout.columns)
    if layout.assumed_wrongly:
        return (f"expected {expected} fields in Open XDMoD's order (the file has no header "
                f"line and no --columns), found {found}; name the columns with --columns as "
                "in sacct's --format (--columns JobID,JobIDRaw,State,...), or export with a "
                "header line (without --noheader)")
    if found > expected:
        return (f"expected {expected} fields, found {found}; a '|' inside a job name or "
                "comment shifts them: export with --delimiter='^|^'"
                + (", or --columns does not name every field of the export"
                   if layout.named_by_option else ""))
    return (f"expected {expected} fields, found {found}; the line is cut short or "
            "--columns does not match the export")


#: Columns that hold only a job id: a line's fields up to the last of them leading it are
#: where they belong even when a later field holds the delimiter or the line is cut short.
_ID_COLUMNS = frozenset({"jobid", "jobidraw"})


def _unsplit_line(text: str, line_no: int, layout: Layout,
                  ) -> list[JobLine | StepLine | PendingTasksLine | BadRecord]:
    """A line whose fields do not split into the columns: a bad record, and, where its
    leading id fields still say whose line it is, the job or step it was, so that the
    job is not stored from its other lines as if it were whole (a step cut short leaves
    the job's ranks, memory or I/O unknown; a job row's steps belong to no run)."""
    reason = field_count_reason(layout, text)
    n_leading = next((i for i, name in enumerate(layout.columns) if name not in _ID_COLUMNS),
                     len(layout.columns))
    leading = dict(zip(layout.columns[:n_leading], text.split(layout.delimiter)[:n_leading],
                       strict=False))
    raw_id = (leading.get("jobidraw") or leading.get("jobid") or "").strip()
    match = _JOB_ID.match(raw_id) if len(leading) == n_leading else None
    if match is None:
        return [BadRecord(line_no, text, reason)]
    if match["step"] is None:
        return [JobLine(match["base"], line_no, None), BadRecord(line_no, text, reason)]
    return [StepLine(match["base"], raw_id, line_no, None, reason)]


def _header_again(text: str, line_no: int, layout: Layout, options: IngestOptions,
                  ) -> list[BadRecord] | None:
    """Nothing to read for a header line after the first line, where dumps were joined
    (``cat day*.psv``, or ``sacct -P ... >> month.psv`` every night): it was refused as a
    job whose id 'JobIDRaw' "is not a Slurm job id", so the month stored nothing. A
    header naming other fields refuses the file (its lines after it cannot be read by
    the first header's columns, or split by another rule). None: the line is no
    header."""
    if "jobid" not in text.lower():
        return None
    again, is_header = detect_layout(text, options)
    if not is_header:
        return None
    if ((again.columns, again.delimiter, again.trailing_delimiter)
            == (layout.columns, layout.delimiter, layout.trailing_delimiter)):
        return []
    return [BadRecord(line_no, text, (
        "a header line unlike the first one: the file joins dumps of different sacct "
        "--format lists (or of -p and -P); ingest each dump as a file of its own"),
        whole_file=True)]


def read_line(text: str, line_no: int, layout: Layout, zone: ZoneInfo, options: IngestOptions,
              ) -> list[JobLine | StepLine | PendingTasksLine | BadRecord]:
    """Everything one line says: nothing (blank), a pending array remainder, a bad record,
    a job row (with a bad record when its fields cannot be read) or a step row."""
    if not text.strip():
        return []
    if (header := _header_again(text, line_no, layout, options)) is not None:
        return list(header)
    cells = layout.split(text)
    if cells is None:
        return _unsplit_line(text, line_no, layout)
    row = dict(zip(layout.columns, cells, strict=True))
    display_id = row.get("jobid", "").strip()
    raw_id = row.get("jobidraw", "").strip() or display_id
    if "_[" in display_id or "_[" in raw_id:
        if options.require_runtime:
            return [PendingTasksLine(line_no)]
        try:  # tasks to advise a walltime for: one job, named as sacct shows it
            return [JobLine(display_id, line_no,
                            job_record(row, display_id, line_no, zone, options))]
        except FieldError as exc:
            return [BadRecord(line_no, text, str(exc))]
    match = _JOB_ID.match(raw_id)
    if match is None:
        return [BadRecord(line_no, text, f"job id {raw_id!r} is not a Slurm job id like "
                          "123, 123.batch, 123_4 or 176+0")]
    base, step = match["base"], match["step"]
    if step is None:
        try:
            record = job_record(row, base, line_no, zone, options)
            return [JobLine(base, line_no, record, unfinished=record is None)]
        except FieldError as exc:
            return [JobLine(base, line_no, None), BadRecord(line_no, text, str(exc))]
    try:
        return [StepLine(base, raw_id, line_no, step_usage(row, step), None)]
    except FieldError as exc:
        return [StepLine(base, raw_id, line_no, None, str(exc))]
