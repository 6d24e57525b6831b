"""Peak memory in bench/ingest_benchmark.py is each child's own: ``os.wait4`` of a child
gave no less than the benchmark's own high-water mark (Linux carries it into a child
across ``exec``), so a sqlite3 ``.import`` of a few MiB was reported at the size of the
lines ``--grown`` holds, and an ingest's peak hid under the script's."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bench.ingest_benchmark import _run, measure, write_csv

pytestmark = pytest.mark.skipif(
    shutil.which("time", path="/usr/bin:/bin") is None and shutil.which("time") is None,
    reason="GNU time measures the benchmark's peaks and is not installed (apt-get install time)",
)

#: What the benchmark process holds while it starts a child in the test below.
HELD_MIB = 300


def test_a_child_s_peak_is_not_the_benchmark_s() -> None:
    held = bytearray(HELD_MIB * 2**20)
    held[::4096] = b"\x01" * len(held[::4096])  # resident, not only reserved
    _, peak_bytes, _ = _run([sys.executable, "-c", "pass"])
    assert peak_bytes < 100 * 2**20, peak_bytes / 2**20
    del held


def test_the_ingest_peak_is_given_as_a_ratio_to_the_reference_s(tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    write_csv(runs, 200)
    row = measure("csv", runs, "bench", tmp_path)
    assert row["runs"] == 200
    assert 0 < row["reference_peak_mib"] < row["peak_mib"]  # type: ignore[operator]
    assert row["peak_ratio"] == row["peak_mib"] / row["reference_peak_mib"]  # type: ignore[operator]
