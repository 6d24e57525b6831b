"""Slurm accounting from ``sacct --json``, Slurm 21.08 to 25.x (FORMATS.md §2).

The document's shape changed with the data_parser version and this reader accepts every
variant seen in real exports: ``meta.plugin`` or ``meta.plugins``; ``state.current`` a
string (21.08 .. 23.02) or a list (23.11+); numbers plain or ``{set, infinite, number}``
(23.02+); ``time.limit`` in minutes either way; step times plain or wrapped (25.05).

One run per job, with the same folding and natural key as the ``sacct -P`` reader so the
two formats deduplicate against each other: nodes, CPUs and GPUs from the allocated TRES,
ranks from the step with the most tasks (``extern`` excluded), MaxRSS and ``fs/disk``
bytes from the steps' TRES usage (Slurm names usage-in ``requested`` and usage-out
``consumed``). Jobs still pending or running are not runs and are skipped (kept, without a
runtime, when read as jobs to advise a walltime for: ``require_runtime`` False).

sacct writes one object, and a center's daily export can be 756 MB: loaded whole with
:func:`json.load` it took 3.3 GB resident. The ``jobs`` list is read one job at a time
instead (:func:`json.JSONDecoder.raw_decode` on each element, the file read a piece at a
time), and everything else is read as :func:`json.loads` reads it: a document that is not
JSON is one bad record at the line and column the decoder names, also when it is found
after jobs already read (the store then keeps none of them), and a job that cannot be
read is a bad record at the line its object starts.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from perfpredict.ingest import fields
from perfpredict.ingest._text.lines import STREAM_DAMAGE, damaged_stream, open_binary
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import (
    BadRecord,
    BatchItem,
    IngestOptions,
    ParsedItem,
    RunRecord,
    Skipped,
    expand_batches,
    job_key,
)

DESCRIPTION = "Slurm 'sacct --json' (Slurm 21.08 .. 25.x), one run per finished job"


class _Unlimited:
    """``{"infinite": true}``: no limit, distinct from "not set"."""


UNLIMITED = _Unlimited()


def _number(name: str, value: Any) -> float | _Unlimited | None:
    """A plain number, or the 23.02+ ``{set, infinite, number}`` wrapper unwrapped."""
    if isinstance(value, dict):
        if value.get("infinite"):
            return UNLIMITED
        if not value.get("set", True):
            return None
        value = value.get("number")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldError(f"{name} {value!r} is not a number")
    return value


def _finite(name: str, value: Any) -> float | None:
    number = _number(name, value)
    return None if isinstance(number, _Unlimited) else number


def _tres_counts(entries: Any, name: str) -> dict[str, float]:
    """``[{type, name, count}, ...]`` as ``{"cpu": 4, "gres/gpu": 1, "fs/disk": ...}``."""
    counts: dict[str, float] = {}
    if not isinstance(entries, list):
        return counts
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("type"):
            continue
        key = str(entry["type"]) + (f"/{entry['name']}" if entry.get("name") else "")
        value = _finite(f"{name} {key}", entry.get("count"))
        if value is not None and value >= 0:  # -2 marks "not available" (energy)
            counts[key] = value
    return counts


def _state(job: dict[str, Any], keep_unfinished: bool) -> str | None:
    current = (job.get("state") or {}).get("current")
    if isinstance(current, list):
        current = current[0] if current else ""
    return fields.slurm_state(str(current or ""), keep_unfinished=keep_unfinished)


def _reason(reason: Any) -> str | None:
    """Why the job ended as it did; Slurm writes the string "None" for no reason."""
    return None if reason in (None, "", "None") else str(reason)


def _exit_code(job: dict[str, Any]) -> tuple[int | None, int | None]:
    exit_info = job.get("exit_code")
    if not isinstance(exit_info, dict):
        return None, None
    code = fields.count("exit_code.return_code",
                        _finite("exit_code.return_code", exit_info.get("return_code")))
    signal_info = exit_info.get("signal")
    signal = None
    if isinstance(signal_info, dict):
        signal = fields.count("exit_code.signal.id",
                              _finite("exit_code.signal.id", signal_info.get("id")))
    return fields.exit_code(code, signal), signal


def _steps(job: dict[str, Any]) -> tuple[tuple[int, int | None] | None, float | None,
                                          float | None]:
    """(tasks, nodes) of the step with most tasks, max RSS bytes, I/O bytes."""
    largest: tuple[int, int | None] | None = None
    max_rss: float | None = None
    io_bytes: float | None = None
    for step in job.get("steps") or []:
        if not isinstance(step, dict):
            continue
        step_info = step.get("step") or {}
        step_id = step_info.get("id") if isinstance(step_info, dict) else None
        name = str(step_info.get("name") or "") if isinstance(step_info, dict) else ""
        is_extern = name == "extern" or str(step_id).endswith(".extern")
        tasks = fields.count("steps[].tasks.count",
                             _finite("tasks.count", (step.get("tasks") or {}).get("count")),
                             zero_is_none=True)
        if tasks and not is_extern and (largest is None or tasks > largest[0]):
            nodes = fields.count("steps[].nodes.count",
                                 _finite("nodes.count", (step.get("nodes") or {}).get("count")),
                                 zero_is_none=True)
            largest = (tasks, nodes)
        usage = step.get("tres") or {}
        for direction in ("requested", "consumed"):
            block = usage.get(direction) or {}
            disk = _tres_counts(block.get("total"), "tres usage").get("fs/disk")
            if disk is not None:
                io_bytes = (io_bytes or 0.0) + disk
            rss = _tres_counts(block.get("max"), "tres usage").get("mem")
            if rss is not None:
                max_rss = max(rss, max_rss or 0.0)
    return largest, max_rss, io_bytes


def _record(job: dict[str, Any], options: IngestOptions) -> RunRecord | None:
    state = _state(job, keep_unfinished=not options.require_runtime)
    if state is None:
        return None
    job_id = fields.count("job_id", _finite("job_id", job.get("job_id")))
    if job_id is None:
        raise FieldError("the job has no job_id")
    times = job.get("time") or {}
    limit = _number("time.limit", times.get("limit"))
    requested_walltime_s = (None if limit is None or isinstance(limit, _Unlimited)
                            else fields.check_duration_s("time.limit", limit * 60.0))
    elapsed = _finite("time.elapsed", times.get("elapsed"))
    allocated = _tres_counts((job.get("tres") or {}).get("allocated"), "tres.allocated")
    largest, max_rss, io_bytes = _steps(job)
    code, signal = _exit_code(job)
    nodes = fields.count("tres.allocated node", allocated.get("node"), zero_is_none=True)
    if nodes is None:
        nodes = fields.count("allocation_nodes", _finite("allocation_nodes",
                             job.get("allocation_nodes")), zero_is_none=True)
    cluster = str(job.get("cluster") or "")
    comment = job.get("comment")
    array = job.get("array") or {}
    het = job.get("het") or {}
    extra: dict[str, Any] = {
        "cpus": fields.count("tres.allocated cpu", allocated.get("cpu"), zero_is_none=True),
        "qos": job.get("qos") or None,
        "state_reason": _reason((job.get("state") or {}).get("reason")),
        "exit_signal": signal or None,
    }
    # keyed as sacct's JobID shows it: array task 123_4, het component 176+0
    # (perfpredict.ingest.sacct.rows.key_id)
    key_id = str(job_id)
    task_id = _finite("array.task_id", array.get("task_id"))
    if array.get("job_id") and task_id is not None:
        extra.update(array_job_id=str(array["job_id"]), array_task_id=int(task_id))
        key_id = f"{array['job_id']}_{int(task_id)}"
    het_offset = _finite("het.job_offset", het.get("job_offset"))
    if het.get("job_id") and het_offset is not None:
        extra.update(het_job_id=str(het["job_id"]), het_job_offset=int(het_offset))
        key_id = f"{het['job_id']}+{int(het_offset)}"
    job_name = str(job.get("name") or "")
    app = fields.app_name(
        job_name, comment.get("job") if isinstance(comment, dict) else None, options)
    if app != job_name.strip():
        extra["job_name"] = job_name
    start = fields.epoch_s("time.start", _finite("time.start", times.get("start")))
    end = fields.epoch_s("time.end", _finite("time.end", times.get("end")))
    if start is not None and end is not None and end < start:
        raise FieldError(f"time.end {end:.0f} is before time.start {start:.0f}")
    submit = fields.epoch_s("time.submission", _finite("time.submission",
                                                       times.get("submission")))
    record = RunRecord(
        app=app,
        system=cluster or None,
        nodes=nodes,
        gpus=fields.gpus_from_tres(allocated),
        io_bytes=io_bytes,
        # a pending or running job (read to advise a walltime for) has no runtime yet
        runtime_s=(None if elapsed is None or state in fields.SLURM_UNFINISHED_STATES
                   else fields.check_duration_s("time.elapsed", float(elapsed))),
        requested_walltime_s=requested_walltime_s,
        state=state,
        exit_code=code,
        user=str(job.get("user") or "") or None,
        account=str(job.get("account") or "") or None,
        partition=str(job.get("partition") or "") or None,
        job_id=str(job_id),
        submit_epoch_s=submit,
        start_epoch_s=start,
        end_epoch_s=end,
        max_rss_bytes=max_rss,
        censored=state == "TIMEOUT",
        extra={k: v for k, v in extra.items() if v is not None},
        key=job_key(key_id, submit),
    )
    if largest is not None:
        tasks, step_nodes = largest
        record.total_ranks = tasks
        per = step_nodes or nodes
        record.ranks_per_node = tasks / per if per else None
    return record


#: Bytes of the file decoded at a time; a job object longer than this is read whole.
READ_PIECE_BYTES = 1 << 20
#: How close to the end of the text read so far the decoder may stop, cut off rather than
#: at an error: a literal (``-Infinity``) or an escape (``\ud834\udd1e``) cut short is
#: refused at its start, a string cut short says "Unterminated string".
CUT_MARGIN_CHARS = 32
#: Characters of the file's start kept to tell what the file is by its first line.
HEAD_CHARS = 1 << 16
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class _Malformed(Exception):
    """The document cannot be read as sacct's: ``bad`` is the whole-file bad record."""

    def __init__(self, bad: BadRecord) -> None:
        super().__init__(bad.reason)
        self.bad = bad


