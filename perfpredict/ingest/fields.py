"""Field readers shared by the scheduler-accounting parsers (sacct, sacct --json, PBS, LSF,
Darshan): durations, memory sizes, TRES lists, local timestamps, counts and job names.

Each reader normalises units at the boundary (seconds, bytes, epoch seconds UTC) and raises
:class:`FieldError` with a sentence a user can act on; the parser turns it into a
:class:`~perfpredict.ingest.records.BadRecord` for the line, so one odd value never costs
the file. Bounds are checked here because the store's integer columns are 32-bit on
PostgreSQL, and an absurd value (a flipped byte, a sentinel) is better rejected with its
line number than stored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from datetime import timezone as dt_timezone
from zoneinfo import ZoneInfo

from perfpredict.counts import MAX_COUNT
from perfpredict.durations import clock_seconds
from perfpredict.ingest.records import IngestOptions, ingest_command

#: Durations beyond a century are corrupt values, not jobs.
MAX_DURATION_S = 100 * 365 * 86400.0
#: The shortest runtime a row may give: a microsecond, below a clock's resolution. A
#: series of 1e-300 s runs trained into every application's correction (log errors of
#: hundreds), and estimates of other codes came out at ideal scaling.
MIN_RUNTIME_S = 1e-6
#: Epoch seconds accepted as real timestamps: 1970-01-01 (exclusive) .. 2100-01-01.
MAX_EPOCH_S = 4_102_444_800.0

#: Slurm writes these where a time limit is absent or inherited.
NO_LIMIT = {"UNLIMITED", "PARTITION_LIMIT", "INVALID", "NONE", ""}
#: Slurm writes these where a timestamp is not set.
NO_TIME = {"UNKNOWN", "NONE", ""}

# 231092K, 85399.46K, 0.31M, 2M, 0, 1993mb, 15240kb, 12.27M, 32G
_MEMORY = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[KMGTPkmgtp]?)[Bb]?$")
_MEMORY_FACTOR = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_LOCAL_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
#: The zone a time that names none is read in unless ``--timezone`` says otherwise.
UTC = ZoneInfo("UTC")


#: How tables (CSV) spell a missing number or time.
MISSING = frozenset({"", "na", "nan", "none", "null", "unknown", "-"})


class FieldError(ValueError):
    """One field of a record cannot be read; the message says which and how to fix it."""


#: What other tables call the columns a perfpredict CSV header most needs (benchmark
#: results for ``ingest csv``, queries for ``estimate --input``). Named in a header's
#: refusal as renames to make, never read in their place: a guess that took "time" for
#: seconds when it held minutes would store wrong runtimes without a word.
OTHER_NAMES = {
    "app": ("application", "code", "benchmark", "program", "app_name"),
    "runtime_s": ("runtime", "time", "time_s", "elapsed", "elapsed_s", "walltime",
                  "wall_time", "wallclock", "duration", "seconds"),
    "nodes": ("node", "num_nodes", "nnodes", "n_nodes", "node_count"),
    "total_ranks": ("ranks", "nranks", "n_ranks", "mpi_ranks", "nprocs", "np", "processes",
                    "cores", "ncores", "n_cores", "num_cores", "core_count"),
    "system": ("machine", "cluster", "platform", "computer"),
    "problem_size": ("input", "problem", "size", "case", "dataset"),
}


def renames(header: Sequence[str], wanted: Sequence[str] = tuple(OTHER_NAMES)) -> str | None:
    """The renames that would give ``header`` those of perfpredict's column names
    ``wanted`` that its columns give another name (:data:`OTHER_NAMES`, any case), as a
    fix to print; None where none does.

    >>> renames(["Application", "nodes", "elapsed"])
    'rename Application to app, elapsed to runtime_s in the header (runtime_s in seconds)'
    """
    found: dict[str, str] = {}
    for name in wanted:
        if name in header:
            continue
        column = next((c for c in header if _other_name_of(c, name)), None)
        if column is not None:
            found[name] = column
    converts = [] if "runtime_s" not in wanted or "runtime_s" in header else [
        f"convert {column} ({unit}) to seconds in a column runtime_s"
        for column in header if (unit := _runtime_in_other_unit(column))][:1]
    if not found:
        return converts[0] if converts else None
    units = [unit for name, unit in _UNITS.items() if name in found]
    return "; ".join([
        f"rename {', '.join(f'{c} to {n}' for n, c in found.items())} in the header"
        + (f" ({'; '.join(units)})" if units else ""), *converts])


def _other_name_of(column: str, name: str) -> bool:
    """Whether ``column`` is another table's name for perfpredict's column ``name``, in
    any case and spelled with spaces, brackets or hyphens as a spreadsheet heads it
    (``Num Nodes``, ``Wall-time``), a runtime also with its unit when that is seconds
    (``Runtime (s)``, ``Elapsed [sec]``).

    >>> _other_name_of("Runtime (s)", "runtime_s"), _other_name_of("Num Nodes", "nodes")
    (True, True)
    """
    words = re.findall(r"[a-z0-9]+", column.lower())
    if "_".join(words) in (name, *OTHER_NAMES[name]):
        return True
    return (name == "runtime_s" and len(words) >= 2 and words[-1] in _SECONDS
            and "_".join(words[:-1]) in OTHER_NAMES[name])


#: Suffixes that say a runtime column is in seconds ("Runtime (s)", "elapsed_sec").
_SECONDS = {"s", "sec", "secs", "second", "seconds"}

#: Suffixes that give a runtime column another unit than seconds ("time_min").
_TIME_UNITS = {"min": "minutes", "mins": "minutes", "minutes": "minutes", "m": "minutes",
               "h": "hours", "hr": "hours", "hrs": "hours", "hours": "hours",
               "ms": "milliseconds"}


def _runtime_in_other_unit(column: str) -> str | None:
    """The unit of a runtime column named in minutes, hours or milliseconds
    (``time_min``, ``Runtime (h)``, ``elapsed_ms``), which no rename alone can fix.

    >>> _runtime_in_other_unit("Runtime (h)")
    'hours'
    """
    words = re.findall(r"[a-z]+", column.lower())
    runtime_words = {"runtime", "time", "elapsed", "walltime", "wallclock", "duration"}
    if len(words) < 2 or not runtime_words & set(words[:-1]):
        return None
    return _TIME_UNITS.get(words[-1])


#: What a renamed column must hold, said with the rename: the name alone does not say it.
_UNITS = {"runtime_s": "runtime_s in seconds",
          "total_ranks": "total_ranks counts MPI ranks: cores / threads_per_rank"}


#: Separators spreadsheets and schedulers write in place of commas. Such a table is
#: refused, never read with a guessed separator: a ';' table usually has decimal commas.
_OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "'|'"}


def other_separator(header: Sequence[str],
                    read_as: Callable[[str], str] = ingest_command) -> str | None:
    """The fix for a header read as one column because its columns are separated by
    something else than commas; None where that is not what is wrong, as in a header of
    one column that names no separator (``nodes`` alone lacks ``app``; it was said to be
    separated by semicolons). ``read_as`` names how to read a sacct dump
    (:attr:`IngestOptions.read_as`).

    >>> other_separator(["app;system;nodes;runtime_s"])[:51]
    'its columns are separated by semicolons, not commas'
    >>> other_separator(["nodes"]) is None
    True
    """
    if len(header) != 1:
        return None
    known = {name for column, others in OTHER_NAMES.items() for name in (column, *others)}
    known |= {"jobid", "jobidraw", "state"}  # sacct -P's header
    found = next((name for separator, name in _OTHER_SEPARATORS.items()
                  if separator in header[0]
                  and known & {part.strip().lower() for part in header[0].split(separator)}),
                 None)
    if found is None:  # not a header at all (a binary file, another format)
        return None
    if found == "'|'":  # sacct -P writes such tables
        return ("its columns are separated by '|', not commas: for sacct -P output use "
                f"{read_as('sacct')}")
    return (f"its columns are separated by {found}, not commas; save the table as "
            "comma-separated values with '.' as the decimal point")


#: What a text format's first line says when the file is binary (a Darshan log, a
#: compressed file that is not gzip), instead of echoing its bytes as column names.
BINARY_FILE = ("the file is binary, not text: for a Darshan log use 'perfpredict ingest "
               "darshan'; a file compressed otherwise than with gzip, decompress first")


def unreadable_row(exc: Exception) -> str:
    """What a row the ``csv`` module refuses (``csv.Error``: a stray carriage return or
    NUL byte, a cell past its field limit) is, in every table read with it."""
    return f"not a readable CSV row ({exc}); the line is damaged"


def looks_binary(text: str) -> bool:
    """Whether a line read as text is binary: a NUL, or more than a tenth control
    characters (tabs aside) or bytes that are not UTF-8."""
    if "\x00" in text:
        return True
    odd = sum(1 for ch in text if (ch < " " and ch != "\t") or ch == "\ufffd")
    return odd > max(len(text) // 10, 2)


def header_fix(header: Sequence[str], wanted: Sequence[str], otherwise: str,
               read_as: Callable[[str], str] = ingest_command) -> str:
    """How to fix a table's header that lacks columns ``wanted`` (``ingest csv``'s, or a
    query file's): another separator than commas, else the renames of columns that go
    by other names, else ``otherwise``."""
    return other_separator(header, read_as) or renames(header, wanted) or otherwise


def named_twice(names: Sequence[str], given_by: str = "the header") -> str | None:
    """The reason to refuse column names (``given_by`` says where they came from) that
    name a column more than once (None: they do not), for sacct's and the CSV readers:
    which of two same-named columns holds the value is anyone's guess, and the column
    and record readers of sacct guessed differently. Unnamed columns (trailing
    delimiters) hold nothing that is read."""
    twice = sorted({name for name in names if name and names.count(name) > 1})
    if not twice:
        return None
    return f"{given_by} names {', '.join(twice)} more than once; keep one column of each"


def plain_float(text: str) -> float:
    """``float(text)`` for numbers as tables write them: Python's own literal syntax
    with digit-group underscores (``1_000``) is not one, as no scheduler or spreadsheet
    writes it, and reading it so turned a Slurm array job's id ``4103947_100`` into the
    number 4103947100 (ValueError, as from ``float``)."""
    if "_" in text:
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def number(name: str, text: str, *, missing: frozenset[str] = MISSING) -> float | None:
    """A finite number from text (``name`` says where, for the message), None when the
    text is one of ``missing``. The one reader of numbers written as text, for the
    parsers of CSV and SWF and for whatever else reads numbers from a table. "-0" reads
    as 0, as the column readers read it (:mod:`perfpredict.ingest.field_columns`): a
    stored -0.0 would differ from their 0.0 in the JSON of extra fields.

    >>> number("column 'nodes'", "4"), number("column 'nodes'", "NA"), number("x", "-0")
    (4.0, None, 0.0)
    """
    if text.strip().lower() in missing:
        return None
    try:
        value = plain_float(text)
    except ValueError:
        raise FieldError(f"{name} must be a number, got {text!r}{_number_hint(text)}") from None
    if not math.isfinite(value):
        raise FieldError(f"{name} must be finite, got {text!r}")
    return value + 0.0  # -0.0 + 0.0 is 0.0


#: Seconds per unit of a duration written with its unit (``1.5h``, ``90 min``). A bare
#: ``m`` is left out: minutes in a runtime, mebibytes in a size.
_SECONDS_PER_UNIT = {"ms": 0.001, "s": 1, "sec": 1, "secs": 1, "seconds": 1, "min": 60,
                     "mins": 60, "minutes": 60, "h": 3600, "hr": 3600, "hrs": 3600,
                     "hours": 3600, "d": 86400, "days": 86400}
_WITH_UNIT = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[A-Za-z]+)\s*$")


def _number_hint(text: str) -> str:
    """How a table's number that is not one was probably meant, as the fix to write: a
    clock duration (01:30:00, as sacct and spreadsheets write runtimes) or one with its
    unit (1.5h) in seconds, a size with its unit (1.5G, 1024-based as sacct's) in bytes,
    or a number with thousands separators or a decimal comma. Only said, never read so:
    a decimal comma and a thousands separator look alike (1,234), and 1.5G might as well
    be a typo."""
    try:
        seconds = duration_s("", text)
    except FieldError:
        seconds = None
    if seconds is not None and ":" in text:
        return f"; durations are written in seconds ({text.strip()} is {seconds:g})"
    if (with_unit := _WITH_UNIT.match(text)) and with_unit["unit"] != "m":
        if (per_unit_s := _SECONDS_PER_UNIT.get(with_unit["unit"].lower())) is not None:
            seconds = float(with_unit["number"]) * per_unit_s
            return f"; durations are written in seconds ({text.strip()} is {seconds:g})"
        try:
            size = memory_bytes("", text) if _MEMORY.match(text.strip()) else None
        except FieldError:  # too large to be a size: no number to say
            size = None
        if size is not None:
            return f"; sizes are written in bytes ({text.strip()} is {size:.0f})"
    if re.fullmatch(r"\s*[-+]?[\d.,]*\d,[\d.,]*\s*", text):
        return "; write numbers without thousands separators, with '.' as the decimal point"
    return ""


def whole_number(name: str, value: float | None, *, max_value: int | None = None) -> int | None:
    """``value`` as an int when it is a whole number (at most ``max_value`` in size)."""
    if value is None:
        return None
    if value != int(value):
        raise FieldError(f"{name} must be a whole number, got {value:g}")
    if max_value is not None and abs(value) > max_value:
        raise FieldError(f"{name} is out of range (at most {max_value}), got {value:g}")
    return int(value)


def timestamp_s(name: str, text: str, zone: ZoneInfo = UTC) -> float | None:
    """Epoch seconds from epoch seconds or an ISO 8601 time (read in ``zone`` when it
    names none, as :func:`zoned_epoch_s` reads it), between 1970 and 2100; a missing
    value is None."""
    if text.strip().lower() in MISSING:
        return None
    try:
        value = plain_float(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise FieldError(f"{name} must be ISO 8601 (2024-05-01T12:00:00) or epoch "
                             f"seconds, got {text!r}") from None
        value = (moment.timestamp() if moment.tzinfo is not None
                 else zoned_epoch_s(name, text, moment, zone))
    if not (math.isfinite(value) and 0 < value <= MAX_EPOCH_S):
        raise FieldError(f"{name} is not a time between 1970 and 2100, got {text!r}")
    return value


def duration_s(name: str, text: str) -> float | None:
    """Seconds from Slurm/PBS ``[DD-[HH:]]MM:SS[.mmm]``
    (:func:`~perfpredict.durations.clock_seconds`); no limit (``UNLIMITED``,
    ``Partition_Limit``, empty) is None.

    >>> duration_s("Elapsed", "2-22:03:04"), duration_s("TotalCPU", "00:15.057")
    (252184.0, 15.057)
    >>> duration_s("Timelimit", "UNLIMITED") is None
    True
    """
    text = text.strip()
    if text.upper() in NO_LIMIT:
        return None
    try:
        total = clock_seconds(text)
    except ValueError as exc:
        raise FieldError(f"{name} {text!r} {exc}") from None
    return check_duration_s(name, total)


def check_duration_s(name: str, value: float) -> float:
    """``value`` if it is a plausible duration in seconds, else a :class:`FieldError`."""
    if not math.isfinite(value) or value < 0 or value > MAX_DURATION_S:
        raise FieldError(f"{name} of {value:g} s is not a plausible duration "
                         "(negative, infinite or over a century); the record is damaged")
    return value


def memory_bytes(name: str, text: str) -> float | None:
    """Bytes from a size with an optional 1024-based suffix (``231092K``, ``0.31M``,
    ``1993mb``, ``15240kb``); a bare number is bytes, empty is None.

    >>> memory_bytes("MaxRSS", "231092K")
    236638208.0
    """
    text = text.strip()
    if not text:
        return None
    match = _MEMORY.match(text)
    if match is None:
        raise FieldError(f"{name} {text!r} is not a size like 231092K, 0.31M or 1993mb")
    value = float(match["number"]) * _MEMORY_FACTOR[match["unit"].upper()]
    if not math.isfinite(value):
        raise FieldError(f"{name} {text!r} is too large to be a real size")
    return value


def is_digits(text: str) -> bool:
    """Only ASCII digits: ``str.isdigit`` also accepts "¹", which ``int`` refuses."""
    return text.isascii() and text.isdigit()


def count(name: str, text: str | int | float | None, *, zero_is_none: bool = False) -> int | None:
    """A non-negative whole number that fits the store; empty (or 0 with ``zero_is_none``,
    as schedulers write for "not allocated") is None."""
    if text is None:
        return None
    if isinstance(text, str):
        text = text.strip()
        if not text:
            return None
        if not is_digits(text):
            if text.startswith("-") and is_digits(text[1:]):
                raise FieldError(f"{name} {text!r} is negative; a count is zero or more")
            raise FieldError(f"{name} {text!r} is not a whole number")
    elif isinstance(text, float) and not text.is_integer():
        raise FieldError(f"{name} {text!r} is not a whole number")
    value = int(text)
    if value < 0 or value > MAX_COUNT:
        raise FieldError(f"{name} {value} is out of range (0 .. {MAX_COUNT})")
    return None if zero_is_none and value == 0 else value


def epoch_s(name: str, value: float | int | None) -> float | None:
    """Epoch seconds from a scheduler's integer timestamp; 0 or None ("not set") is None."""
    if value is None or value == 0:
        return None
    value = float(value)
    if not math.isfinite(value) or value < 0 or value > MAX_EPOCH_S:
        raise FieldError(f"{name} {value:g} is not a timestamp between 1970 and 2100")
    return value


def local_epoch_s(name: str, text: str, zone: ZoneInfo, *, later: bool = False,
                  ) -> float | None:
    """Epoch seconds UTC from sacct's local ``YYYY-MM-DDTHH:MM:SS`` read in ``zone``, or
    from plain epoch seconds (``SLURM_TIME_FORMAT=%s``), which are UTC whatever ``zone``
    says; ``Unknown``/``None``/empty is None.

    >>> local_epoch_s("End", "1690964225", ZoneInfo("Europe/Berlin"))
    1690964225.0

    A wall-clock time that occurs twice when clocks go back is read as its first
    occurrence, or its second with ``later`` (an End that would otherwise precede its
    Start, :func:`perfpredict.ingest.sacct.rows.times`); export with ``TZ=UTC sacct ...``
    to avoid the ambiguity. A time that never occurs in ``zone`` (skipped when clocks
    went forward) is a :class:`FieldError`: a clock in that zone cannot have written it,
    so ``--timezone`` is not the zone of the log, and every time read in it would be off.
    """
    text = text.strip()
    if text.upper() in NO_TIME:
        return None
    if is_digits(text):  # SLURM_TIME_FORMAT=%s (jobstats' export): epoch seconds, UTC
        return epoch_s(name, int(text))
    if not _LOCAL_TIME.match(text):
        raise FieldError(f"{name} {text!r} is not a time like 2024-05-01T12:00:00 "
                         "(was SLURM_TIME_FORMAT set when exporting?)")
    try:
        wall_clock = datetime.fromisoformat(text)
    except ValueError:
        raise FieldError(f"{name} {text!r} is not a valid calendar date and time") from None
    return epoch_s(name, zoned_epoch_s(name, text, wall_clock, zone, later=later))


def zoned_epoch_s(name: str, text: str, wall_clock: datetime, zone: ZoneInfo, *,
                  later: bool = False) -> float:
    """Epoch seconds of the wall-clock time ``wall_clock`` (read from ``text``) in
    ``zone``: its first occurrence where clocks went back over it (its second with
    ``later``), and a :class:`FieldError` where they went forward over it, or where it is
    in UTC outside the calendar (year 9999 read in New York, year 1 in Berlin: a damaged
    line, which was an internal error)."""
    moment = wall_clock.replace(tzinfo=zone, fold=int(later))
    try:
        in_utc = moment.astimezone(dt_timezone.utc)
    except OverflowError:
        raise FieldError(f"{name} {text!r} is not a time between 1970 and 2100") from None
    if in_utc.astimezone(zone).replace(tzinfo=None) != wall_clock:
        raise FieldError(f"{name} {text!r} does not exist in {zone.key} (clocks went forward "
                         "over it), so the log was not written in that zone: pass the zone "
                         "of the machine that wrote it with --timezone")
    return moment.timestamp()


def tres(text: str) -> dict[str, str]:
    """A TRES list ``billing=256,cpu=256,mem=3000M,node=32,gres/gpu=2`` as a dict;
    entries without ``=`` are ignored (they carry nothing we can use)."""
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs}


