"""What parsers produce: one :class:`RunRecord` per job or benchmark run, or a
:class:`BadRecord` saying which line could not be read and why.

Parsers normalise units at this boundary: seconds, bytes, epoch seconds UTC.
"""

from __future__ import annotations

import bisect
import re
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from perfpredict.errors import BadInputError
from perfpredict.names import refuse_blank_system

#: ``runs export``'s column of a run's identity within its system (its natural key
#: without the system), by which ``ingest csv`` keys the row again: a restored backup,
#: a merge of stores, or the scheduler log an export came from stores nothing twice.
RUN_KEY = "run_key"


def job_key(job_id: str, submit_epoch_s: float | None) -> str:
    """A scheduler job's identity within its system: its job id and, where known, when
    it was submitted (``:id@submit``, whole epoch seconds).

    The id alone is no identity: Slurm's ids start again after a slurmdbd reset or on a
    new cluster of the same name (``FirstJobId``), PBS's wrap, LSF's wrap at 999999,
    and a trace's start at 1. Keyed by the id alone, a later job of a reused id replaced
    the stored one, an earlier run silently lost. The submit time tells them apart and
    is the same wherever the job is read (a sacct dump taken again, with or without its
    ``Cluster``; the jobcomp log; sacct's JSON), so reading a job again stores nothing
    twice. Slurm gives a requeued job a new submit time ("so the restarted job looks
    like a new job", ``job_mgr.c``), so each incarnation ``sacct -D`` lists is a run
    of its own, as it is a record of its own in Slurm's accounting.

    A job read from an export that lacks its submit time (no ``Submit`` column) is keyed
    by its id alone, and the store matches it to a stored run of its id by its start
    (:meth:`perfpredict.store.writer._FileIngest.same_jobs`). A submit time of 0 is
    none (the epoch Grid Engine and Slurm write for one not known).

    The colon is the form stored keys have always had (``system|:id``; before one key
    per job, ``system|cluster:id``): the cluster a log names is the run's system
    already."""
    return timed_key(f":{job_id}", submit_epoch_s)


def timed_key(key: str, submit_epoch_s: float | None) -> str:
    """``key`` with the submit time it was submitted at, where known (:func:`job_key`)."""
    return f"{key}@{submit_epoch_s:.0f}" if submit_epoch_s else key


#: Hex digits of the digest that ends the key of a job told apart by what it did rather
#: than when (:func:`content_tagged_key`).
CONTENT_DIGEST_CHARS = 16
_CONTENT_TAGGED = re.compile(rf"~[0-9a-f]{{{CONTENT_DIGEST_CHARS}}}\Z")


def content_tagged(natural_key: str) -> bool:
    """Whether a key is one of :func:`content_tagged_key`."""
    return _CONTENT_TAGGED.search(natural_key) is not None


def content_tagged_key(key: str, digest: str) -> str:
    """The key of a job whose log gives no epoch to key it by (an SWF trace without
    ``UnixStartTime``): its number and a digest of its fields. A trace numbers its jobs
    from 1, so by the number alone, job 1 of another trace of the same machine was taken
    for the stored job 1 and left out ("already in the store"); the same trace read again
    (a copy, gzipped, ``--reread``) gives the same digest and stores nothing twice. Two
    such keys that differ are two jobs (:func:`perfpredict.store.job_identity.same_job`)."""
    return f"{key}~{digest[:CONTENT_DIGEST_CHARS]}"


#: What marks the key of a Darshan log stored as a run of its own (:func:`darshan_log_key`).
DARSHAN_LOG_MARK = "#darshan@"
#: The key of a run's Darshan details in ``extra``: one log's, or a list of several.
DARSHAN_DETAILS = "darshan"


def darshan_log_key(job_id: str, start_epoch_s: float | None, log_name: str) -> str:
    """The key of a Darshan log stored before its job's accounting: its job id, a mark no
    scheduler's key has (a job is keyed ``id@submit``, which a log that started
    in the second its job was submitted would have taken), and when it started (else the
    log file's name). A job of that id that arrives later takes the log over only if the
    log ran inside it (:mod:`perfpredict.store.io_first`); one that ran at another time,
    the id reused, is another job, which a shared key would have replaced the log with."""
    return job_key(job_id, None) + DARSHAN_LOG_MARK + (
        f"{start_epoch_s:.0f}" if start_epoch_s is not None else log_name)


