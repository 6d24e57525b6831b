"""PBS accounting logs (Torque and PBS Pro): one run per ``E`` (job ended) record.

A record is ``MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value key=value ...`` (FORMATS.md §4).
Only ``E`` records describe a finished job; queue, start, delete and reservation records
are skipped without complaint. Values are split on the first ``=`` (``select=`` specs
contain more), may be double-quoted (PBS Pro), and an unquoted job name with spaces is
kept whole rather than read as broken keys.

Derived fields: nodes from ``Resource_List.nodect``, else the chunks of the node spec,
else the distinct hosts of ``exec_host``; ranks from the spec (``nodes=4:ppn=8``;
``select=5:mpiprocs=13``, ``ncpus`` standing in when ``mpiprocs`` is absent, divided by
``ompthreads`` where given), else the CPU slots of ``exec_host`` (``c1/0-3+c2/0*8``);
threads per rank from ``ompthreads`` (PBS Pro's OpenMP threads per MPI process) where
every chunk gives the same; runtime from ``resources_used.walltime``
(``end - start`` when missing or zero); requested walltime from
``Resource_List.walltime``. ``Exit_status`` above 256 means killed by signal
(status - 256); a job killed at or past its walltime is a censored TIMEOUT.

The job id loses its server suffix (``6.edge.ccr.buffalo.edu`` and ``6`` are one job),
so the same job logged twice is stored once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from perfpredict.ingest import fields
from perfpredict.ingest._text.lines import CUT_SHORT_REASON, ended_lines
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord, job_key

DESCRIPTION = "PBS / Torque / PBS Pro accounting logs (E records), one run per job"
#: The records name the PBS server (the job id's suffix), not the machine: ``--system``
#: is asked for before the file is read (:func:`~perfpredict.ingest.registry.names_system`).
NAMES_SYSTEM = False

_RECORD = re.compile(
    r"^(?P<stamp>\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2});(?P<type>[A-Za-z]);"
    r"(?P<job_id>[^;]+);(?P<message>.*)$"
)
_TOKEN = re.compile(r'(?P<key>[A-Za-z_][\w.]*)=(?P<value>"[^"]*"|\S*)|(?P<word>\S+)')
_EXEC_SLOTS = re.compile(r"^(?P<host>[^/]+)(?:/(?P<slots>[\d,\-*]+))?$")
_INTEGER = re.compile(r"^-?\d+$")
_DEFAULT_PROJECT = "_pbs_project_default"


def _attributes(message: str) -> dict[str, str]:
    """``key=value`` pairs; a word without ``=`` continues the previous value (an
    unquoted job name with spaces)."""
    attrs: dict[str, str] = {}
    last: str | None = None
    for match in _TOKEN.finditer(message):
        if match["key"] is not None:
            last = match["key"]
            value = match["value"]
            attrs[last] = value[1:-1] if value.startswith('"') else value
        elif last is not None:
            attrs[last] += " " + match["word"]
    return attrs


@dataclass
class _Chunk:
    """One ``+``-separated part of a node spec: ``count`` nodes (or chunks) alike."""

    count: int
    ranks: int | None
    gpus: int | None
    #: ``ompthreads``: OpenMP threads per rank (PBS sets OMP_NUM_THREADS from it).
    threads: int | None


def _chunks(name: str, spec: str) -> list[_Chunk]:
    """``4:ppn=8``, ``node01:ppn=4+node02:ppn=4``, ``5:ncpus=13``,
    ``1:mpiprocs=48:ncpus=48:ngpus=4:mem=185547mb``, ``2:mpiprocs=4:ompthreads=12`` as
    chunks. Without ``mpiprocs``, a chunk's ``ncpus`` stand in for its ranks, divided by
    its ``ompthreads`` (``2:ncpus=48:ompthreads=48`` is one rank of 48 threads per node,
    as PBS launches it, not 48 ranks)."""
    chunks = []
    for part in spec.split("+"):
        items = [item for item in part.split(":") if item]
        if not items:
            raise FieldError(f"{name} {spec!r} has an empty chunk")
        number = 1
        if fields.is_digits(items[0]):
            number = fields.count(name, items.pop(0)) or 0
        elif "=" not in items[0]:
            items.pop(0)  # a host name: one node
        resources = dict(item.split("=", 1) for item in items if "=" in item)
        ranks_text = resources.get("mpiprocs") or resources.get("ppn") or resources.get("ncpus")
        gpus_text = resources.get("ngpus") or resources.get("gpus") or resources.get("gpu")
        threads = fields.count(f"{name} ompthreads", resources.get("ompthreads"),
                               zero_is_none=True)
        ranks = fields.count(f"{name} ranks", ranks_text) if ranks_text else None
        if ranks and threads and not (resources.get("mpiprocs") or resources.get("ppn")):
            ranks = max(ranks // threads, 1)
        chunks.append(_Chunk(
            number, ranks, fields.count(f"{name} gpus", gpus_text) if gpus_text else None,
            threads))
    return chunks


def _exec_host(text: str) -> tuple[int, int | None]:
    """Distinct hosts and CPU slots of ``exec_host`` (``h/7+h/6``, ``h/0-3``, ``h/0*13``);
    slots None when an entry does not say."""
    hosts: set[str] = set()
    slots: int | None = 0
    for entry in text.split("+"):
        match = _EXEC_SLOTS.match(entry)
        if match is None:
            raise FieldError(f"exec_host entry {entry!r} is not host/cpu, host/a-b or host/0*n")
        hosts.add(match["host"])
        cpus = match["slots"]
        if cpus is None or slots is None:
            slots = None
        elif "*" in cpus:
            slots += fields.count("exec_host cpus", cpus.split("*", 1)[1]) or 0
        else:
            for piece in cpus.split(","):
                low, _, high = piece.partition("-")
                first = fields.count("exec_host cpu", low) or 0
                last = fields.count("exec_host cpu", high) if high else first
                slots += max((last or 0) - first + 1, 0)
    return len(hosts), slots or None


def _epoch(attrs: dict[str, str], key: str) -> float | None:
    text = attrs.get(key, "").strip()
    if not text:
        return None
    if not fields.is_digits(text):
        raise FieldError(f"{key} {text!r} is not epoch seconds")
    return fields.epoch_s(key, int(text))


def _walltime(attrs: dict[str, str], key: str) -> float | None:
    text = attrs.get(key, "").strip()
    if fields.is_digits(text):  # PBS Pro also accepts plain seconds
        return fields.check_duration_s(key, float(text))
    return fields.duration_s(key, text) if text else None


def _record(full_id: str, attrs: dict[str, str], line_no: int,
            options: IngestOptions) -> RunRecord:
    # 6.edge.ccr.buffalo.edu -> 6, 123[4].server -> 123[4], 3073070.[host] -> 3073070
    job_id = full_id.split(".", 1)[0]
    spec_name, spec = next(((k, attrs[k]) for k in ("Resource_List.select",
                            "Resource_List.nodes") if attrs.get(k)), ("", ""))
    nodect = attrs.get("Resource_List.nodect", "")
    if ":" in nodect and not spec:  # seen in the wild: a node spec written as nodect
        spec_name, spec, nodect = "Resource_List.nodect", nodect, nodect.split(":", 1)[0]
    chunks = _chunks(spec_name, spec) if spec else []
    host_count, slots = _exec_host(attrs["exec_host"]) if attrs.get("exec_host") else (0, None)
    nodes = fields.count("Resource_List.nodect", nodect, zero_is_none=True)
    if nodes is None and chunks:
        nodes = sum(c.count for c in chunks) or None
    nodes = nodes or host_count or None
    total_ranks = (sum(c.count * (c.ranks or 0) for c in chunks)
                   if chunks and all(c.ranks for c in chunks) else slots)
    # one layout per run: chunks that differ in threads (or do not all say) give none
    threads = {c.threads for c in chunks}
    threads_per_rank = threads.pop() if len(threads) == 1 else None
    gpus = fields.count("Resource_List.ngpus", attrs.get("Resource_List.ngpus"))
    if gpus is None and any(c.gpus for c in chunks):
        gpus = sum(c.count * (c.gpus or 0) for c in chunks)
    if gpus is None:
        gpus = fields.count("Resource_List.gpus",
                            attrs.get("Resource_List.gpus") or attrs.get("Resource_List.gpu"))

    start, end = _epoch(attrs, "start"), _epoch(attrs, "end")
    if start is not None and end is not None and end < start:
        raise FieldError(f"end {end:.0f} is before start {start:.0f}")
    runtime_s = _walltime(attrs, "resources_used.walltime")
    if not runtime_s and start is not None and end is not None:
        runtime_s = end - start
    requested_s = _walltime(attrs, "Resource_List.walltime")

    if "Exit_status" not in attrs:  # every E record has it, toward its end
        raise FieldError("the E record has no Exit_status; the line is cut short or "
                         "damaged")
    status_text = attrs["Exit_status"].strip()
    if status_text and not _INTEGER.match(status_text):
        raise FieldError(f"Exit_status {status_text!r} is not a whole number")
    status = int(status_text) if status_text else None
    if status is not None and abs(status) > fields.MAX_COUNT:
        raise FieldError(f"Exit_status {status} is out of range")
    state, code = None, status
    if status is not None:
        if status > 256:
            code = fields.exit_code(None, status - 256)
        state = "COMPLETED" if status == 0 else "FAILED"
        if status != 0 and requested_s and runtime_s is not None and runtime_s >= requested_s:
            state = "TIMEOUT"

    account = attrs.get("account") or attrs.get("project")
    job_name = attrs.get("jobname", "")
    extra: dict[str, Any] = {"pbs_job_id": full_id if full_id != job_id else None}
    if status is not None and code != status:
        extra["exit_status"] = status
    if cput := _walltime(attrs, "resources_used.cput"):
        extra["cpu_time_s"] = cput
    submit = _epoch(attrs, "ctime") or _epoch(attrs, "qtime")
    return RunRecord(
        app=fields.app_name(job_name, None, options),
        nodes=nodes,
        total_ranks=total_ranks,
        ranks_per_node=total_ranks / nodes if total_ranks and nodes else None,
        threads_per_rank=threads_per_rank,
        gpus=gpus,
        runtime_s=runtime_s,
        requested_walltime_s=requested_s,
        state=state,
        exit_code=code,
        user=attrs.get("user") or None,
        account=account if account and account != _DEFAULT_PROJECT else None,
        partition=attrs.get("queue") or None,
        job_id=job_id,
        submit_epoch_s=submit,
        start_epoch_s=start,
        end_epoch_s=end,
        max_rss_bytes=fields.memory_bytes("resources_used.mem",
                                          attrs.get("resources_used.mem", "")),
        censored=state == "TIMEOUT",
        extra={k: v for k, v in extra.items() if v is not None},
        line_no=line_no,
        key=job_key(job_id, submit),
    )


def _check_stamp(stamp: str) -> None:
    """The record's own time must be a date (11/39/2014 is a damaged line, not a job)."""
    try:
        datetime.strptime(stamp, "%m/%d/%Y %H:%M:%S")
    except ValueError:
        raise FieldError(f"the record's time {stamp!r} is not a date and time "
                         "MM/DD/YYYY HH:MM:SS") from None


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of the ``E`` records of ``path``; a line that is not a PBS record is bad."""
    options.check_app_from()
    for line_no, text, ended in ended_lines(path):
        if not text.strip():
            continue
        if not ended:
            yield BadRecord(line_no, text, CUT_SHORT_REASON)
            continue
        match = _RECORD.match(text)
        if match is None:
            yield BadRecord(line_no, text, "not a PBS accounting record "
                            "'MM/DD/YYYY HH:MM:SS;TYPE;JOBID;key=value ...'")
            continue
        if match["type"] != "E":
            continue
        try:
            _check_stamp(match["stamp"])
            yield _record(match["job_id"].strip(), _attributes(match["message"]), line_no,
                          options)
        except FieldError as exc:
            yield BadRecord(line_no, text, str(exc))
