"""The walltime benchmark (bench/walltime_benchmark.py) as a statistical check CI runs.

KTH-SP2's acceptance (issue 16) runs through the CLI in test_walltime_acceptance.py; here
the log without requests, and the trade-off curve's files."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import shared_path


@pytest.mark.slow
def test_nasa_without_requests_keeps_the_asked_risk() -> None:
    from bench.walltime_benchmark import benchmark

    result = benchmark(shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf"),
                       kill_risks=(0.05,), reliability_risks=(0.05,))
    rows = {r["method"]: r for r in result["rows"]}
    assert "users' requests" not in rows  # NASA-iPSC has no requested times
    advisor, last2 = rows["perfpredict"], rows["last-2 (Tsafrir)"]
    assert 0.03 <= advisor["killed"] <= 0.065
    assert abs(advisor["mean_kill_probability"] - advisor["killed"]) <= 0.015
    assert last2["killed"] > 0.3 and advisor["ratio"] > 0.15
    assert sum(b["n_jobs"] for b in result["reliability"][0.05]) == advisor["n_jobs"]


def test_tradeoff_curve_is_written_as_csv_and_png(tmp_path: Path) -> None:
    from bench.walltime_benchmark import write_curve

    rows = [{"log": "L", "method": m, "kill_risk": r, "killed": k, "ratio": q, "n_jobs": 10,
             "seconds": None, "mean_kill_probability": None, "at_request": None}
            for m, r, k, q in (("users' requests", None, 0.03, 0.49),
                               ("last-2 (Tsafrir)", None, 0.4, 0.8),
                               ("perfpredict", 0.05, 0.05, 0.51),
                               ("perfpredict", 0.10, 0.10, 0.53))]
    csv_path, png_path = write_curve(rows, tmp_path)
    with csv_path.open(newline="") as fh:
        assert [r["method"] for r in csv.DictReader(fh)] == [r["method"] for r in rows]
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