@dataclass(slots=True)
class RunRecord:
    app: str
    system: str | None = None  # None: the --system option supplies it
    problem_size: str | None = None
    problem_size_num: float | None = None
    #: What else tells this run's scaling curve apart (build, input parameters): part of
    #: its series key.
    variant: str | None = None
    nodes: int | None = None
    ranks_per_node: float | None = None
    threads_per_rank: int | None = None
    total_ranks: int | None = None
    gpus: int | None = None
    io_bytes: float | None = None
    runtime_s: float | None = None
    requested_walltime_s: float | None = None
    state: str | None = None
    exit_code: int | None = None
    user: str | None = None
    account: str | None = None
    partition: str | None = None
    job_id: str | None = None
    submit_epoch_s: float | None = None
    start_epoch_s: float | None = None
    end_epoch_s: float | None = None
    max_rss_bytes: float | None = None
    censored: bool = False
    extra: dict[str, Any] | None = None
    line_no: int | None = None
    #: Identity within its system (scheduler job id, JobIDRaw...). None: a benchmark row,
    #: identified by its content instead.
    key: str | None = None
    #: "insert" stores a new run; "attach" adds a Darshan log's I/O to the stored run of
    #: its job (:mod:`perfpredict.store.io_first`) and inserts only when none is stored.
    mode: Literal["insert", "attach"] = "insert"


@dataclass(slots=True)
class BadRecord:
    line_no: int | None
    raw: str
    reason: str
    #: The file cannot be read at all (its header, its top level): nothing in it is a
    #: good record, so skipping bad records stores nothing from it either.
    whole_file: bool = False


@dataclass
class RunBatch:
    """Many runs as columns, as the parsers that read whole blocks of lines produce them:
    ``columns`` maps :class:`RunRecord` field names to equally long lists (a field not
    given is None on every row). The pipeline stores a batch without making a record of
    each row; rows may share one ``extra`` dict, which nothing may change."""

    columns: dict[str, list[Any]]

    def __len__(self) -> int:
        return len(self.columns["line_no"])

    def column(self, name: str) -> list[Any]:
        """The values of field ``name``, None on every row when the parser gave none."""
        found = self.columns.get(name)
        return found if found is not None else [None] * len(self)

    def slice(self, start: int, stop: int) -> RunBatch:
        return RunBatch({name: values[start:stop] for name, values in self.columns.items()})

    def take(self, rows: list[int]) -> RunBatch:
        """The batch of the rows at ``rows``, in that order."""
        return RunBatch({name: [values[i] for i in rows] for name, values in self.columns.items()})

    def records(self) -> Iterator[RunRecord]:
        names = list(self.columns)
        for values in zip(*self.columns.values(), strict=True):
            yield RunRecord(**dict(zip(names, values, strict=True)))

    @classmethod
    def of(cls, records: list[RunRecord]) -> RunBatch:
        """The records as a batch (insert mode only)."""
        names = [name for name in RunRecord.__slots__  # type: ignore[attr-defined]
                 if name != "mode"]
        return cls({name: [getattr(r, name) for r in records] for name in names})


@dataclass(slots=True)
class Skipped:
    """Jobs a batch parser read and left out because they are not runs yet (pending,
    running, requeued, pending array remainders), so the summary can say how many."""

    n_unfinished: int


ParsedItem = RunRecord | BadRecord
BatchItem = RunRecord | BadRecord | RunBatch | Skipped


def expand_batches(items: Iterable[BatchItem]) -> Iterator[ParsedItem]:
    """A batch parser's items one record at a time, for readers of single records (which
    are not told what was skipped)."""
    for item in items:
        if isinstance(item, RunBatch):
            yield from item.records()
        elif not isinstance(item, Skipped):
            yield item


def in_line_order(batch: RunBatch | None, items: list[ParsedItem]) -> Iterator[BatchItem]:
    """A block's runs read as columns and the items read line by line (both in line
    order) as one sequence in line order, as a record-by-record parser yields them, so
    the first bad record a user is told of is the first in the file."""
    if batch is None or not len(batch):
        yield from items
        return
    line_nos = batch.column("line_no")
    done = 0
    for item in items:
        cut = bisect.bisect_left(line_nos, item.line_no or 0, lo=done)
        if cut > done:
            yield batch.slice(done, cut)
            done = cut
        yield item
    if done < len(batch):
        yield batch.slice(done, len(batch)) if done else batch


def _check_columns(columns: object) -> None:
    """Refuse ``columns`` that are not a list of field names. A text, as ``--columns``
    takes them ("JobID,State,..."), was read one letter a column, and the file refused
    for lacking the JobID and State it named. No one column makes a sacct layout (it
    needs JobID and State), so a text is refused, saying how to split it, as
    scikit-learn refuses a text where a list of names goes, rather than taken as one
    column. A number among the names was an AttributeError ("'int' object has no
    attribute 'strip'")."""
    example = "['JobID', 'JobName', 'State', 'Elapsed', 'NNodes']"
    if isinstance(columns, str):
        raise BadInputError(f"columns must be a list of the file's field names in its "
                            f"order, as {example}, not the text {columns!r}"
                            + (f"; {columns!r}.split(',') makes a list of it"
                               if "," in columns else ""))
    if columns is not None and not (isinstance(columns, Iterable)
                                    and all(isinstance(name, str) for name in columns)):
        raise BadInputError(f"columns must be a list of the file's field names in its "
                            f"order, each a text, as {example}, not {columns!r}")


def ingest_command(input_format: str) -> str:
    """How a fix tells the user to read a file as ``input_format``: ingest's command."""
    return f"'perfpredict ingest {input_format}'"


