"""IBM Spectrum LSF accounting (``lsb.acct``): one run per ``JOB_FINISH`` record.

Records are one line of blank-separated positional fields; strings are double-quoted
with ``""`` for an embedded quote, and the job script rides along with ``;`` for
newlines (FORMATS.md §5). Other event types (``EVENT_ADRSV_FINISH``, ``JOB_RESIZE``...)
are skipped. The layout has two variable-length lists (asked hosts, execution hosts)
and later counted sections, so fields are read in order, never by fixed index, and
fields a newer LSF appends at the end are ignored.

Derived fields: nodes = distinct execution hosts (``16*host1201-ib`` or one entry per
slot), total ranks = ``numProcessors`` (slots), runtime = ``eventTime - startTime``,
max RSS from ``maxRMem`` (KB), state from ``jStatus`` (64 DONE, 32 EXIT) refined by
``exitInfo`` (run limit -> censored TIMEOUT, killed by owner or admin -> CANCELLED,
memory limit -> OUT_OF_MEMORY), exit code from the ``wait(2)`` status.

The run limit (requested walltime) sits after the host-usage section: first in record
version 9.x (the XDMoD sample: 43200 s for ``#BSUB -W 12:00``), after ``options3`` in
10.x (IBM's lsb.acct(5) for LSF 10.1). Host-usage entries are six fields in 9.x and
five in 10.x; the width is checked against the data (each entry starts with a host
name) so a misread layout gives no run limit rather than a wrong one. A record ending
before its host-usage entries do is a copy cut short, refused like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from perfpredict.ingest import fields
from perfpredict.ingest._text.lines import CUT_SHORT_REASON, ended_lines
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord, job_key

DESCRIPTION = "IBM LSF lsb.acct accounting (JOB_FINISH records), one run per job"
#: JOB_FINISH records name hosts, never the cluster: ``--system`` is asked for before
#: the file is read (:func:`~perfpredict.ingest.registry.names_system`).
NAMES_SYSTEM = False

_TOKEN = re.compile(r'"(?P<quoted>(?:[^"]|"")*)"|(?P<bare>[^\s"]+)|(?P<stray>")')
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_EVENT = re.compile(r'^\s*"(?P<event>[A-Z][A-Z0-9_]*)"(?:\s|$)')

#: Fixed fields before the asked-hosts list, in order.
_HEAD = ("event", "version", "event_time", "job_id", "user_id", "options", "num_processors",
         "submit_time", "begin_time", "term_time", "start_time", "user_name", "queue",
         "res_req", "depend_cond", "pre_exec_cmd", "from_host", "cwd", "in_file",
         "out_file", "err_file", "job_file")
#: Fixed fields after the execution hosts, up to the submit-extension section.
_MIDDLE = ("j_status", "host_factor", "job_name", "command",
           "ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss",
           "ru_isrss", "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock",
           "ru_ioch", "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw",
           "ru_exutime", "mail_user", "project_name", "exit_status", "max_num_processors",
           "login_shell", "time_event", "idx", "max_rmem", "max_rswap", "in_file_spool",
           "command_spool", "rsv_id", "sla", "except_mask", "additional_info", "exit_info",
           "warning_action", "warning_time_period", "charged_saap", "license_project",
           "app", "post_exec_cmd", "runtime_estimation", "job_group", "requeue_evalues",
           "options2", "resize_notify_cmd", "last_resize_time", "rsv_id_2",
           "job_description")
#: Fields of a host-usage entry: five from LSF 10, six before.
_HOST_USAGE_MIN_FIELDS = 5
#: Fields needed for a run; later ones only refine it.
_REQUIRED = {"event_time", "job_id", "num_processors", "start_time", "j_status", "job_name"}

_JOB_DONE, _JOB_EXIT = 64, 32
# exitInfo (lsbatch.h TERM_*): why LSF ended a job.
_TERM_STATES = {1: "PREEMPTED", 5: "TIMEOUT", 6: "DEADLINE", 8: "CANCELLED", 9: "CANCELLED",
                14: "CANCELLED", 15: "CANCELLED", 16: "OUT_OF_MEMORY"}


class _Reader:
    """Reads the tokens of one record in order, so that counted lists are followed."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.index = tokens, 0

    def remaining(self) -> int:
        return len(self.tokens) - self.index

    def take(self, n: int = 1) -> list[str]:
        taken = self.tokens[self.index:self.index + n]
        self.index += len(taken)
        return taken

    def counted(self, name: str) -> int:
        """A list length; it must fit in what is left of the record."""
        text = self.take()[0] if self.remaining() > 0 else ""
        n = fields.count(name, text)
        if n is None or n > self.remaining():
            raise FieldError(f"{name} {text!r} is not a count of the entries that follow")
        return n


def _tokens(text: str) -> list[str]:
    tokens = []
    for match in _TOKEN.finditer(text):
        if match["stray"] is not None:
            raise FieldError("a string is not closed by a double quote; the line is cut "
                             "short or damaged")
        quoted = match["quoted"]
        tokens.append(quoted.replace('""', '"') if quoted is not None else match["bare"])
    return tokens


def _int(values: dict[str, str], name: str) -> int | None:
    """A numeric field as an integer; a missing, non-numeric or absurdly long one is an
    error when the run needs it and None otherwise."""
    text = values.get(name, "")
    if not _NUMBER.match(text) or len(text) > 18:
        if name in _REQUIRED:
            raise FieldError(f"{name} {text!r} is not a number of sensible size")
        return None
    return int(text.split(".", 1)[0])


