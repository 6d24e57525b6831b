from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.laws import LAWS, Amdahl, AmdahlLog, ExtraP, Gustafson, PowerLaw

P = np.array([1.0, 2, 4, 8, 16, 32])


def test_amdahl_recovers_serial_fraction() -> None:
    t = 10 + 90 / P
    law = Amdahl().fit(P, t)
    assert law.params()["serial_fraction"] == pytest.approx(0.1, rel=1e-6)
    assert law.predict([64])[0] == pytest.approx(10 + 90 / 64, rel=1e-6)


def test_amdahl_log_recovers_communication_term() -> None:
    t = 5 + 100 / P + 2 * np.log2(P)
    law = AmdahlLog().fit(P, t)
    assert law.params()["comm_s_per_log2p"] == pytest.approx(2, rel=1e-5)


def test_a_term_the_runs_do_not_need_reads_as_zero() -> None:
    """Runs that Amdahl fits exactly left Amdahl + log's communication term at the
    solver's rounding of zero: the formula read "+ 2.686e-13 s * log2(p)" and the
    breakdown "communication 6.26e-13 s"."""
    p, t = np.array([1.0, 2, 4]), np.array([1000.0, 520, 280])
    law = AmdahlLog().fit(p, t)
    assert law.formula() == "T(p) = 40 s + 960 s / p + 0 s * log2(p)"
    assert law.params()["comm_s_per_log2p"] == 0.0
    assert law.predict(p) == pytest.approx(t, rel=1e-9)


def test_gustafson_grows_linearly_for_weak_scaling() -> None:
    t = 50 + 0.5 * P
    assert Gustafson().fit(P, t).predict([128])[0] == pytest.approx(50 + 64, rel=1e-6)


def test_power_law_expresses_superlinear_speedup() -> None:
    t = 100 * P ** -1.2
    law = PowerLaw().fit(P, t)
    assert law.params()["exponent"] == pytest.approx(1.2)


def test_extrap_finds_the_generating_term() -> None:
    t = 3 + 0.5 * P ** 0.5 * np.log2(P)
    law = ExtraP().fit(P, t)
    assert (law.params()["exponent_i"], law.params()["log_exponent_j"]) == (0.5, 1.0)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_state_round_trip_gives_identical_predictions(name: str) -> None:
    law = LAWS[name]().fit(P, 20 + 80 / P + np.log2(P))
    doc = law.to_dict()
    rebuilt = LAWS[doc["law"]].from_state(doc["state"])
    np.testing.assert_allclose(rebuilt.predict([3, 100, 5000]), law.predict([3, 100, 5000]))
    assert rebuilt.formula() == law.formula()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.01, 1e6), min_size=2, max_size=6))
def test_predictions_stay_positive_and_finite(runtimes: list[float]) -> None:
    p = 2.0 ** np.arange(len(runtimes))
    for cls in LAWS.values():
        law = cls()
        if len(runtimes) < law.min_scales:
            continue
        out = law.fit(p, np.array(runtimes)).predict([1, 1e3, 1e5])
        assert np.all(np.isfinite(out)) and np.all(out > 0)


def test_fit_rejects_nonpositive_input() -> None:
    with pytest.raises(ValueError, match="positive"):
        Amdahl().fit([1, 2], [1.0, -1.0])


def _table(curves: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scales, medians, scale_start) of curves measured at P, as SeriesTable lays them."""
    scales = np.tile(P, len(curves))
    start = np.arange(len(curves) + 1, dtype=np.int64) * P.size
    return scales, np.concatenate(curves), start


def test_slope_drift_lets_a_scaling_series_borrow_saturation_others_reached() -> None:
    """Amdahl curves flatten as they go: the pooled drift turns a series still scaling
    at its edge toward the saturation those curves reached, where continuing its edge
    slope (a power law) keeps it scaling; without strong series there is no drift."""
    from perfpredict.laws.drift import SlopeDrift

    curves = [serial + 100 / P for serial in (0.5, 1.0, 2.0, 4.0)]
    drift = SlopeDrift.fit(*_table(curves), np.ones(len(curves), dtype=bool))
    assert drift is not None
    assert np.all(np.diff(drift.drift) <= 0) and np.all(drift.drift > 0)
    # a series measured at 1 and 2 nodes of 1 + 100 / p, asked at 32 nodes
    edge_slope = np.log2((1 + 50) / (1 + 100))
    predicted = drift.predict_log(np.log([2.0]), np.log([51.0]), np.array([edge_slope]),
                                  np.array([32.0]))
    continued = np.log(51.0) + edge_slope * np.log2(16)
    assert continued < predicted[0] < np.log(51.0)
    assert abs(predicted[0] - np.log(1 + 100 / 32)) < abs(continued - np.log(1 + 100 / 32))
    again = SlopeDrift.from_dict(drift.to_dict())
    np.testing.assert_array_equal(again.drift, drift.drift)
    assert SlopeDrift.fit(*_table(curves), np.zeros(len(curves), dtype=bool)) is None