def reread_command(fmt: str, path: str, system: str | None) -> str:
    """The command that reads an ingested file again, storing what the store lacks of it
    (``ingest --reread``), with the --system it was read with."""
    return " ".join(["perfpredict ingest", fmt, "--reread", shlex.quote(path),
                     *(["--system", shlex.quote(system)] if system else [])])


#: Formats whose records name their application otherwise than by a job name, so that
#: ``app_from`` has nothing to read: what names it there.
_APP_WITHOUT_JOB_NAME = {"csv": "its app column", "swf": "its executable number"}

#: What ``on_error`` may be (``--on-error``): refuse the file at its first bad record, or
#: keep bad records as rejects and store the good ones.
ON_ERROR_CHOICES = ("fail", "skip")


@dataclass
class IngestOptions:
    """Options every parser receives; each reads the ones it understands."""

    system: str | None = None
    on_error: Literal["fail", "skip"] = "fail"
    timezone: str = "UTC"
    columns: list[str] | None = None  # sacct dumps without a header line
    app_from: str = "jobname"  # scheduler and Darshan logs: jobname | comment | regex:PATTERN
    swf_allow_extra_fields: bool = False
    #: Read a file already ingested again instead of skipping it: its records keep their
    #: keys, so only what the store lacks is stored (what an earlier release dropped or
    #: rejected, read by this one), and its rejects are those of this reading.
    reread: bool = False
    #: False for jobs not run yet (walltime advice input): a missing runtime is allowed,
    #: and sacct's pending and running jobs are read as jobs instead of skipped.
    require_runtime: bool = True
    #: How a fix names reading the file in another format (:func:`ingest_command`);
    #: ``advise walltime``, which reads its input with these parsers, names its own
    #: ``--input-format`` instead.
    read_as: Callable[[str], str] = ingest_command

    def validate(self) -> None:
        """Refuse what the CLI's choices would have: ``on_error="skp"`` read as "skip",
        since only "fail" was looked for, and stored a file's good records without a
        word about its bad ones; and an unknown time zone or ``app_from``."""
        if self.on_error not in ON_ERROR_CHOICES:
            raise BadInputError(f"on_error must be one of: {', '.join(ON_ERROR_CHOICES)}, "
                                f"not {self.on_error!r}")
        if self.system is not None and not isinstance(self.system, str):
            raise BadInputError(f"system must be a machine's name, as text, not "
                                f"{self.system!r}")
        # named as the pipeline names a system missing (--system NAME): the options
        # reach the parsers from Python as well as from ingest's and advise's --system
        refuse_blank_system(self.system, "the system name",
                            fix="pass --system NAME, the machine the jobs ran on")
        _check_columns(self.columns)
        if not isinstance(self.timezone, str):  # a TypeError from inside zoneinfo
            raise BadInputError(f"timezone must be an IANA zone's name, as text ('UTC', "
                                f"'Europe/Berlin'), not {self.timezone!r}")
        # said before the file is read: its parser said it, and a file already ingested
        # is not read, so a mistyped --timezone or --app-from on it was taken in silence
        self.zone()
        self.check_app_from()

    def zone(self) -> ZoneInfo:
        """The zone local timestamps are read in; an unknown name is a usage error."""
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise BadInputError(
                f"unknown time zone {self.timezone!r}; pass an IANA name such as UTC or "
                "Europe/Berlin with --timezone"
            ) from None

    def check_app_from(self) -> None:
        """Validate ``--app-from`` once per file, so a typo is one usage error rather than
        a bad record per line (``re`` caches the compiled pattern for
        :func:`~perfpredict.ingest.fields.app_name`)."""
        source = self.app_from
        if source in {"jobname", "comment"}:
            return
        if not isinstance(source, str) or not source.startswith("regex:"):
            raise BadInputError(f"--app-from {source!r} is not one of jobname, comment, "
                                "regex:PATTERN")
        try:
            re.compile(source[len("regex:"):])
        except re.error as exc:
            raise BadInputError(f"--app-from regex {source[6:]!r} does not compile ({exc}); "
                                "fix the pattern") from None

    def check_format(self, fmt: str) -> None:
        """Refuse an option of another format's parser: 'ingest pbs --columns ...' and
        'ingest lsf --swf-allow-extra-fields' read the file as if it had not been given,
        without a word, so a user took a layout or a variant for understood."""
        if self.columns and fmt != "sacct":
            raise BadInputError(f"--columns names the fields of a sacct -P dump without a "
                                f"header line; a {fmt} file is read without it: leave it out")
        if self.swf_allow_extra_fields and fmt != "swf":
            raise BadInputError(f"--swf-allow-extra-fields reads extended SWF variants; a "
                                f"{fmt} file is read without it: leave it out")
        if self.app_from != "jobname" and fmt in _APP_WITHOUT_JOB_NAME:
            raise BadInputError(f"--app-from reads an application from a job's name or "
                                f"comment; a {fmt} file has none "
                                f"({_APP_WITHOUT_JOB_NAME[fmt]} is the application): "
                                "leave it out")