class _JsonText:
    """A JSON document read a piece at a time, its 1-based line numbers tracked, so that
    one job object at a time is in memory: the whole document loaded took 3.3 GB resident
    for a 756 MB daily dump (docs/performance.md).

    Bytes that are not UTF-8 are replaced (U+FFFD) as the line-based readers do: Slurm
    writes a job or user name's bytes as they are, and one Latin-1 name refused the whole
    export with advice to export it again, which gives the same bytes."""

    def __init__(self, path: Path, fh: BinaryIO, read_as: Callable[[str], str]) -> None:
        self.path = path
        self.fh = fh
        self.read_as = read_as  # how a fix names reading the file in another format
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = ""  # what is read and not yet consumed, from text[0]
        self.pos = 0
        self.at_eof = False
        self.head = ""  # the file's start: its first line says what the file is
        # Line of text[counted_to]; text[counted_to:] not yet counted.
        self.line_no = 1
        self.counted_to = 0
        # The first characters of the line text[0] is on (for a reject's text), and how
        # many there are (for the column).
        self.line_start = ""
        self.line_start_chars = 0

    def fill(self) -> bool:
        """Read on: as much again as is not consumed, so that a value longer than a piece
        is decoded a bounded number of times; False at the end of the file."""
        if self.at_eof:
            return False
        self.line_of(self.pos)
        consumed = self.text[:self.pos]
        last_newline = consumed.rfind("\n")
        if last_newline >= 0:
            self.line_start = consumed[last_newline + 1:][:200]
            self.line_start_chars = len(consumed) - last_newline - 1
        else:
            self.line_start = (self.line_start + consumed)[:200]
            self.line_start_chars += len(consumed)
        self.text, self.counted_to, self.pos = self.text[self.pos:], 0, 0
        wanted = max(READ_PIECE_BYTES, len(self.text))
        pieces: list[str] = []
        n_read = 0
        try:
            while n_read < wanted:
                piece = self.fh.read1(  # type: ignore[attr-defined]
                    min(wanted - n_read, READ_PIECE_BYTES))
                if not piece:
                    self.at_eof = True
                    pieces.append(self.decoder.decode(b"", final=True))
                    break
                n_read += len(piece)
                pieces.append(self.decoder.decode(piece))
        except STREAM_DAMAGE as exc:
            line_no = self.line_of(len(self.text)) + sum(p.count("\n") for p in pieces)
            raise damaged_stream(self.path, line_no, exc) from exc
        self.text += "".join(pieces)
        if not self.head:
            self.head = self.text[:HEAD_CHARS]
        return True

    def line_of(self, index: int) -> int:
        """The 1-based line of ``text[index]``, for indices that never go back."""
        self.line_no += self.text.count("\n", self.counted_to, index)
        self.counted_to = index
        return self.line_no

    def peek(self) -> str:
        """The next character past whitespace, "" at the end of the file."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self.fill():
                return self.text[self.pos:self.pos + 1]

    def expect(self, message: str, *accepted: str) -> str:
        """The next character, consumed, when it is one of ``accepted``."""
        char = self.peek()
        if not char or char not in accepted:
            raise self.not_json(message, self.pos)
        self.pos += 1
        return char

    def value(self) -> Any:
        """The next JSON value, as :func:`json.loads` reads it."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                cut = (exc.pos >= len(self.text) - CUT_MARGIN_CHARS
                       or exc.msg.startswith("Unterminated string"))
                if cut and self.fill():
                    continue
                raise self.not_json(exc.msg, exc.pos) from exc
            if end == len(self.text) and self.fill():
                continue  # a number may go on in the next piece
            self.pos = end
            return value

    def end(self) -> None:
        """Nothing but whitespace left, as :func:`json.loads` requires."""
        if self.peek():
            raise self.not_json("Extra data", self.pos)

    def not_json(self, message: str, index: int) -> _Malformed:
        """Why the text is not JSON, and what to do: an empty file or ``sacct -P`` text
        (``|``-separated) said as such, since "Expecting value at column 1" told neither."""
        first = next((text for text in self.head.splitlines() if text.strip()), None)
        if first is None:  # no line to name
            return _Malformed(BadRecord(None, "", "the file is empty; export again with "
                                        "sacct --json", whole_file=True))
        line_no = self.line_of(index)
        line_begin = self.text.rfind("\n", 0, index) + 1
        column = index - line_begin + 1 + (0 if line_begin else self.line_start_chars)
        line_end = self.text.find("\n", index)
        line = ((self.line_start if not line_begin else "")
                + self.text[line_begin:None if line_end < 0 else line_end]).rstrip("\r")
        if "|" in first and not first.lstrip().startswith(("{", "[")):
            reason = ("this is sacct -P text ('|'-separated fields), not JSON; read it with "
                      f"{self.read_as('sacct')}")
        else:
            # json's "Unterminated string starting at" ends waiting for its position
            reason = (f"not valid JSON ({message.removesuffix(' at')} at column {column}); "
                      "export again with sacct --json, the file may be cut short")
        return _Malformed(BadRecord(line_no, line[:200], reason, whole_file=True))


