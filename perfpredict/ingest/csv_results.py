"""Benchmark results as CSV: one row per run.

Columns (DESIGN.md contract): app, system, problem_size, nodes, ranks_per_node,
threads_per_rank, runtime_s; optional variant, io_bytes, total_ranks (stands in for nodes
when the node count is unknown, as in RELeARN), job_id, user, submit_time,
requested_walltime_s and every other column of the store's run table (so ``runs export``
ingests back unchanged), and ``run_key``, the identity ``runs export`` writes, by which a
row already stored (from this export or from the log it came from) is not stored again.
Unknown columns are kept as extra fields, never rejected (``darshan``, a Darshan log's
details as ``runs export`` writes them, is read back as the JSON it is; a row of a log
stored alone is attached to its job as the log is). Numbers and times may be
missing (empty, NA, none, unknown, -); a time that names no zone is read in
``--timezone`` (UTC unless given). Text columns are missing only when empty, since
"unknown" is an application or user name as good as any (SWF logs have one). A runtime
of 0 or none, and a missing scale (nodes and total_ranks), are accepted only on a row
with a job_id or a state: a scheduler job that never ran or whose log did not say for
how long, as ``runs export`` writes it.
"""

from __future__ import annotations

import ast
import csv
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from perfpredict.ingest._text.lines import numbered_lines
from perfpredict.ingest.fields import (
    BINARY_FILE,
    MAX_COUNT,
    MAX_DURATION_S,
    MIN_RUNTIME_S,
    OTHER_NAMES,
    FieldError,
    header_fix,
    looks_binary,
    named_twice,
    number,
    plain_float,
    timestamp_s,
    unreadable_row,
    whole_number,
)
from perfpredict.ingest.records import (
    DARSHAN_DETAILS,
    DARSHAN_LOG_MARK,
    RUN_KEY,
    BadRecord,
    IngestOptions,
    ParsedItem,
    RunRecord,
    darshan_log_key,
    job_key,
)
from perfpredict.problem_size import problem_size_number

DESCRIPTION = "benchmark results, one run per row (app, system, nodes, runtime_s, ...)"

_INT_FIELDS = ("nodes", "threads_per_rank", "total_ranks", "gpus", "exit_code")
_FLOAT_FIELDS = (
    "ranks_per_node", "io_bytes", "runtime_s", "requested_walltime_s", "max_rss_bytes",
    "problem_size_num",
)
_TEXT_FIELDS = ("app", "system", "problem_size", "variant", "state", "user", "account", "partition",
                "job_id")
_TIME_FIELDS = {"submit_time": "submit_epoch_s", "start_time": "start_epoch_s",
                "end_time": "end_epoch_s"}
_KNOWN = {*_INT_FIELDS, *_FLOAT_FIELDS, *_TEXT_FIELDS, *_TIME_FIELDS, "censored", RUN_KEY}


def _typed(text: str, name: str) -> Any:
    """Extra fields as numbers where they are numbers, so JSON exports and the predictor
    (data-staging seconds, batch sizes) see them as such; as written where the number
    would not give the text back (a version "3.10" was stored as 3.1, and exported so);
    a Darshan log's details as the object or list ``runs export`` writes as JSON (only
    those: a benchmark row's content key hashes its extra fields, and any other text
    that looks like JSON is kept as it was stored before)."""
    if name == DARSHAN_DETAILS and text[:1] in ("{", "["):
        try:
            found = json.loads(text)
        except ValueError:
            try:  # an export before 0005 wrote them as Python literals
                found = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return text
        return found if isinstance(found, (dict, list)) else text
    if len(text) > 1 and text.startswith("0") and text[1].isdigit():
        return text  # "007" is a label, not a number
    try:
        value = plain_float(text)
    except ValueError:
        return text  # "4103947_100", a Slurm array task, too
    if value.is_integer() and not any(c in text for c in ".eE"):
        return int(text)
    if not math.isfinite(value) or ("e" not in text.lower() and repr(value) != text.strip()):
        return text  # "3.10", a version, is not 3.1; nor "1.500" 1.5, as written
    return value


