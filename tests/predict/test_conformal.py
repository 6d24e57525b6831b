"""Distance-binned conformal intervals: monotone in distance without over-widening."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.isotonic import isotonic_regression

from perfpredict.uncertainty.conformal import DistanceConformal, isotonic_increasing

_values = st.lists(st.floats(-5, 5), min_size=1, max_size=8)


@given(_values, st.data())
def test_isotonic_matches_scikit_learn(values: list[float], data: st.DataObject) -> None:
    weights = data.draw(st.lists(st.floats(0.5, 500), min_size=len(values),
                                 max_size=len(values)))
    expected = isotonic_regression(values, sample_weight=weights, increasing=True)
    got = isotonic_increasing(values, weights)
    assert np.allclose(got, expected, atol=1e-9)
    assert got == sorted(got)


def test_a_noisy_near_bin_does_not_widen_every_farther_one() -> None:
    """Residuals that spread more with distance, except one near bin that is wider than
    the next: the interval never narrows with distance, and the farther bins keep
    their own width instead of inheriting the near bin's (as a running maximum did)."""
    rng = np.random.default_rng(0)
    spread_by_bin = {0.5: 0.10, 1.5: 0.30, 2.5: 0.15, 3.5: 0.40}
    distance = np.repeat(list(spread_by_bin), 400)
    residual = rng.normal(0.0, np.repeat(list(spread_by_bin.values()), 400))
    conformal = DistanceConformal().fit(residual, distance)
    upper = [conformal.bounds(d, 0.9).upper for d in spread_by_bin]
    lower = [conformal.bounds(d, 0.9).lower for d in spread_by_bin]
    assert upper == sorted(upper) and lower == sorted(lower, reverse=True)
    # the second and third bins pool to about the mean of their 95% quantiles
    z95 = 1.645
    assert upper[1] == upper[2]
    assert 0.15 * z95 < upper[2] < 0.9 * 0.30 * z95
    assert upper[3] > 0.9 * 0.40 * z95


def test_coverage_of_exchangeable_residuals_is_near_nominal() -> None:
    rng = np.random.default_rng(1)
    distance = rng.uniform(0, 4, 4000)
    residual = rng.normal(0, 0.05 * (1 + distance))
    conformal = DistanceConformal().fit(residual[:2000], distance[:2000])
    bounds = [conformal.bounds(d, 0.9) for d in distance[2000:]]
    inside = [b.lower <= r <= b.upper for b, r in zip(bounds, residual[2000:], strict=True)]
    assert 0.88 <= np.mean(inside) <= 0.95


def test_packed_quantiles_read_back_bit_for_bit() -> None:
    rng = np.random.default_rng(2)
    distance = rng.uniform(0, 4, 1000)
    conformal = DistanceConformal().fit(rng.normal(0, 0.1 * (1 + distance)), distance)
    read = DistanceConformal.from_dict(conformal.to_dict())
    for b, original in zip(read.bins_, conformal.bins_, strict=True):
        assert np.array_equal(b["quantiles"], original["quantiles"])
    for d in (0.0, 0.7, 2.5, 9.0):
        assert read.bounds(d, 0.8) == conformal.bounds(d, 0.8)


def test_finite_sample_correction_takes_the_largest_of_few_scores() -> None:
    """With 30 scores, the 90% interval's upper bound is the ceil(31 * 0.95) / 30 = 1
    quantile, the largest score, and its lower bound the floor(31 * 0.05) / 30 = 1/30
    quantile: the plain 0.95 and 0.05 quantiles (without the correction) lie inside
    them, and a new score would fall outside more often than 10% of the time."""
    scores = np.arange(1.0, 31.0) - 15.5  # -14.5, ..., 14.5, all in one bin
    conformal = DistanceConformal().fit(scores, np.zeros(30))
    assert conformal.bounds(0.0, 0.9).upper == pytest.approx(14.5)
    assert conformal.bounds(0.0, 0.9).lower == pytest.approx(-14.5 + 29 / 30)


def test_a_confidence_its_scores_cannot_resolve_is_flagged() -> None:
    """With n scores, a bound at level q is the ceil((n + 1) q)-th smallest: past
    (n + 1) q > n there is none (split conformal's bound is infinite), and the largest
    score given in its place is flagged. 30 scores resolve 90% (31 * 0.95 = 29.45), not
    95% (31 * 0.975 = 30.2); the same interval was labelled with either."""
    scores = np.arange(1.0, 31.0) - 15.5
    conformal = DistanceConformal().fit(scores, np.zeros(30))
    resolved, beyond = conformal.bounds(0.0, 0.9), conformal.bounds(0.0, 0.95)
    assert not resolved.at_widest and beyond.at_widest
    assert beyond.upper == resolved.upper == pytest.approx(14.5)


def test_upper_tail_inverts_the_upper_bound() -> None:
    """The kill probability of a walltime at the upper bound of the interval at
    confidence c is (1 - c) / 2, at any distance, beyond the calibrated ones too."""
    rng = np.random.default_rng(4)
    distance = rng.uniform(0, 4, 3000)
    conformal = DistanceConformal().fit(rng.normal(0, 0.1 * (1 + distance)), distance)
    for d in (0.0, 1.5, 3.5, 8.0):
        for confidence in (0.2, 0.5, 0.8, 0.9, 0.98):
            upper = conformal.bounds(d, confidence).upper
            assert conformal.upper_tail(d, upper) == pytest.approx((1 - confidence) / 2,
                                                                   abs=2e-3)
        assert conformal.upper_tail(d, -0.1) == 0.5
        assert conformal.upper_tail(d, 1e6) == pytest.approx(1e-4)
