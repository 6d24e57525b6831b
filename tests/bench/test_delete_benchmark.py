"""The delete benchmark deletes what its reference deletes, on a small store (the 1M-run
figures are docs/performance.md's, from ``python -m bench.delete_benchmark``)."""

from __future__ import annotations

from bench.delete_benchmark import benchmark


def test_both_deletes_leave_the_same_runs() -> None:
    small, large = benchmark(n_runs=3_000, n_file_runs=500)
    assert (small["case"], small["runs_deleted"]) == ("the small file", 500)
    assert (small["runs_left"], small["raw_runs_left"]) == (3_000, 3_000)
    assert (large["case"], large["runs_deleted"]) == ("the large file", 3_000)
    assert (large["runs_left"], large["raw_runs_left"]) == (500, 500)
    assert small["ratio_to_raw_delete"] > 0 and large["ratio_to_raw_delete"] > 0