def tres_value(text: str, key: str) -> str | None:
    """``tres(text).get(key)`` without building the dict: sacct carries two TRES lists
    per step row and the ingest of a 1M-line dump spent a sixth of its time on them.

    >>> tres_value("cpu=00:57:00,energy=0,fs/disk=29671118931", "fs/disk")
    '29671118931'
    """
    if key not in text:
        return None
    return tres(text).get(key)


def gpus_from_tres(counts: Mapping[str, str | float]) -> int | None:
    """GPUs of an allocation: ``gres/gpu`` when present, else the sum of typed
    ``gres/gpu:<type>`` entries; Slurm lists both for typed GPUs, so never add them."""
    if "gres/gpu" in counts:
        return count("AllocTRES gres/gpu", counts["gres/gpu"])
    typed = [count(f"AllocTRES {key}", value) or 0
             for key, value in counts.items() if key.startswith("gres/gpu:")]
    return sum(typed) if typed else None


def app_name(job_name: str, comment: str | None, options: IngestOptions) -> str:
    """The application a job ran, from ``options.app_from``: ``jobname`` (default),
    ``comment`` (falls back to the job name when empty) or ``regex:PATTERN`` (its first
    group, or whole match, on the job name; no match keeps the job name)."""
    name = job_name.strip()
    source = options.app_from
    if source == "comment" and comment and comment.strip():
        name = comment.strip()
    elif source.startswith("regex:"):
        match = re.compile(source[len("regex:"):]).search(name)
        if match is not None:
            name = (match.group(1) if match.re.groups else match.group(0)) or name
    return name or "unnamed"


