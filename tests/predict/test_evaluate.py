"""The evaluate table's summary statistics, on outcomes whose answers are known."""

from __future__ import annotations

import numpy as np

from perfpredict.evaluate import _Outcomes, summarise


def _outcomes(inside_by_series: dict[str, list[bool]]) -> _Outcomes:
    """Hybrid outcomes with a 10% band: each run inside or outside it as given."""
    outcomes = _Outcomes()
    for name, inside in inside_by_series.items():
        true = np.array([100.0 if hit else 150.0 for hit in inside])
        n = true.size
        outcomes.add("hybrid", "g", name, true, np.full(n, 100.0), np.full(n, 90.0),
                     np.full(n, 110.0))
    return outcomes


def _row(outcomes: _Outcomes) -> dict:  # type: ignore[type-arg]
    return next(r for r in summarise(outcomes) if r["group"] == "g")


def test_coverage_interval_resamples_series_not_runs() -> None:
    """The same 90% coverage is known less well when the misses come as whole series."""
    spread = {f"s{i}": [j != i % 10 for j in range(10)] for i in range(20)}
    clustered = {f"s{i}": [i >= 2] * 10 for i in range(20)}
    spread_row, clustered_row = _row(_outcomes(spread)), _row(_outcomes(clustered))
    assert spread_row["coverage"] == clustered_row["coverage"] == 0.9
    assert spread_row["coverage_ci_low"] == spread_row["coverage_ci_high"] == 0.9
    assert clustered_row["coverage_ci_low"] < 0.8 and clustered_row["coverage_ci_high"] == 1.0


def test_rows_without_intervals_have_no_coverage() -> None:
    outcomes = _Outcomes()
    outcomes.add("amdahl", "g", "s", np.array([100.0]), np.array([120.0]))
    row = _row(outcomes)
    assert row["mape_pct"] == 20.0
    assert row["coverage"] is row["coverage_ci_low"] is row["coverage_ci_high"] is None
