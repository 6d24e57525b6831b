"""The one dispatcher from format name to parser module, imported only when used.

Each parser module exposes ``DESCRIPTION`` (one line for ``--help``) and
``parse(path, options) -> Iterator[RunRecord | BadRecord]``; one that reads whole blocks
of lines at once also exposes ``parse_batches``, whose items may be
:class:`~perfpredict.ingest.records.RunBatch` es, for the pipeline to store without a
record per run. A module whose format never names the machine its jobs ran on sets
``NAMES_SYSTEM = False``; one that must be given the file itself, not a pipe, sets
``READS_STREAM = False``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from perfpredict.errors import BadInputError

if TYPE_CHECKING:  # the records' dataclasses cost every ``--help`` about 3 ms to build
    from perfpredict.ingest.records import BatchItem, IngestOptions, ParsedItem

Parser = Callable[[Path, "IngestOptions"], Iterator["ParsedItem"]]
BatchParser = Callable[[Path, "IngestOptions"], Iterator["BatchItem"]]

#: format name -> module implementing it
FORMATS: dict[str, str] = {
    "csv": "perfpredict.ingest.csv_results",
    "sacct": "perfpredict.ingest.sacct",
    "sacct-json": "perfpredict.ingest.sacct_json",
    "jobcomp": "perfpredict.ingest.slurm_jobcomp",
    "swf": "perfpredict.ingest.swf",
    "pbs": "perfpredict.ingest.pbs",
    "lsf": "perfpredict.ingest.lsf",
    "sge": "perfpredict.ingest.grid_engine",
    "darshan": "perfpredict.ingest.darshan_logs",
}

#: The formats of scheduler accounting, jobs with what they asked for: every format but
#: Darshan's, whose logs describe a job's I/O.
JOB_FORMATS = tuple(name for name in FORMATS if name != "darshan")

#: Formats with records no job id names (benchmark rows), which the store knows by their
#: content, file and occurrence (:func:`perfpredict.store.writer._row_keys`).
CONTENT_KEYED_FORMATS = frozenset({"csv"})

#: Formats whose times are wall-clock text without a zone (sacct's Submit/Start/End, the
#: jobcomp log's, a CSV's ISO times), read in ``--timezone`` (UTC unless given): a dump
#: written in local time and read as UTC is hours off. The others give epoch seconds
#: (sacct's JSON, PBS's ctime/start/end, LSF, Grid Engine, SWF's UnixStartTime, Darshan),
#: which are right in any zone; where one job is read from both, the store keeps these
#: (:meth:`perfpredict.store.writer._FileIngest.same_jobs`).
WALL_CLOCK_FORMATS = frozenset({"sacct", "jobcomp", "csv"})

#: Formats whose record is a line of text (a sacct job's own row, its steps after it):
#: a record refused once parsed (no system, a text too long for the store) keeps that
#: line as its reject's raw text. A sacct --json job spans many lines, a Darshan log is
#: binary.
LINE_FORMATS = frozenset({"csv", "sacct", "jobcomp", "swf", "pbs", "lsf", "sge"})

#: Formats whose files the scheduler's daemon appends to a record at a time, each ended
#: by a newline, while they may be read: PBS's and Grid Engine's daily accounting files,
#: LSF's lsb.acct, Slurm's jobcomp file. A plain file of these whose last line has no
#: newline was read while that line was written: the ingest leaves it for the next one
#: (:func:`perfpredict.ingest.pipeline.ingest_file`), where read it was a job with the
#: values cut short (a walltime of 10 h as 1 s), which the whole line, read later, did
#: not correct (a stored job only gains fields it lacks). sacct's output and an SWF
#: trace are not: a command or a converter writes each once, and a real sacct dump
#: (slurm2sql's test data) ends its last job without a newline, which would be left
#: unread for good; nor is a CSV table, written once by a script, a spreadsheet or an
#: editor. A file of these that grows while it is read is caught as such
#: (:class:`~perfpredict.errors.ChangedWhileReadError`).
LIVE_LOG_FORMATS = frozenset({"jobcomp", "pbs", "lsf", "sge"})

#: Formats a command writes to a pipe a line at a time, ending each with a newline
#: (``sacct -P``). Such a stream that ends inside a line was cut (the command killed,
#: its ssh connection lost): read to its end, the cut line was a job with a value cut
#: short (JobName ``allocation`` stored as ``alloca``, which the whole dump, read
#: later, found stored and left so), and the jobs after it were missing without a
#: word. Such a stream is refused whole (:func:`perfpredict.ingest.pipeline.ingest_file`);
#: a file is read whole, newline or not (see :data:`LIVE_LOG_FORMATS`).
PIPED_COMMAND_FORMATS = frozenset({"sacct"})


def _module(fmt: str) -> ModuleType:
    try:
        module_name = FORMATS[fmt]
    except KeyError:
        raise BadInputError(
            f"unknown ingest format {fmt!r}; choose one of: {', '.join(FORMATS)}"
        ) from None
    return importlib.import_module(module_name)


def names_system(fmt: str) -> bool:
    """Whether records of ``fmt`` can name their system (a CSV column, sacct's Cluster, an
    SWF header). Where none can, ``--system`` is the only source, so its absence is one
    usage error for the file rather than a reject per record."""
    return bool(getattr(_module(fmt), "NAMES_SYSTEM", True))


def reads_stream(fmt: str) -> bool:
    """Whether ``fmt`` may be piped in (copied to a temporary file first): not a Darshan
    log, whose file name keys a log without a start time and is kept with its run."""
    return bool(getattr(_module(fmt), "READS_STREAM", True))


def get_parser(fmt: str) -> Parser:
    """The ``parse`` function for ``fmt``; unknown formats are a usage error."""
    parse: Parser = _module(fmt).parse
    return parse


def get_batch_parser(fmt: str) -> BatchParser:
    """``parse_batches`` for ``fmt`` where the module has it, else its ``parse``."""
    module = _module(fmt)
    parse: BatchParser = getattr(module, "parse_batches", module.parse)
    return parse


#: File name endings that say the format (after a ``.gz``).
_SUFFIXES = {".swf": "swf", ".json": "sacct-json", ".csv": "csv", ".psv": "sacct"}
_SWF_LINE = re.compile(r"^\s*-?\d+(?:\.\d+)?(?:\s+-?\d+(?:\.\d+)?){17}\s*$")
#: a PBS accounting record: ``MM/DD/YYYY HH:MM:SS;<record type>;<job id>;``
_PBS_LINE = re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Z];[^;]+;")
#: an LSF ``lsb.acct`` record: its quoted event name and version, then the event time
_LSF_LINE = re.compile(r'^"[A-Z_]+" "[\d.]+" \d+ ')
#: a Grid Engine ``accounting(5)`` record: ``:``-separated, submission, start and end
#: times (epoch seconds, or milliseconds in Univa's) as its 9th to 11th of 40 or more
#: fields, and cpu, mem and io as decimals as its 37th to 39th, which tell a record from
#: its rest after its first fields (:func:`~perfpredict.ingest.grid_engine.split_record`)
_SGE_LINE = re.compile(r"^(?:[^:]*:){8}\d+:\d+:\d+(?::[^:]*){25}(?::-?\d+\.\d+){3}(?::[^:]*)+$")
#: a batch job script's directive to its scheduler (Slurm, PBS, LSF, Grid Engine)
_DIRECTIVE_LINE = re.compile(r"^#(?:SBATCH|PBS|BSUB|\$)\s")
#: How far into a file a job script's directives are looked for: the schedulers read
#: them only before the first command, after the shebang and a few comments.
_DIRECTIVE_LINES = 100

#: A Darshan log's first 16 bytes: its format version NUL-padded to 8 bytes ("3.41"), then
#: the magic number 6567223 as a 64-bit integer, byte-swapped in logs of big-endian
#: machines (FORMATS.md section 9.1).
_DARSHAN_HEAD = re.compile(rb"\d\.\d\d\x00{4}(?:75d\x00{5}|\x00{5}d57)", re.DOTALL)


def is_darshan_log(path: Path) -> bool:
    """Whether ``path`` starts as a Darshan log does."""
    try:
        with path.open("rb") as fh:
            return _DARSHAN_HEAD.match(fh.read(16)) is not None
    except OSError:
        return False


def first_record(path: Path) -> tuple[int, str]:
    """The file's first line that is not blank or a ``#`` comment: its 1-based number,
    which a refusal of the file for its format names, and its text, stripped ((0, "")
    if none)."""
    from perfpredict.ingest._text.lines import numbered_lines

    return next(((line_no, text.strip()) for line_no, text in numbered_lines(path)
                 if text.strip() and not text.lstrip().startswith("#")), (0, ""))


#: How to give jobs to advise that a file does not hold as a scheduler's accounting: the
#: columns a CSV of them needs.
JOBS_CSV_FIX = ("write each job as a row of a CSV with the columns app, system, nodes and "
                "requested_walltime_s (as 'perfpredict ingest csv' takes them)")


def refuse_job_script(path: Path, options: IngestOptions) -> None:
    """Refuse ``path`` where it is a batch job script (a ``#!`` first line, or an
    ``#SBATCH``, ``#PBS``, ``#BSUB`` or ``#$`` directive among its first lines), naming
    the line that says so: perfpredict reads jobs from scheduler accounting or a CSV, not
    from scripts, whose directives sbatch, qsub and bsub each read by their own rules.
    Read as jobs, a script's comment lines made it look like no format ("cannot tell the
    format") or, with a comma in a command, like a CSV without the columns it needs; read
    as each format, it was a bad first record with that format's fix. The fix is for the
    reading ``options`` are for: runs to ingest (a ``runtime_s`` column, or the
    scheduler's accounting once the jobs ran) or, without ``require_runtime``, jobs to
    advise (their ``requested_walltime_s``); ``options.read_as`` names how a CSV is read.
    A Darshan log is binary and never a script: its bytes are not read as lines."""
    from perfpredict.ingest._text.lines import numbered_lines

    if is_darshan_log(path):
        return
    found = None
    try:
        for line_no, text in numbered_lines(path):
            if line_no > _DIRECTIVE_LINES:
                break
            if _DIRECTIVE_LINE.match(text.strip()):
                found = (line_no, text.strip())
                break
            if line_no == 1 and text.startswith("#!"):
                found = (line_no, text.strip())
    except (OSError, BadInputError):
        return  # the parser says what is wrong with a file it cannot read
    if found is None:
        return
    if options.require_runtime:
        fix = ("ingest the scheduler's accounting of the jobs once they ran (sacct's "
               "output, or the PBS, LSF or Grid Engine log), or write each run as a row of "
               "a CSV with the columns app, system, nodes and runtime_s (the seconds it "
               "ran)")
    else:
        fix = JOBS_CSV_FIX
    raise BadInputError(f"the file is a batch job script ({found[1]!r}), not a log of jobs: "
                        f"perfpredict reads no job scripts; {fix} and read that with "
                        f"{options.read_as('csv')}", path=path, line_no=found[0])


def other_format_fix(path: Path, fmt: str, reason: str,
                     read_as: Callable[[str], str]) -> str | None:
    """Why a file that ``fmt``'s parser refused before any good record was refused,
    where its first record is another scheduler format's (a Grid Engine file read as
    PBS): ``the file looks like Grid Engine (sge), not pbs; read it with 'perfpredict
    ingest sge'`` (``read_as`` names the reading, as the parsers' own fixes do), in
    place of the parser's reason, whose fix is for a file of its own format (SWF's
    extra fields for a PBS log's 23 words). None where the content says no other
    format, or the parser's ``reason`` names that reading already (sacct's parser tells
    jobcomp and JSON itself). Commas are in too many lines of other logs to say a file
    is CSV, so CSV is the answer only where the file's name says so too (``runs.csv``
    read as SWF)."""
    from perfpredict.ingest.fields import looks_binary

    if fmt != "darshan" and is_darshan_log(path):
        # read by 'ingest darshan' alone, whatever command refused it (advise walltime's
        # --input-format has no darshan); its bytes read as a jobs file said "damaged"
        return None if "ingest darshan" in reason else (
            f"the file is a Darshan I/O log, not {fmt}; read it with 'perfpredict ingest "
            "darshan'")
    if rotated_tail(path, fmt):
        # its line 1 is the rest of a record cut by the log's rotation, whose lines
        # after it are of fmt (a PBS record's rest ";E;6;user=..." was said to be SWF's)
        return None
    try:
        _, first = first_record(path)
    except (OSError, BadInputError):
        return None
    other = None if looks_binary(first) else _format_of_line(first)  # '|' in a Darshan log
    if other == "csv" and not path.name.lower().removesuffix(".gz").endswith(".csv"):
        other = None
    if other in (None, fmt) or read_as(other) in reason:
        return None
    return (f"the file looks like {_kind(other)} ({other}), not {fmt}; read it with "
            f"{read_as(other)}")


def _kind(fmt: str) -> str:
    """What ``fmt``'s files are, in a few words ("PBS / Torque / PBS Pro accounting
    logs")."""
    return str(_module(fmt).DESCRIPTION.split(" (")[0].split(",")[0])