#: Slurm job states of a finished job (sacct(1) "JOB STATE CODES").
SLURM_FINISHED_STATES = frozenset({
    "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
    "BOOT_FAIL", "DEADLINE", "REVOKED",
})
#: States of a job that has not finished: not a run yet, so skipped without complaint.
SLURM_UNFINISHED_STATES = frozenset({"PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED"})


def slurm_state(text: str, *, keep_unfinished: bool = False) -> str | None:
    """The base state of a Slurm job (``CANCELLED by 102216`` is ``CANCELLED``), or None
    for a job still pending or running, which is not a run yet (its state all the same
    with ``keep_unfinished``: jobs to advise a walltime for have not run).

    An unknown state is a :class:`FieldError`: guessing whether a job finished would put
    half-run jobs among the measurements.
    """
    words = text.split()
    state = words[0].upper().rstrip("+") if words else ""
    if state in SLURM_FINISHED_STATES:
        return state
    if state in SLURM_UNFINISHED_STATES:
        return state if keep_unfinished else None
    raise FieldError(
        f"unknown job state {text.strip()!r}; expected one of "
        f"{', '.join(sorted(SLURM_FINISHED_STATES | SLURM_UNFINISHED_STATES))}"
    )


def exit_code(return_code: int | None, signal: int | None) -> int | None:
    """One exit code as a shell reports it: the return code, or 128 + the signal that
    killed the job (so a killed job never looks like a success)."""
    if signal:
        if signal > 255:
            raise FieldError(f"signal {signal} is out of range (signals are below 256)")
        return 128 + signal
    return return_code
