"""Slurm's job completion log (``JobCompType=jobcomp/filetxt``): one run per job.

A center without slurmdbd keeps no ``sacct`` history, only this file
(``/var/log/slurm_jobcomp.log``): one line per finished job of ``Key=Value`` fields
(FORMATS.md §3.1)::

    JobId=2293679 UserId=btr0104h(210981) ... Name=run.sh JobState=FAILED Partition=a100
    TimeLimit=1440 StartTime=2025-01-11T22:45:16 EndTime=2025-01-11T22:45:18 ...
    NodeCnt=1 ProcCnt=16 ... Tres=cpu=16,mem=240000M,node=1,gres/gpu=1 ... Cluster=alex
    ... ExitCode=2:0

``Name`` and ``WorkDir`` are not quoted, so a line is split before each key Slurm writes
(:data:`KEYS`), never at every blank: a job name with spaces stays whole. Each line
becomes the row ``sacct`` would print for the job and is read by the same rules
(:func:`perfpredict.ingest.sacct.rows.job_record`): the state, ``TimeLimit`` in minutes
or ``UNLIMITED``, the exit code, GPUs from ``Tres`` (older Slurm wrote ``Gres``, which
is not a TRES list and is left alone), times in slurmctld's local time read in
``--timezone``, and the runtime ``EndTime - StartTime`` (``StartTime=Unknown`` for a job
cancelled while pending: no runtime). The key is the ``JobId`` (an array task's
``ArrayJobId_ArrayTaskId``) and ``SubmitTime``, as sacct's JobID and Submit
(``Cluster`` names the system), so a job found both in this file and in a sacct dump of
the same cluster is stored once (:func:`perfpredict.ingest.records.job_key`).

A job requeued (after a node failure, or by ``scontrol requeue``) is written once per
time it ended, all under one ``JobId``; Slurm gives each incarnation a new
``SubmitTime``, so each is a run of its own, as in ``sacct -D``, and a job id that
slurmctld gave again after losing its state is another job. A line repeated with the
same ``JobId`` and ``SubmitTime`` is the same job: its last line is kept, the earlier
ones are skipped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from perfpredict.ingest import fields
from perfpredict.ingest._text.lines import CUT_SHORT_REASON, ended_lines, numbered_lines
from perfpredict.ingest.fields import FieldError
from perfpredict.ingest.records import (
    BadRecord,
    BatchItem,
    IngestOptions,
    ParsedItem,
    Skipped,
    expand_batches,
)
from perfpredict.ingest.sacct.rows import job_record

__all__ = ["DESCRIPTION", "KEYS", "parse", "parse_batches"]

DESCRIPTION = "Slurm jobcomp/filetxt job completion log (Key=Value lines), one run per job"

#: Every key jobcomp/filetxt writes, in its order (``Gres`` before Slurm 21.08 where
#: ``Tres`` is now; ``Pack*`` before ``Het*``).
KEYS = ("JobId", "UserId", "GroupId", "Name", "JobState", "Partition", "TimeLimit",
        "StartTime", "EndTime", "NodeList", "NodeCnt", "ProcCnt", "WorkDir",
        "ReservationName", "Tres", "Gres", "Account", "QOS", "WcKey", "Cluster",
        "SubmitTime", "EligibleTime", "ArrayJobId", "ArrayTaskId", "HetJobId",
        "HetJobOffset", "PackJobId", "PackJobOffset", "DerivedExitCode", "ExitCode")
_REQUIRED = ("JobId", "JobState", "StartTime", "EndTime")
_SPLIT = re.compile(r" (?=(?:" + "|".join(KEYS) + r")=)")
_JOB_ID = re.compile(r"^JobId=(\d+)(?: |$)")
_USER = re.compile(r"^(?P<name>.*?)(?:\(\d+\))?$")
#: sacct's names for the fields, as the shared rules' messages give them, and the keys
#: of this file a user reads instead.
_JOBCOMP_NAMES = {"TimelimitRaw": "TimeLimit", "Timelimit": "TimeLimit",
                  "NCPUS": "ProcCnt", "NNodes": "NodeCnt", "Start": "StartTime",
                  "End": "EndTime", "Submit": "SubmitTime", "AllocTRES": "Tres"}
_SACCT_NAMES = re.compile(r"\b(?:" + "|".join(_JOBCOMP_NAMES) + r")\b")


def fields_of(text: str) -> dict[str, str]:
    """The line's ``Key=Value`` fields, split only before a key Slurm writes."""
    parts = _SPLIT.split(text.strip())
    return dict(part.split("=", 1) for part in parts if "=" in part)