def _field_count_fix(cells: Sequence[str], n_columns: int) -> str:
    """Why a row with another number of fields than the header's is refused, with the
    fix that fits it: a label's unquoted comma gives more, a value left out (or a note
    written as ``# ...``, which a CSV table has no syntax for) fewer."""
    said = f"expected {n_columns} fields as in the header, found {len(cells)}; "
    if cells[0].lstrip().startswith("#"):
        return said + "a CSV table holds no comments: delete the line"
    if len(cells) > n_columns:
        return said + "quote fields that contain commas"
    return said + "write an empty field between two commas where a value is unknown"


def _record(row: dict[str, str], line_no: int, require_runtime: bool, zone: ZoneInfo,
            ) -> RunRecord:
    values: dict[str, Any] = {}
    for name in _INT_FIELDS:
        if name in row:
            values[name] = whole_number(f"column {name!r}", number(f"column {name!r}", row[name]),
                                        max_value=MAX_COUNT)  # INTEGER is 32-bit on PostgreSQL
    for name in _FLOAT_FIELDS:
        if name in row:
            values[name] = number(f"column {name!r}", row[name])
    for name in _TEXT_FIELDS:  # "unknown" is a name here (SWF's application, a user)
        values[name] = (row.get(name) or "").strip() or None
    for name, column in _TIME_FIELDS.items():
        if name in row:
            values[column] = timestamp_s(f"column {name!r}", row[name], zone)
    if "censored" in row:
        values["censored"] = row["censored"].strip().lower() in {"1", "true", "yes"}

    if not values.get("app"):
        raise FieldError("column 'app' is empty; every run needs an application name")
    runtime_s = values.get("runtime_s")
    # A scheduler job (as `runs export` writes one) may never have run, on no node, and
    # a log may not say how long it ran (cancelled before it started, no end recorded).
    is_job = bool(values["job_id"] or values["state"])
    if runtime_s is None and require_runtime and not is_job:
        written = (row.get("runtime_s") or "").strip()
        raise FieldError(f"runtime_s is {f'missing ({written!r})' if written else 'empty'}; "
                         "every benchmark run needs its runtime")
    if runtime_s is not None and (runtime_s < 0 or (runtime_s == 0 and not is_job)):
        raise FieldError(f"runtime_s must be positive, got {runtime_s:g} (0 only for a "
                          "scheduler job, with its job_id or state, that never ran)")
    if runtime_s is not None and 0 < runtime_s < MIN_RUNTIME_S:
        raise FieldError(f"runtime_s of {runtime_s:g} s is below a microsecond, which no "
                         "clock measures; is the column in other units than seconds?")
    for name in ("runtime_s", "requested_walltime_s"):
        if (values.get(name) or 0) > MAX_DURATION_S:
            raise FieldError(f"{name} of {values[name]:g} s is over a century; the row is "
                              "damaged")
    for name in ("nodes", "total_ranks", "threads_per_rank", "ranks_per_node"):
        if values.get(name) is not None and values[name] <= 0:
            raise FieldError(f"{name} must be positive, got {values[name]:g}")
    # a time asked for or an amount used is never below 0: a negative request was stored,
    # and advise walltime then read the job as one that asked for nothing
    for name in ("requested_walltime_s", "io_bytes", "max_rss_bytes", "gpus"):
        if values.get(name) is not None and values[name] < 0:
            raise FieldError(f"{name} must not be negative, got {values[name]:g}")
    nodes, ranks = values.get("nodes"), values.get("total_ranks")
    if nodes is None and ranks is None and not is_job:
        raise FieldError("neither 'nodes' nor 'total_ranks' is given; one is needed for scale")
    rpn = values.get("ranks_per_node")
    _check_ranks_per_node(rpn, ranks)
    if ranks is None and nodes is not None and rpn is not None:
        values["total_ranks"] = round(nodes * rpn)
    if values.get("problem_size_num") is None:
        values["problem_size_num"] = problem_size_number(values.get("problem_size"))
    extra = {k: _typed(v, k) for k, v in row.items()
             if k not in _KNOWN and k is not None and v != ""}
    key = (row.get(RUN_KEY) or "").strip() or None
    if _darshan_log_row(values, extra, key):
        return RunRecord(**values, extra=extra, line_no=line_no, mode="attach",
                         key=darshan_log_key(values["job_id"], values.get("start_epoch_s"),
                                             _log_name(extra[DARSHAN_DETAILS])))
    if values.get("job_id") is not None and key == job_key(values["job_id"], None):
        # an export of a release before jobs were keyed by their submit time too
        key = job_key(values["job_id"], values.get("submit_epoch_s"))
    return RunRecord(**values, extra=extra or None, line_no=line_no, key=key)


