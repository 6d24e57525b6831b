"""The repeat-run benchmark on bundled data (present on every clone): BERT's MLPerf Training
runs (many repeats per node count) and RELeARN's (each scale twice, so a series left one
run short has eight deviations, too few to decide). Every repeated run is tested once;
where a series' own repeats do not decide, the estimate's interval is the calibrated
one; cut to one run per scale, every other run is tested, and the application's floor
(BERT's and RELeARN's: each has three or more series with repeats) is the one asked."""

from __future__ import annotations

import numpy as np
import pytest

from bench.repeat_run_benchmark import (
    COLUMNS,
    ONCE_COLUMNS,
    held_out,
    once_per_scale_hits,
    repeat_hits,
)
from perfpredict import datasets  # type: ignore[attr-defined]


@pytest.mark.slow  # two hybrids trained and every repeated run predicted: a minute
def test_every_repeat_is_tested_once_and_the_own_noise_decides_or_nothing_changes() -> None:
    series_list = [s for s in datasets.series(["mlperf_training", "relearn"])
                   if s.key.app in ("bert", "RELeARN")]
    sources = {s.key: s.key.app for s in series_list}
    pairs = list(held_out(series_list, n_folds=2))
    hits = repeat_hits(pairs, sources)
    repeated, beyond_first = 0, 0
    for series in (s for s in series_list if s.scales.size >= 2):  # a law to fit
        scales, counts = np.unique(series.scale, return_counts=True)
        repeated += int(np.isin(series.scale, scales[counts > 1]).sum())
        beyond_first += series.scale.size - scales.size
    assert set(hits) == {"bert", "RELeARN"}
    assert sum(rows.shape[0] for rows in hits.values()) == repeated
    assert hits["bert"][:, 2].mean() > 0.5 and not hits["RELeARN"][:, 2].any()
    for rows in hits.values():
        assert rows.shape[1] == len(COLUMNS)
        inside, inside_calibrated, decides, width, width_calibrated = rows.T
        assert np.all(inside[decides == 0] == inside_calibrated[decides == 0])
        assert np.all(width[decides == 0] == width_calibrated[decides == 0])
        assert np.all(width > 0)

    once = once_per_scale_hits(pairs, sources)
    assert sum(rows.shape[0] for rows in once.values()) == beyond_first
    for rows in once.values():
        assert rows.shape[1] == len(ONCE_COLUMNS) and np.all(rows[:, 2:] > 0)
    # each application's floor is its own: not the pooled one of both
    assert any(np.any(rows[:, 2] != rows[:, 3]) for rows in once.values())