def _display_id(values: dict[str, str]) -> str:
    """The job id as sacct displays it: ``123_4`` for an array task, ``176+0`` for a
    heterogeneous job's component (a non-array, non-het job has 0 or no such field)."""
    job_id = values["JobId"]
    for job_key, index_key, joiner in (("ArrayJobId", "ArrayTaskId", "_"),
                                       ("HetJobId", "HetJobOffset", "+"),
                                       ("PackJobId", "PackJobOffset", "+")):
        parent = values.get(job_key, "").strip()
        index = values.get(index_key, "").strip()
        if parent not in {"", "0"} and fields.is_digits(parent) and fields.is_digits(index):
            return f"{parent}{joiner}{index}"
    return job_id


def sacct_row(values: dict[str, str]) -> dict[str, str]:
    """The fields as the row ``sacct -P`` prints for the job (lower-case column names)."""
    user = _USER.match(values.get("UserId", "").strip())
    return {
        "jobid": _display_id(values),
        "jobidraw": values["JobId"],
        "jobname": values.get("Name", ""),
        "state": values["JobState"],
        "partition": values.get("Partition", ""),
        "timelimitraw": values.get("TimeLimit", ""),
        "submit": values.get("SubmitTime", ""),
        "start": values["StartTime"],
        "end": values["EndTime"],
        "nnodes": values.get("NodeCnt", ""),
        "ncpus": values.get("ProcCnt", ""),
        "alloctres": values.get("Tres", ""),
        "account": values.get("Account", ""),
        "qos": values.get("QOS", ""),
        "cluster": values.get("Cluster", ""),
        "user": user["name"] if user else "",
        "exitcode": values.get("ExitCode", ""),
    }


def _last_lines(path: Path) -> dict[tuple[str, str], int]:
    """The line of the last record of each job id and submit time: the earlier ones are
    the same job written again. A job id met with another submit time is another job
    (the id reused after slurmctld lost its state) or a requeued incarnation (Slurm
    gives it a new submit time), each a run of its own, as sacct's ``-D`` rows are."""
    last: dict[tuple[str, str], int] = {}
    for line_no, text in numbered_lines(path):
        if match := _JOB_ID.match(text.lstrip()):
            last[match[1], fields_of(text).get("SubmitTime", "").strip()] = line_no
    return last


def parse_batches(path: Path, options: IngestOptions) -> Iterator[BatchItem]:
    """A run per job's last record; requeued incarnations and jobs not finished counted
    as skipped; a bad record per line that is not a jobcomp record or does not read."""
    zone = options.zone()
    options.check_app_from()
    last_line = _last_lines(path)
    n_skipped = 0
    for line_no, text, ended in ended_lines(path):
        if not text.strip():
            continue
        if not ended:
            yield BadRecord(line_no, text, CUT_SHORT_REASON)
            continue
        values = fields_of(text)
        missing = [f"{key}=" for key in _REQUIRED if key not in values]
        if not _JOB_ID.match(text.lstrip()) or missing:
            what = (" or ".join(missing) if _JOB_ID.match(text.lstrip())
                    else "job number after JobId=" if text.lstrip().startswith("JobId=")
                    else "JobId= first")
            yield BadRecord(line_no, text, (
                f"not a Slurm jobcomp/filetxt record (no {what}); expected 'JobId=... "
                "JobState=... StartTime=... EndTime=...' lines from JobCompType="
                "jobcomp/filetxt"))
            continue
        if not fields.is_digits(values["JobId"]):
            yield BadRecord(line_no, text, f"JobId {values['JobId']!r} is not a job number "
                            "followed by a blank; the line is damaged")
            continue
        if last_line[values["JobId"], values.get("SubmitTime", "").strip()] != line_no:
            n_skipped += 1  # a later line is the same job's final record
            continue
        try:
            row = sacct_row(values)
            run = job_record(row, row["jobidraw"], line_no, zone, options)
        except FieldError as exc:
            yield BadRecord(line_no, text, _SACCT_NAMES.sub(
                lambda m: _JOBCOMP_NAMES[m[0]], str(exc)))
            continue
        if run is None:
            n_skipped += 1
        else:
            yield run
    if n_skipped:
        yield Skipped(n_skipped)


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    """Runs of ``path``, one per job, or a bad record per unreadable line."""
    return expand_batches(parse_batches(path, options))