def _check_ranks_per_node(rpn: float | None, total_ranks: int | None) -> None:
    """Refuse a ranks_per_node that is not whole unless total_ranks gives the ranks.

    A whole count per node is what a layout is. The store keeps a float all the same,
    because ranks spread unevenly over the nodes have a mean per node: LULESH's 125 ranks
    on 4 nodes (31.25), MLPerf HPC's 64 on 128 (0.5), a sacct job's tasks over its
    step's nodes; the bundled data sets and ``runs export`` write it beside total_ranks.
    Without total_ranks such a number is no mean but a typo, from which the run's ranks
    were derived as round(nodes x 0.5): a one-node run of 0 ranks was stored."""
    if rpn is not None and total_ranks is None and not rpn.is_integer():
        raise FieldError(f"ranks_per_node must be a whole number, got {rpn:g}; where ranks "
                         "are spread unevenly over the nodes, give total_ranks too "
                         "(ranks_per_node is then their mean per node)")


def _darshan_log_row(values: dict[str, Any], extra: dict[str, Any], key: str | None) -> bool:
    """Whether a row is a Darshan log stored as a run of its own, as ``runs export``
    writes one: read as the Darshan reader reads its log, attached to the stored job it
    ran inside, else stored under the log's key. Its ``run_key`` says so; an export of a
    release before one key per job gave it its job's key (``:id``), which would have
    replaced or blocked the job's accounting: there, a row of Darshan details with its
    job's key and no state or node count, which a scheduler's record has."""
    if values.get("job_id") is None or not isinstance(extra.get(DARSHAN_DETAILS), (dict, list)):
        return False
    if key is not None and DARSHAN_LOG_MARK in key:
        return True
    return (key == job_key(values["job_id"], None) and values.get("state") is None
            and values.get("nodes") is None)


def _log_name(details: Any) -> str:
    first = details[0] if isinstance(details, list) and details else details
    return str(first.get("log", "")) if isinstance(first, dict) else ""


#: Why a table whose lines end in a carriage return alone is refused: it reads as one line
#: (its header, every row joined to it), which was refused as a header naming
#: "runtime_smy,sys,1,1000..." with no word of the fix.
CR_LINE_ENDS = ("its lines end in a carriage return alone, as classic Mac OS and Excel for "
                "Mac's 'CSV (Macintosh)' write them, so the file reads as one line; save it "
                "as 'CSV UTF-8', or convert its line ends: tr '\\r' '\\n' < old.csv > "
                "new.csv")


