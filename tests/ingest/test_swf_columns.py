"""The block-wise SWF reader against the per-line rules it stands in for.

Reading every line through ``swf_rows.LineReader`` alone must give the same runs and bad
records, to the type of every value (``repr``), on all real logs, on a generated one and
on damaged copies; and the result must not depend on where the blocks end.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate_swf import HEADER, job_line
from perfpredict.ingest._text import blocks as text_blocks
from perfpredict.ingest._text.blocks import FieldTable, LineBlock
from perfpredict.ingest.records import IngestOptions, ParsedItem
from perfpredict.ingest.swf import columns as swf_columns
from perfpredict.ingest.swf import parse
from tests.conftest import shared_path
from tests.ingest._mutate import mutants

SWF_LOGS = ("KTH-SP2-1996-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf",
            "alea-wagap-2013-extended.swf")
#: Fields at the edge of what the column readers accept.
TRICKY = ("-1", "-1.0", "-0", "0", "0.0", "1.5", "1.", ".5", "1e3", "nan", "inf", "007",
          "-2", "2", "3", "4", "5", "9", "123456789012345", "1234567890123456",
          "99999999999999999999", "1_0", "+5", "x", "552.21", "\x1f", "é")


def per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every line to the line reader: the column reader gets no rows."""
    def nothing_splits(block: LineBlock, n_columns: int) -> FieldTable:
        empty = np.zeros((0, n_columns), dtype=np.int64)
        return FieldTable(block, np.zeros(0, dtype=np.int64), empty, empty)

    monkeypatch.setattr(swf_columns, "split_whitespace", nothing_splits)


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch,
              **options: object) -> tuple[str, str]:
    """``repr`` of everything parsed by columns and line by line: equal reprs mean equal
    values of equal types (3477.0 is not 3477 in the stored JSON)."""
    fast: list[ParsedItem] = list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]
    with monkeypatch.context() as patch:
        per_line(patch)
        slow = list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]
    return repr(fast), repr(slow)


def generated_log(n_jobs: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    lines = HEADER.splitlines()
    for job in range(1, n_jobs + 1):
        lines.append(job_line(job, job * 60, rng))
        if job % 7 == 0:  # partial-execution records of the job
            lines.append(job_line(job, job * 60, rng, status=rng.choice((2, 3, 4))))
    return lines


@pytest.mark.parametrize("name", SWF_LOGS)
@pytest.mark.parametrize("options", [{}, {"system": "x"},
                                     {"system": "x", "swf_allow_extra_fields": True}])
def test_real_logs_read_the_same_by_column_and_by_line(
        name: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = both_ways(shared_path("logs", "swf", name), monkeypatch, **options)
    assert fast == slow


def test_generated_log_reads_the_same_by_column_and_by_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.swf"
    path.write_text("\n".join(generated_log(500)) + "\n")
    fast, slow = both_ways(path, monkeypatch)
    assert fast == slow and "PARTIAL" in fast and "TIMEOUT" in fast


def _sample_lines(source: str) -> list[str]:
    if source == "generated":
        return generated_log(12)
    path = shared_path("logs", "swf", source)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        return [line.rstrip("\n") for _, line in zip(range(60), fh, strict=False)]


#: Fixtures are shared between examples: each example makes its own directory.
_SHARED_FIXTURES = [HealthCheck.function_scoped_fixture]


@given(data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=_SHARED_FIXTURES)
def test_damaged_logs_read_the_same_by_column_and_by_line(
        data: st.DataObject, monkeypatch: pytest.MonkeyPatch,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Property: edge values in fields, damaged bytes, other line endings and any block
    size never make the two paths disagree."""
    lines = _sample_lines(data.draw(st.sampled_from([*SWF_LOGS, "generated"])))
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(lines) - 1))
        cells = lines[i].split()
        if cells:
            cells[data.draw(st.integers(0, len(cells) - 1))] = data.draw(st.sampled_from(TRICKY))
            lines[i] = "  ".join(cells)
    ending = data.draw(st.sampled_from(["\n", "\r\n"]))
    raw = ending.join(lines).encode() + ending.encode()
    if data.draw(st.booleans()):
        _, raw = next(mutants(raw, data.draw(st.integers(0, 10_000)), 1))
    path = tmp_path_factory.mktemp("damaged") / "log.swf"
    path.write_bytes(raw)
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", data.draw(st.sampled_from([64, 997, 1 << 20])))
    options = data.draw(st.sampled_from([{}, {"system": "x"},
                                         {"system": "x", "swf_allow_extra_fields": True}]))
    fast, slow = both_ways(path, monkeypatch, **options)
    assert fast == slow


@pytest.mark.parametrize("block_bytes", [1, 97, 4096])
def test_blocks_end_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             block_bytes: int) -> None:
    path = tmp_path / "log.swf"
    path.write_text("\n".join(generated_log(300, seed=4)) + "\n")
    whole = repr(list(parse(path, IngestOptions())))
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", block_bytes)
    assert repr(list(parse(path, IngestOptions()))) == whole


def test_negative_zero_reads_as_zero_on_both_paths(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """float("-0") is -0.0, which the column path, reading each distinct value once,
    merged with 0.0 in one field and kept in another (a submit offset of -0.0 by line,
    0.0 by column; found by the property above): both read "-0" as 0."""
    rows = ["1 0 -1 100 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1",
            "2 -0 -1 100 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1",
            "3 -0 -1 -0 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1"]
    path = tmp_path / "log.swf"
    path.write_text("\n".join(rows) + "\n")
    for options in ({}, {"system": "x"}):
        fast, slow = both_ways(path, monkeypatch, **options)
        assert fast == slow and "-0.0" not in fast


def test_a_rejected_start_time_dates_no_job(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-finite UnixStartTime is reported as a bad header line and not used: no job
    is dated NaN (the line path did, the column path did not; found by the property
    above)."""
    rows = ["; UnixStartTime: nan",
            "1 0 -1 100 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1"]
    path = tmp_path / "log.swf"
    path.write_text("\n".join(rows) + "\n")
    fast, slow = both_ways(path, monkeypatch, system="x")
    assert fast == slow
    assert "UnixStartTime must be finite" in fast and "submit_epoch_s=nan" not in fast
