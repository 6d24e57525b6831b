"""The block-wise sacct reader against the per-record rules it stands in for.

The column readers handle the common spellings and send every other row to
``sacct_rows.read_line``; reading every line through ``read_line`` alone must give the
same runs and bad records, on real logs and on damaged copies of them. Folding must not
depend on where the blocks end.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate_sacct import COLUMNS, job_lines
from perfpredict.ingest._text import blocks as text_blocks
from perfpredict.ingest._text.blocks import FieldTable, LineBlock
from perfpredict.ingest.records import IngestOptions, ParsedItem, RunRecord
from perfpredict.ingest.sacct import MAX_OPEN_JOBS, parse
from perfpredict.ingest.sacct import columns as sacct_columns
from tests.conftest import shared_path

SLURM_LOGS = ("xdmod-sacct-accounting-logs.psv", "xdmod-sacct-accounting-logs-with-job-arrays.psv",
              "xdmod-sacct-utf8-multibyte-chars.psv", "xdmod-sacct-unknown-job-state.psv",
              "xdmod-sacct-non-ended-job-state.psv", "slurm2sql-test-data1.psv",
              "slurm2sql-test-data2.psv")
#: Values that sit at the edge of what the column readers accept.
TRICKY = ("", " ", "0", "00", "007", "2147483647", "2147483648", "99999999999", "-1", "1.5",
          "1e3", "NaN", "1G", "1.5M", "12k", "0n", "3000Mc", "Unknown", "None", "UNLIMITED",
          "2024-02-29T12:00:00", "2023-02-29T12:00:00", "1970-01-01T00:00:00",
          "2024-03-31T02:30:00", "2024-10-27T02:30:00", "2101-01-01T00:00:00",
          "2024-01-01T24:00:00", " 2024-01-01T00:00:00", "1-00:00:00", "25:61:00", "00:01.5",
          "0:0", "1:9", "0:300", "x", "COMPLETED", "CANCELLED by 7", "cancelled+", "RUNNING",
          "FOO", "fs/disk=5", "fs/disk=", "fs/disk=1.5M,fs/disk=2", "cpu=1,fs/disk=7G",
          " fs/disk=3", "fs/disk2=4", "gres/gpu=2", "gres/gpu:a100=1", "12.batch", "12.0",
          "12.extern", "12_3", "12_[1-3]", "12+1", "12.x.y", "12.", ".0", "àé", "a\x00b",
          "1700000000", "0000000001", "4102444800", "4102444801", "17000000000")


def per_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every line to the per-record rules: the column readers get no rows."""
    def nothing_splits(block: LineBlock, _delimiter: bytes, n_columns: int,
                       _trailing: bool) -> FieldTable:
        empty = np.zeros((0, n_columns), dtype=np.int64)
        return FieldTable(block, np.zeros(0, dtype=np.int64), empty, empty)

    monkeypatch.setattr(sacct_columns, "split_fields", nothing_splits)


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch,
              **options: object) -> tuple[list[ParsedItem], list[ParsedItem]]:
    fast = list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]
    with monkeypatch.context() as patch:
        per_record(patch)
        slow = list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]
    return fast, slow