def rotated_tail(path: Path, fmt: str) -> str | None:
    """Why line 1 of ``path``, a scheduler's log of ``fmt`` (:data:`LIVE_LOG_FORMATS`),
    is left unread, where it is the end of a record whose start the rotated file holds:
    logrotate's ``copytruncate`` copies the log and empties it, and a record the
    scheduler was writing meanwhile is cut in two, its start the copy's last line, its
    rest the first line of the log, which the daemon goes on appending to. Refused, that
    line failed the nightly ingest of the log every time, as only ``--on-error skip``
    got past it.

    None where line 1 is not such a fragment: it starts as a record of ``fmt`` does (a
    damaged record, refused at its line) or of another scheduler's log (a line no
    rotation cuts so, refused as that format's), or the next line that is not blank does
    not start as a record of ``fmt`` (a file of another format, whose first record says
    which, or one damaged from its start), or there is no next line to tell. A fragment
    may well look like the start of an SWF, sacct or CSV line (a PBS record's rest
    ";E;6;user=...", a '|' or ',' in a job name), so those say nothing here."""
    from perfpredict.ingest._text.lines import numbered_lines

    if fmt not in LIVE_LOG_FORMATS:
        return None
    try:
        lines = ((line_no, text.strip()) for line_no, text in numbered_lines(path)
                 if text.strip())
        first, after = next(lines, (0, "")), next(lines, (0, ""))
    except (OSError, BadInputError):
        return None  # the parser says what is wrong with a file it cannot read
    if (first[0] != 1 or _format_of_line(first[1]) in LIVE_LOG_FORMATS
            or _format_of_line(after[1]) != fmt):
        return None
    return (f"line 1 is not a record of {_kind(fmt)}, where line {after[0]} and those after "
            "it are: it is the rest of a record the rotated file holds (logrotate's "
            "copytruncate emptied the log while that record was written), left unread")


