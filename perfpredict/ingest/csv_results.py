"""Benchmark results as CSV: one row per run.

Columns (DESIGN.md contract): app, system, problem_size, nodes, ranks_per_node,
threads_per_rank, runtime_s; optional variant, io_bytes, total_ranks (stands in for nodes when the
node count is unknown, as in RELeARN), job_id, user, submit_time, requested_walltime_s and
every other column of the store's run table (so ``runs export`` ingests back unchanged).
Unknown columns are kept as extra fields, never rejected.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from perfpredict.ingest.fields import MAX_COUNT, MAX_DURATION_S, MAX_EPOCH_S
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord
from perfpredict.ingest.textio import numbered_lines
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
_KNOWN = {*_INT_FIELDS, *_FLOAT_FIELDS, *_TEXT_FIELDS, *_TIME_FIELDS, "censored"}
_MISSING = {"", "na", "nan", "none", "null", "unknown", "-"}


class _FieldError(ValueError):
    pass


def _number(name: str, text: str) -> float | None:
    if text.strip().lower() in _MISSING:
        return None
    try:
        value = float(text)
    except ValueError:
        raise _FieldError(f"column {name!r} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise _FieldError(f"column {name!r} must be finite, got {text!r}")
    return value


def _integer(name: str, text: str) -> int | None:
    value = _number(name, text)
    if value is None:
        return None
    if value != int(value):
        raise _FieldError(f"column {name!r} must be a whole number, got {text!r}")
    if abs(value) > MAX_COUNT:  # the store's integer columns are 32-bit on PostgreSQL
        raise _FieldError(f"column {name!r} is out of range (at most {MAX_COUNT}), got {text!r}")
    return int(value)


def _timestamp(name: str, text: str) -> float | None:
    """Epoch seconds from an epoch number or an ISO 8601 time (UTC when no zone is given)."""
    if text.strip().lower() in _MISSING:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise _FieldError(
            f"column {name!r} must be ISO 8601 (2024-05-01T12:00:00) or epoch seconds, "
            f"got {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _checked_timestamp(name: str, text: str) -> float | None:
    value = _timestamp(name, text)
    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_EPOCH_S):
        raise _FieldError(f"column {name!r} is not a time between 1970 and 2100, got {text!r}")
    return value


def _typed(text: str) -> str | int | float:
    """Extra fields as numbers where they are numbers, so JSON exports and the predictor
    (data-staging seconds, batch sizes) see them as such."""
    if len(text) > 1 and text.startswith("0") and text[1].isdigit():
        return text  # "007" is a label, not a number
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def _record(row: dict[str, str], line_no: int, require_runtime: bool) -> RunRecord:
    values: dict[str, Any] = {}
    for name in _INT_FIELDS:
        if name in row:
            values[name] = _integer(name, row[name])
    for name in _FLOAT_FIELDS:
        if name in row:
            values[name] = _number(name, row[name])
    for name in _TEXT_FIELDS:
        text = (row.get(name) or "").strip()
        values[name] = text if text.lower() not in _MISSING else None
    for name, column in _TIME_FIELDS.items():
        if name in row:
            values[column] = _checked_timestamp(name, row[name])
    if "censored" in row:
        values["censored"] = row["censored"].strip().lower() in {"1", "true", "yes"}

    if not values.get("app"):
        raise _FieldError("column 'app' is empty; every run needs an application name")
    runtime_s = values.get("runtime_s")
    if runtime_s is None and require_runtime:
        raise _FieldError("runtime_s is empty; every benchmark run needs its runtime")
    if runtime_s is not None and runtime_s <= 0:
        raise _FieldError(f"runtime_s must be positive, got {runtime_s:g}")
    for name in ("runtime_s", "requested_walltime_s"):
        if (values.get(name) or 0) > MAX_DURATION_S:
            raise _FieldError(f"{name} of {values[name]:g} s is over a century; the row is "
                              "damaged")
    for name in ("nodes", "total_ranks", "threads_per_rank", "ranks_per_node"):
        if values.get(name) is not None and values[name] <= 0:
            raise _FieldError(f"{name} must be positive, got {values[name]:g}")
    nodes, ranks = values.get("nodes"), values.get("total_ranks")
    if nodes is None and ranks is None:
        raise _FieldError("neither 'nodes' nor 'total_ranks' is given; one is needed for scale")
    rpn = values.get("ranks_per_node")
    if ranks is None and nodes is not None and rpn is not None:
        values["total_ranks"] = round(nodes * rpn)
    if values.get("problem_size_num") is None:
        values["problem_size_num"] = problem_size_number(values.get("problem_size"))
    extra = {k: _typed(v) for k, v in row.items() if k not in _KNOWN and k is not None and v != ""}
    return RunRecord(**values, extra=extra or None, line_no=line_no)


def parse(path: Path, options: IngestOptions) -> Iterator[ParsedItem]:
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
            header = [h.strip().lstrip("\ufeff") for h in header]
            break
    if header is None:
        return
    needed = ("app", "runtime_s") if options.require_runtime else ("app",)
    if any(column not in header for column in needed):
        yield BadRecord(
            header_line, ",".join(header),
            f"the header needs at least the columns {' and '.join(needed)} "
            "(plus nodes or total_ranks); see 'perfpredict ingest --help'",
        )
        return
    # csv.reader handles quoted fields spanning lines; track line numbers alongside it.
    line_numbers: list[int] = []

    def feed() -> Iterator[str]:
        for line_no, text in lines:
            line_numbers.append(line_no)
            yield text

    reader = csv.reader(feed())
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # a stray carriage return or NUL byte: a damaged row
            line_no = line_numbers[0]
            line_numbers.clear()
            yield BadRecord(line_no, "", f"not a readable CSV row ({exc}); the line is damaged")
            continue
        line_no = line_numbers[0]
        line_numbers.clear()
        if not cells or all(not c.strip() for c in cells):
            continue
        raw = ",".join(cells)
        if len(cells) != len(header):
            yield BadRecord(
                line_no, raw,
                f"expected {len(header)} fields as in the header, found {len(cells)}; "
                "quote fields that contain commas",
            )
            continue
        try:
            yield _record(dict(zip(header, cells, strict=True)), line_no,
                          options.require_runtime)
        except _FieldError as exc:
            yield BadRecord(line_no, raw, str(exc))