def generated_dump(n_jobs: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    lines = ["|".join(COLUMNS)]
    for job_id in range(1000, 1000 + n_jobs):
        lines += job_lines(job_id, rng)
    return lines


@pytest.mark.parametrize("name", SLURM_LOGS)
@pytest.mark.parametrize("timezone", ["UTC", "America/New_York"])
@pytest.mark.parametrize("require_runtime", [True, False], ids=["ingest", "walltime input"])
def test_real_logs_read_the_same_by_column_and_by_record(
        name: str, timezone: str, require_runtime: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = both_ways(shared_path("logs", "slurm", name), monkeypatch, timezone=timezone,
                           require_runtime=require_runtime)
    assert fast == slow


def test_epoch_times_without_elapsed_read_the_same_by_column_and_by_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jobstats' layout (SLURM_TIME_FORMAT=%s, no Elapsed): read by the column readers,
    End - Start as the runtime."""
    rng = random.Random(1)
    lines = ["JobIDRaw|Start|End|State|NNodes|JobName"]
    for job_id in range(500):
        start = 1_700_000_000 + rng.randrange(10**6)
        lines.append(f"{job_id}|{start}|{start + rng.randrange(1, 10**5)}|COMPLETED|1|a")
    path = tmp_path / "jobstats.psv"
    path.write_text("\n".join(lines) + "\n")
    fast, slow = both_ways(path, monkeypatch, timezone="Europe/Berlin")
    assert fast == slow and len(fast) == 500
    assert all(isinstance(run, RunRecord) and run.runtime_s and run.start_epoch_s
               and run.end_epoch_s == run.start_epoch_s + run.runtime_s for run in fast)


def test_generated_dump_reads_the_same_by_column_and_by_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "dump.psv"
    path.write_text("\n".join(generated_dump(300)) + "\n")
    fast, slow = both_ways(path, monkeypatch, timezone="Europe/Berlin")
    assert fast == slow and len(fast) == 300


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_logs_read_the_same_by_column_and_by_record(
        data: st.DataObject, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Property: replacing fields of real lines with edge values, or shuffling lines,
    never makes the two paths disagree."""
    source = data.draw(st.sampled_from([*SLURM_LOGS, "generated"]))
    if source == "generated":
        lines = generated_dump(6, seed=data.draw(st.integers(0, 100)))
    else:
        lines = shared_path("logs", "slurm", source).read_text(encoding="utf-8").splitlines()
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(lines) - 1))
        cells = lines[i].split("|")
        j = data.draw(st.integers(0, len(cells) - 1))
        cells[j] = data.draw(st.sampled_from(TRICKY) | st.text(max_size=12).filter(
            lambda t: not set(t) & set("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")))
        lines[i] = "|".join(cells)
    if data.draw(st.booleans()):
        lines = [lines[0], *data.draw(st.permutations(lines[1:]))]
    ending = data.draw(st.sampled_from(["\n", "\r\n"]))
    path = tmp_path_factory.mktemp("damaged") / "dump.psv"
    path.write_bytes(ending.join(lines).encode("utf-8", "surrogatepass") + ending.encode())
    fast, slow = both_ways(path, monkeypatch,
                           timezone=data.draw(st.sampled_from(["UTC", "Europe/Berlin"])))
    assert fast == slow


@pytest.mark.parametrize("block_bytes", [1, 97, 4096])
def test_steps_fold_into_their_job_across_block_boundaries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block_bytes: int) -> None:
    lines = generated_dump(40, seed=3)  # 38 kB: nine 4 kB blocks, 38,000 of a byte
    lines.insert(7, lines[6].replace("COMPLETED", "RUNNING"))  # a requeue of a job mid-way
    path = tmp_path / "dump.psv"
    path.write_text("\n".join(lines) + "\n")
    whole = list(parse(path, IngestOptions()))
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", block_bytes)
    assert list(parse(path, IngestOptions())) == whole
    assert all(isinstance(item, RunRecord) for item in whole)
    assert all(item.total_ranks for item in whole)  # type: ignore[union-attr]


def test_a_step_beyond_the_open_jobs_is_a_bad_record_in_any_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["JobIDRaw|State|NTasks"] + [f"{job}|COMPLETED|" for job in range(MAX_OPEN_JOBS + 1)]
    lines += [f"{MAX_OPEN_JOBS}.0|COMPLETED|4", "0.0|COMPLETED|4"]
    path = tmp_path / "late.psv"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 64)
    bad = [item for item in parse(path, IngestOptions()) if not isinstance(item, RunRecord)]
    assert [(b.line_no, "no job row 0" in b.reason) for b in bad] == [(len(lines), True)]


def test_memory_does_not_grow_with_the_dump(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 64 * 1024)
    peaks = []
    for n_jobs in (2_000, 8_000):
        path = tmp_path / f"dump{n_jobs}.psv"
        path.write_text("\n".join(generated_dump(n_jobs)) + "\n")
        tracemalloc.start()
        n_runs = sum(1 for _ in parse(path, IngestOptions()))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert n_runs == n_jobs
    assert peaks[1] < 1.3 * peaks[0], peaks
