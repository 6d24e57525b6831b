"""Between and below measured scales, on real data (slow; reads ../shared, CI runs it): an
estimate inside a series' measured range is the laws' mean moved onto the runs measured
around it (:func:`perfpredict.model.base_estimate.measured_offset_log`), below the range onto
the runs at the smallest measured scale. Measured against the laws' mean alone, every data
set of the acceptance store (``bench/interpolation_benchmark.py``): between, on every run
of the random split (store cut) that lies strictly between two measured scales of its
context; below, on each series' smallest scale predicted from its others.

Margins: over fifteen seeds (0-14) the moved estimate's MAPE was below the laws' mean's
in every seed (by 0.6-2.5 points, 1.8-2.1 over each three consecutive seeds), its median
APE too (by 1.3-2.8); pooled over seeds 0-2, 2,196 runs: 13.6% -> 11.8% (median
8.1% -> 6.2%). MLPerf Training and PencilFFTs, whose per-scale medians are noisier, moved
by -0.7 to +2.3 points from seed to seed; VASP, CP2K, Castro and RELeARN fell in every
seed but one (CP2K's seed 8, +0.6).
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.interpolation_benchmark import METHODS, acceptance_series, below_ape, inside_ape
from tests.conftest import shared_path

pytestmark = pytest.mark.slow
SEEDS = (0, 1, 2)
ESTIMATE, LAWS_MEAN = METHODS.index("estimate"), METHODS.index("laws_mean")


@pytest.fixture(scope="module")
def series() -> tuple[list, dict]:  # type: ignore[type-arg]
    return acceptance_series(shared_path("datasets"))


@pytest.fixture(scope="module")
def ape(series) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """Per data set, the absolute percentage errors of each method (``python -m
    bench.interpolation_benchmark`` prints them)."""
    return inside_ape(*series, SEEDS)


def test_between_measured_scales_the_estimate_beats_the_laws_mean(ape) -> None:  # type: ignore[no-untyped-def]
    pooled = np.concatenate(list(ape.values()))
    assert pooled.shape[0] > 1500
    mape = pooled.mean(axis=0)
    assert mape[ESTIMATE] < mape[LAWS_MEAN] - 1.0, mape
    median = np.median(pooled, axis=0)
    assert median[ESTIMATE] < median[LAWS_MEAN] - 0.5, median


@pytest.mark.parametrize("data_set", ["vasp_archer", "cp2k_readme", "castro_scaling",
                                      "relearn"])
def test_between_measured_scales_curves_that_bend_are_followed(ape, data_set: str) -> None:  # type: ignore[no-untyped-def]
    """The data sets whose estimates fell in 14 or 15 of the fifteen seeds."""
    mape = ape[data_set].mean(axis=0)
    assert mape[ESTIMATE] < mape[LAWS_MEAN], mape


def test_below_the_measured_range_the_estimate_beats_the_laws_mean(series) -> None:  # type: ignore[no-untyped-def]
    """Each series' smallest scale predicted from its others (no seed: one figure, 19.9%
    for the laws' mean, 15.8% moved, measured)."""
    pooled = np.concatenate(list(below_ape(*series).values()))
    assert pooled.shape[0] > 400
    mape = pooled.mean(axis=0)
    assert mape[ESTIMATE] < mape[LAWS_MEAN] - 2.0, mape
