"""Damage real logs the ways files get damaged, and check a parser survives every one.

Shared by the scheduler-log parser tests (issue 6: flipped bytes, cut lines, huge numbers,
NaN, negative or zero values, dates out of range, invalid UTF-8, quotes and SQL in names).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from perfpredict.ingest.fields import MAX_COUNT, MAX_DURATION_S, MAX_EPOCH_S
from perfpredict.ingest.records import BadRecord, IngestOptions, ParsedItem, RunRecord

Parser = Callable[[Path, IngestOptions], Iterator[ParsedItem]]

_NUMBER = re.compile(rb"\d+")
_REPLACEMENTS = (b"9" * 40, b"-1", b"-86400", b"0", b"NaN", b"inf", b"1e308", b"99999999999",
                 b"'; DROP TABLE runs; --", b'"', b"\xff\xfe", b"", b"|", b";", b"=")


def mutants(data: bytes, seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """``count`` damaged copies of ``data``, each with a label saying what was done."""
    rng = random.Random(seed)
    lines = data.splitlines(keepends=True) or [data]
    for _ in range(count):
        kind = rng.choice(("flip", "cut", "number", "drop_line", "dup_line", "splice"))
        if kind == "flip" and data:
            at = rng.randrange(len(data))
            yield f"flip@{at}", data[:at] + bytes([data[at] ^ rng.randrange(1, 256)]) + data[at + 1:]
        elif kind == "cut" and data:
            at = rng.randrange(len(data))
            yield f"cut@{at}", data[:at]
        elif kind == "number":
            numbers = list(_NUMBER.finditer(data))
            if numbers:
                match = rng.choice(numbers)
                new = rng.choice(_REPLACEMENTS)
                yield f"number@{match.start()}={new!r}", data[:match.start()] + new + data[match.end():]
        elif kind == "drop_line":
            i = rng.randrange(len(lines))
            yield f"drop_line{i}", b"".join(lines[:i] + lines[i + 1:])
        elif kind == "dup_line":
            i = rng.randrange(len(lines))
            yield f"dup_line{i}", b"".join(lines[:i + 1] + lines[i:])
        else:
            i = rng.randrange(len(lines))
            yield f"splice{i}", b"".join(lines[:i]) + rng.choice(_REPLACEMENTS) + b"".join(lines[i:])


def check_items(items: list[ParsedItem], n_lines: int) -> None:
    """Everything a parser yields is a well-formed record or a located, explained reject."""
    for item in items:
        if isinstance(item, BadRecord):
            assert item.reason, item
            assert item.line_no is None or 1 <= item.line_no <= n_lines + 1, item
            continue
        assert isinstance(item, RunRecord), item
        assert item.app, item
        for name in ("nodes", "total_ranks", "gpus", "threads_per_rank"):
            value = getattr(item, name)
            assert value is None or 0 <= value <= MAX_COUNT, (name, item)
        for name in ("runtime_s", "requested_walltime_s"):
            value = getattr(item, name)
            assert value is None or (math.isfinite(value) and 0 <= value <= MAX_DURATION_S), (name, item)
        for name in ("io_bytes", "max_rss_bytes", "ranks_per_node"):
            value = getattr(item, name)
            assert value is None or (math.isfinite(value) and value >= 0), (name, item)
        for name in ("submit_epoch_s", "start_epoch_s", "end_epoch_s"):
            value = getattr(item, name)
            assert value is None or 0 < value <= MAX_EPOCH_S + 1, (name, item)


def survives_mutations(parse: Parser, original: Path, tmp_path: Path, *, seed: int,
                       count: int, options: IngestOptions | None = None) -> int:
    """Parse ``count`` damaged copies of ``original``; returns how many were tried."""
    data = original.read_bytes()
    tried = 0
    for label, mutant in mutants(data, seed, count):
        path = tmp_path / f"mutant{tried}{original.suffix}"
        path.write_bytes(mutant)
        try:
            items = list(parse(path, options or IngestOptions()))
        except Exception as exc:  # pragma: no cover - the message names the mutation
            raise AssertionError(f"{original.name} {label}: {exc!r}") from exc
        check_items(items, mutant.count(b"\n") + 1)
        tried += 1
    return tried
