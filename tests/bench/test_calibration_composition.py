"""The calibration-composition research tool reads the predictor's own calibration: on the
bundled MLPerf Training, Castro and PencilFFTs data sets (present on every clone), the
calibration examples it reports fall outside the 90% bounds taken from them at most about
a tenth of the time, the scores it hands on are those the quantiles were taken from, and
every test run it reports is one the backtest tested."""

from __future__ import annotations

import numpy as np
import pytest

from perfpredict.uncertainty.conformal import DistanceConformal

pytestmark = pytest.mark.slow

BUNDLED_STRONG = ("mlperf_training", "castro_scaling", "pencilffts_jeanzay")


def test_calibration_examples_miss_their_own_bounds_at_most_a_tenth_of_the_time() -> None:
    from bench.calibration_composition import (
        calibration_and_tests,
        centroid_growth_bounds,
        ideal_truncated_bounds,
    )

    calibration, test, scores = calibration_and_tests("extrapolate", 0, BUNDLED_STRONG)
    assert calibration["distance"].size > 100
    assert (calibration["distance"] > 0).all()
    assert set(calibration["data_set"].tolist()) <= set(BUNDLED_STRONG)
    # the conformal quantiles were taken per distance bin from these scores and the
    # interior examples', then made monotone in distance, which holds more of them (0.039
    # fall out, seed 0); scores read against another calibration's bounds would fall
    # out far more often, or never
    miss = np.mean(calibration["below"] | calibration["above"])
    assert 0.015 < miss < 0.15, miss
    # the quantiles taken again from the scores handed on give the same bounds (every
    # data set here is strong scaling, so the examples beyond the range are those above)
    pooled = DistanceConformal().fit(scores["score"], scores["distance"])
    beyond = scores["distance"] > 0
    lower = np.array([pooled.bounds(d, 0.9).lower for d in calibration["distance"].tolist()])
    assert (scores["score"][beyond] < lower).tolist() == calibration["below"].tolist()
    assert set(test["data_set"].tolist()) == set(BUNDLED_STRONG)
    assert (test["distance"] > 0).all()
    assert not (test["below"] & test["above"]).any()
    # the lower bound is the conformal one raised to ideal scaling (fixed work), as the
    # predictor raises it
    kept = ~test["floored"]
    np.testing.assert_allclose(
        test["lower_log"][kept],
        np.maximum(test["conformal_lower_log"], test["ideal_lower_log"])[kept])
    # the growth from the middle of the range keeps the bounds within one doubling and
    # narrows them beyond (a context spans more than nothing), the lower one down to ideal
    # scaling at most
    assert (test["span_log2"] > 0).all()
    lower, upper = centroid_growth_bounds(test)
    near = test["distance"] <= 1
    assert (upper[near] == test["upper_log"][near]).all()
    far = ~near & kept
    assert far.any() and (upper[far] < test["upper_log"][far]).all()
    assert (lower[far] >= test["lower_log"][far]).all()
    free = far & (test["conformal_lower_log"] > test["ideal_lower_log"])
    assert free.any() and (lower[free] > test["lower_log"][free]).all()
    # truncated at ideal scaling: only fixed work's bounds move; centrally, the lower
    # bound rises off ideal scaling where the distribution reached below it and the upper
    # one never narrows; one-sided, a moved interval starts at ideal scaling
    bounded = np.isfinite(test["ideal_lower_log"]) & kept
    assert bounded.any() and not test["fixed_work"][~np.isfinite(test["ideal_lower_log"])].any()
    for shape in ("central", "one-sided"):
        lower, upper = ideal_truncated_bounds(scores, test, shape)
        assert (lower[~bounded] == test["lower_log"][~bounded]).all()
        assert (upper[~bounded] == test["upper_log"][~bounded]).all()
        # (to a rounding: the bound's start is read off a prediction at the edge alone)
        assert (lower[bounded] >= test["ideal_lower_log"][bounded] - 1e-9).all()
    lower, upper = ideal_truncated_bounds(scores, test, "central")
    assert (upper >= test["upper_log"]).all()
    cut_off = bounded & (test["conformal_lower_log"] < test["ideal_lower_log"])
    assert cut_off.any() and (lower[cut_off] > test["lower_log"][cut_off]).all()
    lower, upper = ideal_truncated_bounds(scores, test, "one-sided")
    moved = upper != test["upper_log"]
    assert moved.any() and (lower[moved] == test["ideal_lower_log"][moved]).all()
