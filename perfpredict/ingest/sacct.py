"""Slurm accounting from ``sacct --parsable2`` (``-P``): one run per job, steps folded in.

Reads output with a header line (``sacct -P --format ...``) and headerless dumps
(``--noheader``), whose fields come from ``options.columns`` or, when neither is given,
from the 26-column order Open XDMoD documents for its exports. ``-p``'s trailing ``|``
and ``--delimiter='^|^'`` (safe when job names contain ``|``) are recognised.

Folding (FORMATS.md §1.4): a job is its allocation row plus the step rows that follow it,
grouped by ``JobIDRaw`` before the first ``.``. The allocation row gives runtime, time
limit, state, submit/start/end, CPUs and nodes; the steps give tasks (ranks per node =
NTasks / NNodes of the step with the most tasks, the ``extern`` step excluded), MaxRSS
(max over steps) and I/O bytes (``fs/disk`` of ``TRESUsageInTot`` + ``TRESUsageOutTot``,
summed over steps; None when no step reports it).

Not runs, skipped without a bad record: jobs still pending or running (and their steps),
and pending array remainders such as ``4103947_[1-3]``. A TIMEOUT job is kept as
``censored``: it ran at least its limit. Memory stays bounded on dumps of any size: only
the last :data:`MAX_OPEN_JOBS` jobs are held open for their steps.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from perfpredict.ingest import fields
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord
from perfpredict.ingest.textio import numbered_lines

DESCRIPTION = "Slurm 'sacct -P' output (header line, or --columns / XDMoD order), steps folded"

#: Field order of Open XDMoD's documented export (``sacct --noheader --parsable2 --format``).
XDMOD_COLUMNS = (
    "jobid", "jobidraw", "cluster", "partition", "qos", "account", "group", "gid", "user",
    "uid", "submit", "eligible", "start", "end", "elapsed", "exitcode", "state", "nnodes",
    "ncpus", "reqcpus", "reqmem", "reqtres", "alloctres", "timelimit", "nodelist", "jobname",
)
#: Jobs held open for late step rows. sacct prints steps right after their job, so one
#: would do; the margin tolerates lightly shuffled dumps at a few KB of memory.
MAX_OPEN_JOBS = 256

# 123, 123_4 (array task), 176+0 (het component), each optionally .batch/.extern/.0
_JOB_ID = re.compile(r"^(?P<base>\d+(?:[_+]\d+)?)(?:\.(?P<step>[A-Za-z0-9_+-]+))?$")
_ARRAY_TASK = re.compile(r"^(?P<job>\d+)_(?P<task>\d+)")
_HET_COMPONENT = re.compile(r"^(?P<job>\d+)\+(?P<offset>\d+)")
_EXIT_CODE = re.compile(r"^(?P<code>\d+):(?P<signal>\d+)$")
# TimelimitRaw prints Slurm's NO_VAL / INFINITE as these when there is no limit.
_NO_LIMIT_MINUTES = {"4294967294", "4294967295"}


@dataclass
class _Layout:
    """How the lines of this file split into named fields."""

    columns: tuple[str, ...]
    delimiter: str
    trailing_delimiter: bool

    def split(self, text: str) -> list[str] | None:
        """The fields of a line, or None when their count differs from the columns (a
        delimiter inside a value: rejecting beats mis-shifting every later field)."""
        cells = text.split(self.delimiter)
        if self.trailing_delimiter and len(cells) == len(self.columns) + 1 and not cells[-1]:
            cells.pop()
        return cells if len(cells) == len(self.columns) else None


def _detect_layout(text: str, options: IngestOptions) -> tuple[_Layout, bool]:
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
    return _Layout(columns, delimiter, trailing), is_header


@dataclass
class _Job:
    """A job being folded: the run from its allocation row (None when it is not a run:
    still pending, or its row was bad) and what its steps add."""

    record: RunRecord | None
    max_rss_bytes: float | None = None
    io_bytes: float | None = None
    largest_step: tuple[int, int | None] | None = None  # (tasks, nodes)

    def add_step(self, row: dict[str, str], step_name: str) -> None:
        if self.record is None:
            return
        rss = fields.memory_bytes("MaxRSS", row.get("maxrss", ""))
        if rss is not None:
            self.max_rss_bytes = max(rss, self.max_rss_bytes or 0.0)
        for column in ("tresusageintot", "tresusageouttot"):
            disk = fields.tres_value(row.get(column, ""), "fs/disk")
            if disk is not None:
                disk_bytes = fields.memory_bytes(f"{column} fs/disk", disk) or 0.0
                self.io_bytes = (self.io_bytes or 0.0) + disk_bytes
        tasks = fields.count("NTasks", row.get("ntasks"), zero_is_none=True)
        # The extern step holds one placeholder task per node, never the application.
        if tasks and step_name != "extern" and (
            self.largest_step is None or tasks > self.largest_step[0]
        ):
            nodes = fields.count("NNodes", row.get("nnodes") or row.get("allocnodes"),
                                 zero_is_none=True)
            self.largest_step = (tasks, nodes)

    def finish(self) -> RunRecord | None:
        record = self.record
        if record is None:
            return None
        record.max_rss_bytes = self.max_rss_bytes
        record.io_bytes = self.io_bytes
        if self.largest_step is not None:
            tasks, step_nodes = self.largest_step
            record.total_ranks = tasks
            nodes = step_nodes or record.nodes
            record.ranks_per_node = tasks / nodes if nodes else None
        return record


def _requested_walltime_s(row: dict[str, str]) -> float | None:
    minutes = row.get("timelimitraw", "").strip()
    if minutes:
        if minutes.upper() in fields.NO_LIMIT or minutes in _NO_LIMIT_MINUTES:
            return None
        limit = fields.count("TimelimitRaw", minutes)
        return None if limit is None else fields.check_duration_s("TimelimitRaw", limit * 60.0)
    return fields.duration_s("Timelimit", row.get("timelimit", ""))


def _exit_code(text: str) -> tuple[int | None, int | None]:
    text = text.strip()
    if not text:
        return None, None
    match = _EXIT_CODE.match(text)
    if match is None:
        raise FieldError(f"ExitCode {text!r} is not <return code>:<signal> like 0:0")
    code = fields.count("ExitCode", match["code"])
    signal = fields.count("ExitCode signal", match["signal"])
    return fields.exit_code(code, signal), signal


def _job_record(row: dict[str, str], job_id: str, line_no: int, zone: ZoneInfo,
                options: IngestOptions) -> RunRecord | None:
    """The run of an allocation row, or None for a job that has not finished."""
    state_text = row.get("state", "")
    state = fields.slurm_state(state_text)
    if state is None:
        return None
    raw_elapsed = row.get("elapsedraw", "").strip()
    runtime_s = (float(fields.count("ElapsedRaw", raw_elapsed) or 0) if raw_elapsed
                 else fields.duration_s("Elapsed", row.get("elapsed", "")))
    code, signal = _exit_code(row.get("exitcode", ""))
    start = fields.local_epoch_s("Start", row.get("start", ""), zone)
    end = fields.local_epoch_s("End", row.get("end", ""), zone)
    if start is not None and end is not None and end < start:
        raise FieldError(f"End {row.get('end')!r} is before Start {row.get('start')!r}")
    cluster = row.get("cluster", "").strip()
    display_id = row.get("jobid", "").strip()
    extra: dict[str, Any] = {
        "cpus": fields.count("NCPUS", row.get("ncpus") or row.get("alloccpus"),
                             zero_is_none=True),
        "qos": row.get("qos", "").strip() or None,
        "req_mem": row.get("reqmem", "").strip() or None,
        "state_detail": state_text.strip() if state_text.strip() != state else None,
        "exit_signal": signal or None,
        "timezone": options.timezone,
    }
    if display_id and display_id != job_id:
        extra["slurm_job_id"] = display_id
    if array := _ARRAY_TASK.match(display_id):
        extra.update(array_job_id=array["job"], array_task_id=int(array["task"]))
    if het := _HET_COMPONENT.match(display_id):
        extra.update(het_job_id=het["job"], het_job_offset=int(het["offset"]))
    job_name = row.get("jobname", "")
    app = fields.app_name(job_name, row.get("comment"), options)
    if app != job_name.strip():
        extra["job_name"] = job_name.strip()
    return RunRecord(
        app=app,
        system=cluster or None,
        nodes=fields.count("NNodes", row.get("nnodes") or row.get("allocnodes"),
                           zero_is_none=True),
        gpus=fields.gpus_from_tres(fields.tres(row.get("alloctres", ""))),
        runtime_s=runtime_s,
        requested_walltime_s=_requested_walltime_s(row),
        state=state,
        exit_code=code,
        user=row.get("user", "").strip() or None,
        account=row.get("account", "").strip() or None,
        partition=row.get("partition", "").strip() or None,
        job_id=job_id,
        submit_epoch_s=fields.local_epoch_s("Submit", row.get("submit", ""), zone),
        start_epoch_s=start,
        end_epoch_s=end,
        censored=state == "TIMEOUT",
        extra={k: v for k, v in extra.items() if v is not None},
        line_no=line_no,
        key=f"{cluster}:{job_id}",
    )


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of ``path``, one per finished job, or a bad record per unreadable line."""
    zone = fields.timezone(options)
    fields.check_app_from(options)
    layout: _Layout | None = None
    open_jobs: OrderedDict[str, _Job] = OrderedDict()
    for line_no, text in numbered_lines(path):
        if not text.strip():
            continue
        if layout is None:
            layout, is_header = _detect_layout(text, options)
            if not {"jobidraw", "jobid"} & set(layout.columns) or "state" not in layout.columns:
                yield BadRecord(line_no, text, "the columns need JobIDRaw (or JobID) and "
                                "State; export with sacct -P --format JobID,JobIDRaw,State,...")
                return
            if is_header:
                continue
        cells = layout.split(text)
        if cells is None:
            found = len(text.split(layout.delimiter))
            yield BadRecord(line_no, text, (
                f"expected {len(layout.columns)} fields, found {found}; a '|' inside a "
                "job name or comment shifts them: export with --delimiter='^|^'"
                if found > len(layout.columns) else
                f"expected {len(layout.columns)} fields, found {found}; the line is cut "
                "short or --columns does not match the export"))
            continue
        row = dict(zip(layout.columns, cells, strict=True))
        display_id = row.get("jobid", "").strip()
        raw_id = row.get("jobidraw", "").strip() or display_id
        if "_[" in display_id or "_[" in raw_id:
            continue  # pending array remainder: tasks not started yet
        match = _JOB_ID.match(raw_id)
        if match is None:
            yield BadRecord(line_no, text, f"job id {raw_id!r} is not a Slurm job id like "
                            "123, 123.batch, 123_4 or 176+0")
            continue
        base, step = match["base"], match["step"]
        try:
            if step is None:
                if base in open_jobs:  # a requeued incarnation (sacct -D): close the last one
                    if finished := open_jobs.pop(base).finish():
                        yield finished
                job = _Job(None)
                open_jobs[base] = job
                job.record = _job_record(row, base, line_no, zone, options)
                while len(open_jobs) > MAX_OPEN_JOBS:
                    if finished := open_jobs.popitem(last=False)[1].finish():
                        yield finished
            elif base in open_jobs:
                open_jobs[base].add_step(row, step)
            else:
                yield BadRecord(line_no, text, (
                    f"step {raw_id} has no job row {base} shortly before it; sacct prints "
                    "every job's steps right after it, so the dump was cut or reordered"))
        except FieldError as exc:
            yield BadRecord(line_no, text, str(exc))
    for job in open_jobs.values():
        if finished := job.finish():
            yield finished
