"""The repeat-run benchmark on the bundled RELeARN data (present on every clone; each scale
measured twice): every repeated run is tested once, and the interval with the noise floor
applied holds every repeat today's interval holds (it only widens)."""

from __future__ import annotations

import numpy as np

from bench.repeat_run_benchmark import COLUMNS, repeat_hits
from perfpredict import datasets  # type: ignore[attr-defined]


def test_every_repeat_is_tested_once_and_the_floor_only_widens() -> None:
    series_list = datasets.series(["relearn"])
    hits = repeat_hits(series_list, {s.key: "relearn" for s in series_list}, n_folds=2)
    repeated = 0
    for series in series_list:
        scales, counts = np.unique(series.scale, return_counts=True)
        repeated += int(np.isin(series.scale, scales[counts > 1]).sum())
    assert set(hits) == {"relearn"} and hits["relearn"].shape == (repeated, len(COLUMNS))
    inside, inside_floored, widened = hits["relearn"].T
    assert np.all(inside_floored >= inside)
    assert np.all(inside_floored[~widened] == inside[~widened])
