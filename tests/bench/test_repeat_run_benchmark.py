"""The repeat-run benchmark on bundled data (present on every clone): BERT's MLPerf Training
runs (many repeats per node count) and RELeARN's (each scale twice, so a series left one
run short has eight deviations, too few to decide). Every repeated run is tested once;
where a series' own repeats do not decide, the estimate's interval is the calibrated
one."""

from __future__ import annotations

import numpy as np

from bench.repeat_run_benchmark import COLUMNS, repeat_hits
from perfpredict import datasets  # type: ignore[attr-defined]


def test_every_repeat_is_tested_once_and_the_own_noise_decides_or_nothing_changes() -> None:
    series_list = [s for s in datasets.series(["mlperf_training", "relearn"])
                   if s.key.app in ("bert", "RELeARN")]
    hits = repeat_hits(series_list, {s.key: s.key.app for s in series_list}, n_folds=2)
    repeated = 0
    for series in (s for s in series_list if s.scales.size >= 2):  # a law to fit
        scales, counts = np.unique(series.scale, return_counts=True)
        repeated += int(np.isin(series.scale, scales[counts > 1]).sum())
    assert set(hits) == {"bert", "RELeARN"}
    assert sum(rows.shape[0] for rows in hits.values()) == repeated
    assert hits["bert"][:, 2].mean() > 0.5 and not hits["RELeARN"][:, 2].any()
    for rows in hits.values():
        assert rows.shape[1] == len(COLUMNS)
        inside, inside_calibrated, decides, width, width_calibrated = rows.T
        assert np.all(inside[decides == 0] == inside_calibrated[decides == 0])
        assert np.all(width[decides == 0] == width_calibrated[decides == 0])
        assert np.all(width > 0)