def _run_limit_s(reader: _Reader, version: str) -> float | None:
    """The run limit after the submit-extension and host-usage sections (see module doc)."""
    if reader.remaining() < 2:
        return None
    reader.take(2 * reader.counted("submitEXT num"))
    n_hosts = reader.counted("numHostRusage")
    rest = reader.tokens[reader.index:]
    if len(rest) < n_hosts * _HOST_USAGE_MIN_FIELDS:
        # a copy cut inside the list: stored, the job would lose its run limit unseen
        raise FieldError(f"the record ends inside its {n_hosts} host-usage entries; the "
                         "line is cut short")
    ten_or_later = not version.startswith(("9.", "8.", "7."))
    for width in ((5, 6) if ten_or_later else (6, 5)):
        entries = [rest[i * width] for i in range(n_hosts) if i * width < len(rest)]
        tail = rest[n_hosts * width:]
        if len(entries) == n_hosts and not any(_NUMBER.match(e) for e in entries) and tail:
            limit_text = tail[1] if ten_or_later and len(tail) > 1 else tail[0]
            if fields.is_digits(limit_text) and int(limit_text) > 0:
                return fields.check_duration_s("runLimit", float(limit_text))
            return None
    return None


def _record(tokens: list[str], line_no: int, options: IngestOptions) -> RunRecord:
    reader = _Reader(tokens)
    values = dict(zip(_HEAD, reader.take(len(_HEAD)), strict=False))
    reader.take(reader.counted("numAskedHosts"))
    n_exec = reader.counted("numExHosts")
    exec_hosts = [h.split("*", 1)[-1] for h in reader.take(n_exec)]
    if any(not host or _NUMBER.match(host) for host in exec_hosts):
        raise FieldError(f"numExHosts {n_exec} does not match the host names that follow; "
                         "the record is damaged")
    values.update(zip(_MIDDLE, reader.take(len(_MIDDLE)), strict=False))
    missing = sorted(n for n in _REQUIRED if n not in values)
    if missing:
        raise FieldError(f"the record ends before {', '.join(missing)}; the line is cut short")

    job_number = fields.count("jobId", values["job_id"])
    if job_number is None:
        raise FieldError("jobId is empty")
    job_id = str(job_number)
    index = _int(values, "idx")
    if index:  # an element of a job array
        job_id = f"{job_id}[{index}]"
    start = fields.epoch_s("startTime", _int(values, "start_time"))
    end = fields.epoch_s("eventTime", _int(values, "event_time"))
    runtime_s = None
    if start is not None and end is not None:
        if end < start:
            raise FieldError(f"eventTime {end:.0f} is before startTime {start:.0f}")
        runtime_s = end - start

    status = _int(values, "j_status") or 0
    exit_info = _int(values, "exit_info")
    if status & _JOB_DONE:
        state = "COMPLETED"
    elif status & _JOB_EXIT:
        state = _TERM_STATES.get(exit_info or 0, "FAILED")
    else:
        raise FieldError(f"jStatus {status} is neither DONE (64) nor EXIT (32); "
                         "JOB_FINISH records are written for finished jobs only")
    wait_status = _int(values, "exit_status")
    code = None
    if wait_status is not None and wait_status >= 0:
        signal = wait_status & 0x7F
        code = fields.exit_code((wait_status >> 8) & 0xFF, signal)

    slots = fields.count("numProcessors", _int(values, "num_processors"), zero_is_none=True)
    nodes = len(set(exec_hosts)) or None
    max_rmem_kb = _int(values, "max_rmem")
    extra: dict[str, Any] = {
        "lsf_version": values.get("version"),
        "exit_info": exit_info or None,
        "res_req": values.get("res_req") or None,
    }
    submit = fields.epoch_s("submitTime", _int(values, "submit_time"))
    return RunRecord(
        app=fields.app_name(values.get("job_name", ""), None, options),
        nodes=nodes,
        total_ranks=slots,
        ranks_per_node=slots / nodes if slots and nodes else None,
        runtime_s=runtime_s,
        requested_walltime_s=_run_limit_s(reader, values.get("version", "")),
        state=state,
        exit_code=code,
        user=values.get("user_name") or None,
        account=values.get("project_name") or None,
        partition=values.get("queue") or None,
        job_id=job_id,
        submit_epoch_s=submit,
        start_epoch_s=start,
        end_epoch_s=end,
        max_rss_bytes=max_rmem_kb * 1024.0 if max_rmem_kb and max_rmem_kb > 0 else None,
        censored=state == "TIMEOUT",
        extra={k: v for k, v in extra.items() if v is not None},
        line_no=line_no,
        key=job_key(job_id, submit),
    )


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of the ``JOB_FINISH`` records of ``path``."""
    options.check_app_from()
    for line_no, text, ended in ended_lines(path):
        if not text.strip():
            continue
        if not ended:
            yield BadRecord(line_no, text, CUT_SHORT_REASON)
            continue
        event = _EVENT.match(text)
        if event is None:
            yield BadRecord(line_no, text, 'not an lsb.acct record (it starts with the '
                            'quoted event type, like "JOB_FINISH")')
        elif event["event"] == "JOB_FINISH":
            try:
                yield _record(_tokens(text), line_no, options)
            except FieldError as exc:
                yield BadRecord(line_no, text, str(exc))