#: The name logrotate gives a log's rotated copy: ``accounting.1`` or, with ``dateext``,
#: ``accounting-20241201`` (its default ``-%Y%m%d``, or ``-%Y%m%d%H`` hourly).
_ROTATED_NAME = re.compile(r"(?P<log>.+?)(?:\.\d+|-\d{8}(?:\d{2})?)")


def rotated_copy_of(path: Path) -> Path | None:
    """The log beside ``path`` of which ``path`` is the rotated copy, by logrotate's
    naming (``accounting.1`` beside ``accounting``), else None. Such a copy ends inside
    a line where ``copytruncate`` copied it while a record was written: it will not
    grow, and the rest of that record starts the log (:func:`rotated_tail`), so that
    line is not left "for the next ingest" of the copy, as a live log's is."""
    match = _ROTATED_NAME.fullmatch(path.name)
    if match is None:
        return None
    log = path.with_name(match["log"])
    return log if log.is_file() else None


def _format_of_line(line: str) -> str | None:
    """The format a jobs file's first record says it is in, if any."""
    if line.startswith(";") or _SWF_LINE.match(line):
        return "swf"
    if line.startswith("JobId="):
        return "jobcomp"
    if _PBS_LINE.match(line):
        return "pbs"
    if _LSF_LINE.match(line):
        return "lsf"
    if _SGE_LINE.match(line):
        return "sge"
    if "|" in line:
        return "sacct"
    if line.startswith("{"):
        return "sacct-json"
    return "csv" if "," in line else None


