"""The bundled predictor's estimates beyond the measured range as a user reads them one
node count after another, and the measured slopes' turns (``python -m bench.estimate_shape``)."""

from __future__ import annotations

import numpy as np
import pytest

from perfpredict.model.series import Series, SeriesKey


def _readings(log_t_at_doublings: list[float]) -> np.ndarray:
    """Runtimes read every quarter doubling along straight segments between whole
    doublings, as the bench reads an estimate."""
    from bench.estimate_shape import READS_PER_DOUBLING

    whole = np.arange(len(log_t_at_doublings), dtype=float)
    quarters = np.arange((len(whole) - 1) * READS_PER_DOUBLING + 1) / READS_PER_DOUBLING
    return np.exp(np.interp(quarters, whole, log_t_at_doublings))


def test_a_saturating_curve_neither_rises_and_falls_nor_speeds_up_again() -> None:
    from bench.estimate_shape import shape_of

    p = 2.0 ** np.arange(7)
    rises_and_falls, steeper_later, slopes = shape_of(_readings(list(np.log(5 + 100 / p))))
    assert not rises_and_falls and not steeper_later
    assert np.all(np.diff(slopes) > 0)  # Amdahl flattens doubling by doubling


def test_a_staircase_speeds_up_again_and_a_bump_rises_and_falls() -> None:
    from bench.estimate_shape import shape_of

    flat_then_steep = [0.0, -0.02, -0.04, -0.5, -1.0]
    assert shape_of(_readings(flat_then_steep))[:2] == (False, True)
    assert shape_of(_readings([0.0, -0.3, -0.2, -0.4]))[0]
    assert not shape_of(_readings([0.0, 0.0, -0.3]))[0]  # a flat stretch is no rise


def test_slope_turns_are_per_doubling_between_consecutive_intervals() -> None:
    from bench.estimate_shape import slope_turns

    scales = np.array([1.0, 2.0, 4.0, 8.0, 8.0])
    runtime_s = np.array([8.0, 4.0, 2.4, 2.0, 2.0])
    series = Series(SeriesKey("code", "sys", "", "", "", ""), "nodes", scales, runtime_s,
                    weak=False)
    slopes = np.log([4.0 / 8.0, 2.4 / 4.0, 2.0 / 2.4]) / np.log(2)
    expected = [slopes[0], slopes[1] - slopes[0], slopes[1], slopes[2] - slopes[1]]
    assert np.ravel(slope_turns([series])) == pytest.approx(expected)
    weak = Series(series.key, "nodes", scales, runtime_s, weak=True)
    assert slope_turns([weak]) == []


def test_the_drift_holds_a_slope_at_its_fixed_point() -> None:
    """The slope :func:`drift_fixed_point` names is the one the bundled drift continues
    unchanged: from it the drift member is a straight line in log-log."""
    from bench.estimate_shape import drift_fixed_point
    from perfpredict.estimate.estimates import load_predictor

    drift = load_predictor(None).predictor.drift
    fixed = drift_fixed_point(drift)
    assert drift is not None and fixed is not None
    assert drift.slope.min() < fixed < drift.slope.max()
    p = 100.0 * 2.0 ** np.array([1.0, 4.0])
    log_t = drift.predict_log(np.full(2, np.log(100.0)), np.full(2, np.log(50.0)),
                              np.full(2, fixed), p)
    assert log_t - np.log(50.0) == pytest.approx(fixed * np.log(p / 100.0), abs=0.01)


def test_few_bundled_estimates_rise_and_fall_beyond_the_measured_range() -> None:
    """Trees answer in steps along the distance, and a code whose estimate falls, rises
    and falls again beyond its last measurement reads as a fault: 18 of the bundled
    predictor's 129 strong-scaling series do within six doublings (97 of them before
    the trees were read on a grid, docs/accuracy.md, "The trees read on a grid of half
    doublings"). A change that makes more than a fifth do so has to say why."""
    from bench.estimate_shape import bundled_series, estimate_shapes

    shapes = estimate_shapes(*bundled_series())
    assert len(shapes) > 100
    rising = [shape.series for shape in shapes if shape.rises_and_falls]
    assert len(rising) <= len(shapes) / 5, rising


def test_the_user_guide_counts_the_series_that_rise_and_fall_as_the_bench_does() -> None:
    """The user guide quotes the bench's count ("16 of the 129 bundled strong-scaling
    series"); it had stayed at 18 after the bundled predictor was retrained."""
    from bench.estimate_shape import bundled_series, estimate_shapes
    from tests.conftest import REPO

    shapes = estimate_shapes(*bundled_series())
    rising = sum(shape.rises_and_falls for shape in shapes)
    guide = " ".join((REPO / "docs" / "user-guide.md").read_text(encoding="utf-8").split())
    assert f"{rising} of the {len(shapes)} bundled strong-scaling series" in guide