def _header_fix(header: list[str], options: IngestOptions) -> str:
    """How to fix a header without perfpredict's columns: a table separated by something
    else than commas, the renames where its columns go by other names, else what it
    names."""
    more = ", ..." if len(header) > 12 else ""
    return header_fix(header, tuple(OTHER_NAMES), f"the header names {', '.join(header[:12])}"
                      f"{more}; see 'perfpredict ingest --help'", options.read_as)


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
    zone = options.zone()  # an unknown name is refused before the file is read
    lines = numbered_lines(path)
    header: list[str] | None = None
    header_line = 0
    for line_no, text in lines:
        if text.strip():
            header_line = line_no
            try:
                header = next(csv.reader([text]))
            except csv.Error:
                header = [text]  # unreadable: refused below as a header without app
            header = [h.strip() for h in header]
            break
    if header is None:
        return
    needed = ("app", "runtime_s") if options.require_runtime else ("app",)
    if looks_binary(",".join(header)):
        yield BadRecord(header_line, "", BINARY_FILE, whole_file=True)
        return
    if "\r" in text:  # lines are split at "\n": such a file is its header's one line
        yield BadRecord(header_line, "", CR_LINE_ENDS, whole_file=True)
        return
    if any(column not in header for column in needed):
        yield BadRecord(
            header_line, ",".join(header),
            f"the header needs at least the columns {' and '.join(needed)} "
            f"(plus nodes or total_ranks); {_header_fix(header, options)}", whole_file=True)
        return
    if (twice := named_twice(header)) is not None:
        yield BadRecord(header_line, ",".join(header), twice, whole_file=True)
        return
    if not {"nodes", "total_ranks", "job_id", "state"} & set(header):
        # every record would be refused for want of a scale (a scheduler job, with its
        # job_id or state, may have none): say so once, at the header, with the rename
        yield BadRecord(
            header_line, ",".join(header),
            f"the header has neither nodes nor total_ranks, one of which gives each run's "
            f"scale; {_header_fix(header, options)}", whole_file=True)
        return
    if options.require_runtime and not options.system and "system" not in header:
        # every record would be refused for want of a system, each suggesting --on-error
        # skip, which rejects them all: said once, at the header (jobs to advise a
        # walltime for, read without require_runtime, need none)
        renamed = ({h.casefold() for h in header} & set(OTHER_NAMES["system"])
                   and f" ({_header_fix(header, options)})")
        yield BadRecord(
            header_line, ",".join(header),
            "the header has no system column, so no run names the machine it ran on; add "
            f"a 'system' column or pass --system NAME{renamed or ''}", whole_file=True)
        return
    # csv.reader handles quoted fields spanning lines; track line numbers alongside it.
    # Each line is given back its end, which is the line break inside such a field
    # (without it, a cell's two lines were joined into one word).
    line_numbers: list[int] = []
    #: the lines of the record being read, which a reject keeps as they are: read back
    #: in their place, they tell a file whose rejected lines alone were fixed since
    #: (:func:`perfpredict.store.file_versions.rejected_lines_read`)
    line_texts: list[str] = []

    def feed() -> Iterator[str]:
        for line_no, text in lines:
            line_numbers.append(line_no)
            line_texts.append(text)
            yield text + "\n"

    reader = csv.reader(feed())
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a stray carriage return or NUL byte: a damaged row
            line_no = line_numbers[0]
            line_numbers.clear()
            line_texts.clear()
            yield BadRecord(line_no, "", unreadable_row(exc))
            continue
        line_no = line_numbers[0]
        line_numbers.clear()
        raw = "\n".join(line_texts)
        line_texts.clear()
        if not cells or all(not c.strip() for c in cells):
            continue
        if "\ufffd" in raw:  # how numbered_lines shows a byte that is not UTF-8
            yield BadRecord(line_no, raw, "the line is not UTF-8 text (perhaps Latin-1 or "
                            "Windows-1252: an unreadable byte shows as \ufffd); save the "
                            "file as UTF-8, as a spreadsheet's 'CSV UTF-8'")
            continue
        if len(cells) != len(header):
            yield BadRecord(line_no, raw, _field_count_fix(cells, len(header)))
            continue
        try:
            yield _record(dict(zip(header, cells, strict=True)), line_no,
                          options.require_runtime, zone)
        except FieldError as exc:
            yield BadRecord(line_no, raw, str(exc))