def _jobs(path: Path, read_as: Callable[[str], str]) -> Iterator[tuple[int, Any]]:
    """``(line_no, job)`` of each element of the top-level object's ``jobs`` list, decoded
    one at a time; the other members (``meta``, ``errors``, ``warnings``) are read past.
    Raises :class:`_Malformed` where :func:`json.loads` would have refused the document or
    found it without a ``jobs`` list: after the jobs before it, a document cut short is
    refused whole (the store undoes a whole-file reject's runs).

    Exports written one after another into one file (``sacct --json ... >> month.json``
    every night) are read one after another: the second was refused as "not valid JSON
    (Extra data ...); ... the file may be cut short", and the month stored nothing."""
    with open_binary(path) as fh:
        text = _JsonText(path, fh, read_as)
        if text.peek() != "{":  # read as json.loads does, to say why it is not sacct's
            text.value()
            text.end()
            raise _no_jobs()
        while True:
            yield from _document_jobs(text)
            if text.peek() != "{":
                break
        text.end()


def _document_jobs(text: _JsonText) -> Iterator[tuple[int, Any]]:
    """:func:`_jobs` of the one top-level object starting at ``text``'s position."""
    start_line = text.line_of(text.pos)
    text.pos += 1
    jobs_line: int | None = None
    has_jobs_list = False
    if text.peek() != "}":
        while True:
            if text.peek() != '"':
                raise text.not_json("Expecting property name enclosed in double quotes",
                                    text.pos)
            key_line = text.line_of(text.pos)
            key = text.value()
            text.expect("Expecting ':' delimiter", ":")
            if key == "jobs" and jobs_line is not None:
                raise _Malformed(BadRecord(key_line, "", "the top level has 'jobs' twice "
                                           f"(lines {jobs_line} and {key_line}); this is "
                                           "not the output of sacct --json",
                                           whole_file=True))
            if key == "jobs":
                jobs_line = key_line
            if key == "jobs" and text.peek() == "[":
                has_jobs_list = True
                text.pos += 1
                if text.peek() != "]":
                    while True:
                        text.peek()
                        yield text.line_of(text.pos), text.value()
                        if text.expect("Expecting ',' delimiter", ",", "]") == "]":
                            break
                else:
                    text.pos += 1
            else:
                text.value()
            if text.expect("Expecting ',' delimiter", ",", "}") == "}":
                break
    else:
        text.pos += 1
    if not has_jobs_list:
        raise _no_jobs(start_line)


