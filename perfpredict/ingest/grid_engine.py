"""Grid Engine accounting (Sun, Son of, Oracle, Univa and Altair Grid Engine):
``$SGE_ROOT/$SGE_CELL/common/accounting``, one run per job or array task.

A record is one line of ``:``-separated positional fields (``accounting(5)``, FORMATS.md
§6): ``qname hostname group owner job_name job_number account priority submission_time
start_time end_time failed exit_status ru_wallclock ru_utime ...`` up to ``granted_pe
slots task_number cpu mem io category iow pe_taskid maxvmem ...``. Univa/Altair Grid
Engine writes the same layout with times in epoch **milliseconds** and more fields at
the end; a time is read as milliseconds where it is too large for seconds (after 5138
AD), record by record. ``#`` lines are comments.

A parallel job under tight integration writes one record per task that ran on a host
(``pe_taskid`` naming it) and the master's (``pe_taskid`` ``NONE``), which mostly ends
last: the job is the master's record, its node count the distinct hosts of its records,
those before it and those within :data:`LATE_TASK_LINES` lines after it, so memory holds
only the jobs of a window of the file; a task whose master is not in the file (a
rotated log) is dropped. A parallel job of several slots without slave records (loose
integration) has an unknown node count and its slots as total ranks; a job outside a
parallel environment, or of one slot, ran on its one host.

Derived fields: runtime ``ru_wallclock``; requested walltime the ``h_rt`` of the
``-l`` list in ``category``; state COMPLETED where ``failed`` and ``exit_status`` are 0,
else FAILED, and a censored TIMEOUT where the job ran its ``h_rt`` or longer; exit code
``exit_status`` (128 + the signal for a killed job); max RSS ``ru_maxrss`` (KB); account
the ``project`` where set, else ``account`` unless it is Grid Engine's default ``sge``.
A ``category`` holding colons (``h_rt=10:00:00``) spans several fields: it runs up to
``iow``, the first field after it written with a decimal point.

The job id is ``job_number``, ``job_number.task_number`` for an array task; the key adds
the submission time, since job numbers start over at ``max_jobid``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from perfpredict.ingest import fields
from perfpredict.ingest._text.lines import CUT_SHORT_REASON, ended_lines
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord, job_key

__all__ = ["DESCRIPTION", "NAMES_SYSTEM", "parse"]

DESCRIPTION = "Grid Engine (SGE, UGE, Altair) accounting file, one run per job or array task"
#: Records name queues and hosts, never the cluster: ``--system`` is asked for.
NAMES_SYSTEM = False

_HEAD = ("qname", "hostname", "group", "owner", "job_name", "job_number", "account",
         "priority", "submission_time", "start_time", "end_time", "failed", "exit_status",
         "ru_wallclock", "ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss", "ru_ismrss",
         "ru_idrss", "ru_isrss", "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock",
         "ru_oublock", "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw",
         "project", "department", "granted_pe", "slots", "task_number", "cpu", "mem", "io",
         "category")
_TAIL = ("iow", "pe_taskid", "maxvmem")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")
#: The usage Grid Engine writes with a decimal point, just before the category.
_USAGE = ("cpu", "mem", "io")
_FIELD_SEPARATOR = re.compile(r"(?<!\\):")  # a colon not escaped with a backslash
_GPUS = re.compile(r"(?:^|[\s,])n?gpus?=(?P<count>\d+)(?=[\s,]|$)")
_H_RT = re.compile(r"(?:^|[\s,])h_rt=(?P<value>[^\s,]+)")
#: Largest epoch in seconds before a Grid Engine time is read as milliseconds.
_MAX_EPOCH_S = 1e11
_DEFAULT_ACCOUNT = "sge"
#: Lines a master record waits for task records written after it (their order in the
#: file is the order the processes ended, which concurrent jobs interleave).
LATE_TASK_LINES = 10_000
#: ``h_rt`` values that set no limit.
_NO_LIMIT = {"INFINITY", "INF", "NONE", "UNLIMITED"}


def split_record(text: str) -> dict[str, str]:
    """The named fields of a record, the category rejoined where its colons split it
    (Grid Engine writes them escaped, ``h_rt=01\\:00\\:00``, older logs bare); a
    :class:`FieldError` saying why when the line is no record.

    Fields are told by their place from the line's start, so a line that lacks its first
    fields (a record cut in two by logrotate's ``copytruncate``, whose rest starts the
    log) read as one with its fields shifted: a record of job "sge", or a task record
    dropped without a word. Such a line is told by its ``cpu``, ``mem`` and ``io``, which
    Grid Engine writes with a decimal point (``%f``) and which land on the category or
    after it. A line cut inside its first field, the queue's name, keeps every field in
    its place and reads as a record of a queue named by the name's rest: nothing in it
    tells."""
    parts = _FIELD_SEPARATOR.split(text)
    if len(parts) < len(_HEAD) + len(_TAIL):
        raise _too_few_fields(text)
    values = dict(zip(_HEAD, parts, strict=False))
    if not all(_DECIMAL.match(values[name]) for name in _USAGE):
        raise FieldError(
            "not a Grid Engine accounting record: its fields 37 to 39 (cpu, mem, io) are "
            "not the decimal numbers Grid Engine writes there (60.130000:7.335452:0.000044); "
            "the line lacks its first fields (the rest of a record cut in two) or is of "
            "another log")
    end = len(_HEAD)
    while end < len(parts) and not _DECIMAL.match(parts[end]):
        end += 1
    values["category"] = ":".join(parts[len(_HEAD) - 1:end]).replace("\\:", ":")
    if len(parts) - end < len(_TAIL):
        raise _too_few_fields(text)
    values.update(zip(_TAIL, parts[end:end + len(_TAIL)], strict=True))
    return values


def _too_few_fields(text: str) -> FieldError:
    return FieldError(
        f"not a Grid Engine accounting record: {text.count(':') + 1} ':'-separated fields, "
        f"at least {len(_HEAD) + len(_TAIL)} expected (qname:hostname:group:owner:job_name:"
        "job_number:...); the line is cut short or of another log")


def _epoch(values: dict[str, str], name: str) -> float | None:
    """Epoch seconds from Grid Engine's seconds or Univa's milliseconds; 0 is unset."""
    value = fields.number(name, values[name])
    if value is not None and value > _MAX_EPOCH_S:
        value /= 1000.0
    return fields.epoch_s(name, value)


def _h_rt(category: str) -> float | None:
    """The hard runtime limit ``-l h_rt=`` in seconds (``36000`` or ``10:00:00``)."""
    match = _H_RT.search(category)
    if match is None:
        return None
    text = match["value"]
    if text.upper() in _NO_LIMIT:
        return None
    if fields.is_digits(text):
        # 0 sets no limit, as INFINITY does
        return fields.check_duration_s("h_rt", float(text)) or None
    return fields.duration_s("h_rt", text) or None


def _gpus(category: str) -> int | None:
    """GPUs the job asked for with ``-l gpu=N`` (or ``gpus=``, ``ngpus=``), as written: a
    site whose GPU consumable counts per slot (``consumable YES``, not ``JOB``) gave it
    that many per slot, which the record does not say."""
    match = _GPUS.search(category)
    return fields.count("gpu", match["count"]) if match else None


def _record(values: dict[str, str], hosts: set[str], line_no: int,
            options: IngestOptions) -> RunRecord:
    job_number = fields.count("job_number", values["job_number"])
    task = fields.count("task_number", values["task_number"]) or 0
    job_id = f"{job_number}.{task}" if task else str(job_number)
    submit, start, end = (_epoch(values, name) for name in
                          ("submission_time", "start_time", "end_time"))
    if start is not None and end is not None and end < start:
        raise FieldError(f"end_time {values['end_time']} is before start_time "
                         f"{values['start_time']}")
    runtime_s = fields.number("ru_wallclock", values["ru_wallclock"])
    if runtime_s is not None:
        fields.check_duration_s("ru_wallclock", runtime_s)
    failed = fields.count("failed", values["failed"].split()[0] if values["failed"] else "")
    exit_status = fields.count("exit_status", values["exit_status"])
    requested_s = _h_rt(values["category"])
    state = "COMPLETED" if not failed and not exit_status else "FAILED"
    if state == "FAILED" and requested_s and runtime_s is not None and runtime_s >= requested_s:
        state = "TIMEOUT"
    slots = fields.count("slots", values["slots"], zero_is_none=True)
    parallel = values["granted_pe"] not in {"NONE", ""}
    nodes = len(hosts) if len(hosts) > 1 or not parallel or (slots or 1) == 1 else None
    project = values["project"] if values["project"] not in {"NONE", ""} else None
    account = values["account"] if values["account"] not in {_DEFAULT_ACCOUNT, ""} else None
    rss_kb = fields.number("ru_maxrss", values["ru_maxrss"])
    extra: dict[str, Any] = {
        "failed": failed or None,
        "granted_pe": values["granted_pe"] if parallel else None,
        "array_task_id": task or None,
        "cpu_time_s": fields.number("cpu", values["cpu"]) or None,
        "maxvmem_bytes": fields.number("maxvmem", values["maxvmem"]) or None,
    }
    return RunRecord(
        app=fields.app_name(values["job_name"], None, options),
        nodes=nodes,
        total_ranks=slots,
        ranks_per_node=slots / nodes if slots and nodes else None,
        runtime_s=runtime_s,
        requested_walltime_s=requested_s,
        state=state,
        exit_code=exit_status,
        user=values["owner"] or None,
        account=project or account,
        partition=values["qname"] or None,
        job_id=job_id,
        submit_epoch_s=submit,
        start_epoch_s=start,
        end_epoch_s=end,
        max_rss_bytes=rss_kb * 1024 if rss_kb else None,
        censored=state == "TIMEOUT",
        extra={k: v for k, v in extra.items() if v is not None},
        line_no=line_no,
        gpus=_gpus(values["category"]),
        key=job_key(job_id, submit),
    )


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """A run per master record, its slave tasks' hosts folded in; a bad record per line
    that is not a Grid Engine accounting record or does not read."""
    options.check_app_from()
    #: The hosts each job's records named so far.
    hosts: dict[tuple[str, str, str], set[str]] = {}
    #: Master records waiting :data:`LATE_TASK_LINES` lines for their tasks' records.
    held: dict[tuple[str, str, str], tuple[dict[str, str], int, str]] = {}

    def release(before_line: float) -> Iterator[ParsedItem]:
        while held:
            job, (values, line_no, text) = next(iter(held.items()))
            if line_no >= before_line:
                return
            del held[job]
            try:
                yield _record(values, hosts.pop(job), line_no, options)
            except FieldError as exc:
                yield BadRecord(line_no, text, str(exc))

    for line_no, text, ended in ended_lines(path):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if not ended:
            yield BadRecord(line_no, text, CUT_SHORT_REASON)
            continue
        try:
            values = split_record(text)
        except FieldError as exc:
            yield BadRecord(line_no, text, str(exc))
            continue
        job = (values["job_number"], values["task_number"], values["submission_time"])
        master = values["pe_taskid"] in {"NONE", ""}
        if master and job in held:
            yield from release(held[job][1] + 1)  # the job logged twice: each a record
        hosts.setdefault(job, set()).add(values["hostname"])
        if master:
            held[job] = (values, line_no, text)
        yield from release(line_no - LATE_TASK_LINES)
    yield from release(math.inf)
