"""Start-up targets of issue 5, measured as ratios by bench/startup_benchmark.py."""

from __future__ import annotations

import pytest


@pytest.mark.bench
def test_estimate_within_twice_import_numpy() -> None:
    from bench.startup_benchmark import benchmark

    ratios = {row["command"]: row["ratio_to_import_numpy"] for row in benchmark(repeats=9)}
    assert ratios["perfpredict estimate (bundled predictor)"] < 2.0, ratios
    assert ratios["perfpredict --help"] < 2.0, ratios