def _no_jobs(line_no: int = 1) -> _Malformed:
    """The document starting on ``line_no`` has no ``jobs`` list."""
    return _Malformed(BadRecord(line_no, "", "no 'jobs' list at the top level; this is not the "
                                "output of sacct --json", whole_file=True))


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of the jobs in ``path``; a job that cannot be read is a bad record at the line
    its object starts, naming its index and job id."""
    return expand_batches(parse_batches(path, options))


def parse_batches(path: Path, options: IngestOptions) -> Iterator[BatchItem]:
    """:func:`parse`'s items, and how many jobs were skipped as not finished."""
    options.check_app_from()
    try:
        yield from _job_items(_jobs(path, options.read_as), options)
    except _Malformed as malformed:
        yield malformed.bad
    except RecursionError as exc:  # nested deeper than the decoder goes
        yield BadRecord(None, "", f"cannot be read as JSON text ({type(exc).__name__}: "
                        f"{str(exc)[:200]}); export again with sacct --json", whole_file=True)


def _job_items(jobs: Iterable[tuple[int, Any]], options: IngestOptions) -> Iterator[BatchItem]:
    """The run of each ``(line_no, job)``, or a bad record at its line; then how many jobs
    were skipped as not finished."""
    n_unfinished = 0
    for index, (line_no, job) in enumerate(jobs):
        if not isinstance(job, dict):
            yield BadRecord(line_no, repr(job)[:200], f"jobs[{index}] is not a job object")
            continue
        try:
            record = _record(job, options)
        except FieldError as exc:
            reason = str(exc)
        except (AttributeError, TypeError, ValueError) as exc:
            # A value of an unexpected type: a damaged file or a sacct schema not seen yet.
            reason = (f"a field has an unexpected shape ({exc}); if this is an unmodified "
                      "sacct --json export, report its Slurm version")
        else:
            if record is not None:
                yield record
            else:
                n_unfinished += 1
            continue
        yield BadRecord(line_no, json.dumps(job)[:2000],
                        f"jobs[{index}] (job {job.get('job_id')!r}): {reason}")
    if n_unfinished:
        yield Skipped(n_unfinished)