def sniff_format(path: Path, choices: tuple[str, ...] = tuple(FORMATS),
                 option: str = "--input-format") -> str:
    """The format of a jobs file among ``choices``, from its name (``.swf``, ``.json``,
    ``.csv``, ``.psv``, each also gzipped) or else its first line that is not blank or a
    ``#`` comment (Grid Engine's accounting file opens with ``# Version:`` lines): ``;``
    comments or 18 numbers are SWF, ``JobId=`` Slurm's jobcomp log, a dated ``;``
    record PBS's accounting, a quoted event and version LSF's ``lsb.acct``, 40 or more
    ``:``-separated fields with three times Grid Engine's accounting, a ``|``-separated
    line sacct, ``{`` sacct's JSON, commas CSV.

    A file that none of these describe is bad input asking for the format with
    ``option``, the one that names it (``advise walltime --input-format``), and its
    values: "pass it by name" named neither.
    """
    name = path.name.lower().removesuffix(".gz")
    by_name = next((fmt for suffix, fmt in _SUFFIXES.items() if name.endswith(suffix)), None)
    if by_name in choices:
        return by_name
    by_content = _format_of_line(first_record(path)[1])
    if by_content in choices:
        return by_content
    values = f"{', '.join(choices[:-1])} or {choices[-1]}" if len(choices) > 1 else choices[0]
    raise BadInputError(f"cannot tell the format of the file from its name or first line; "
                        f"pass {option} {values}", path=path)
