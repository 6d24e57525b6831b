"""Training's bulk contexts and series grouping give what one series at a time gives."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from perfpredict import datasets
from perfpredict.laws import LAWS
from perfpredict.model.nested import nested_examples
from perfpredict.model.series import Series, build_series
from perfpredict.overhead.contexts import CANDIDATE_LAWS, SeriesTable, fit_contexts
from perfpredict.overhead.features import FEATURE_NAMES, fit_context


@pytest.fixture(scope="module")
def bundled_series() -> list[Series]:
    frames = []
    for name in ("relearn", "mlperf_training"):
        frame = datasets.load(name)
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    frame["id"] = range(len(frame))
    for column in ("state", "extra"):
        frame[column] = None
    frame["censored"] = False
    return build_series(frame)


def _first_scales(series: Series, k: int) -> Series:
    """The runs at the series' ``k`` smallest scales."""
    return series.select(series.scale <= series.scales[k - 1])


def _cuts(series_list: list[Series]) -> list[tuple[int, int]]:
    return [(i, k) for i, s in enumerate(series_list) for k in range(2, s.scales.size + 1)]


#: Each law's coefficients fitted one series at a time, as before the bulk fits.
_ONE_FIT = {
    "amdahl": lambda p, t: _nnls([np.ones_like(p), 1 / p], t),
    "amdahl_log": lambda p, t: _nnls([np.ones_like(p), 1 / p, np.log2(p)], t),
    "gustafson": lambda p, t: _nnls([np.ones_like(p), p], t),
    "power": lambda p, t: (lambda c: [-c[0], math.exp(c[1])])(np.polyfit(np.log(p),
                                                                         np.log(t), 1)),
}


def _after_cache_effect(series: Series, scales: np.ndarray, medians: np.ndarray) -> int:
    """Where the laws' fit starts, one interval at a time: after the last interval of
    fixed work that beat ideal scaling by more than 10%, if three or more scales follow."""
    if series.weak or not series.fixed_work:
        return 0
    beat = [i for i in range(scales.size - 1)
            if medians[i] / medians[i + 1] > 1.1 * scales[i + 1] / scales[i]]
    return beat[-1] + 1 if beat and scales.size - beat[-1] - 1 >= 3 else 0


def _nnls(columns: list[np.ndarray], t: np.ndarray) -> list[float]:
    from scipy.optimize import nnls

    return list(nnls(np.column_stack(columns) / t[:, None], np.ones_like(t))[0])


def test_bulk_law_fits_equal_one_fit_per_series(bundled_series) -> None:  # type: ignore[no-untyped-def]
    table = SeriesTable.of(bundled_series)
    cuts = _cuts(bundled_series)
    index, n_scales = (np.array(column) for column in zip(*cuts, strict=True))
    batch = fit_contexts(table, bundled_series, index, n_scales)
    assert len(cuts) > 300
    for row, (i, k) in enumerate(cuts):
        scales, medians = _first_scales(bundled_series[i], k).medians()
        np.testing.assert_array_equal(batch.context(row, bundled_series[i]).medians_s, medians)
        first = _after_cache_effect(bundled_series[i], scales, medians)
        scales, medians = scales[first:], medians[first:]
        for name in CANDIDATE_LAWS:
            if k < LAWS[name].min_scales:
                assert name not in batch.context(row, bundled_series[i]).laws
                continue
            bulk = [float(v[row]) for v in batch.law_states[name].values()]
            expected = [*_ONE_FIT[name](scales, medians), scales[-1], scales[0]]
            np.testing.assert_allclose(bulk, expected, rtol=1e-9, atol=1e-12, err_msg=name)


def _summary_one_at_a_time(series: Series) -> list[float]:
    """The context summary as it was computed per series, with numpy's own fits."""
    scales, medians = series.medians()

    def slope(p: np.ndarray, t: np.ndarray) -> float:
        return float(np.polyfit(np.log2(p), np.log2(t), 1)[0])

    top = series.runtime_s[series.scale == scales[-1]]
    top_io = series.io_bytes_per_node()[series.scale == scales[-1]]
    io = (math.log2(max(float(np.nanmedian(top_io)), 1.0)) if np.isfinite(top_io).any()
          else np.nan)
    edge, first = slope(scales[-2:], medians[-2:]), slope(scales[:2], medians[:2])
    size = series.problem_size_num
    law_start = _after_cache_effect(series, scales, medians)
    holdout = [math.log(LAWS[name]().fit(scales[law_start:-1], medians[law_start:-1])
                        .predict(scales[-1:])[0] / medians[-1])
               if scales.size - law_start - 1 >= max(2, LAWS[name].min_scales) else np.nan
               for name in CANDIDATE_LAWS]
    return [math.log2(scales[-1]), float(scales.size), edge, slope(scales, medians),
            edge - first, float(np.std(np.log(top))), io, float(series.weak),
            math.log2(series.ranks_per_node) if series.ranks_per_node else np.nan,
            series.threads_per_rank or np.nan,
            math.log10(size) if size and size > 0 else np.nan, *holdout]


def test_context_summary_equals_numpy_per_series(bundled_series) -> None:  # type: ignore[no-untyped-def]
    for series in bundled_series:
        if series.scales.size < 2:
            continue
        got = fit_context(series).summary
        np.testing.assert_allclose(got, _summary_one_at_a_time(series), rtol=1e-9, atol=1e-12)


def test_context_io_bytes_per_node_is_the_median_at_the_largest_scale(bundled_series) -> None:  # type: ignore[no-untyped-def]
    """I/O bytes per node (from Darshan or an io_bytes column) where some runs record it:
    the bulk summary agrees with numpy's nanmedian, series by series, and a series that
    counts ranks without ranks per node has none."""
    rng = np.random.default_rng(3)
    with_io = []
    for series in bundled_series:
        io = rng.lognormal(30, 2, series.scale.size)
        io[rng.random(io.size) < 0.3] = np.nan
        with_io.append(dataclasses.replace(series, io_bytes=io))
    checked = 0
    for series in with_io:
        if series.scales.size < 2:
            continue
        got = fit_context(series).summary
        np.testing.assert_allclose(got, _summary_one_at_a_time(series), rtol=1e-9, atol=1e-12)
        checked += np.isfinite(got[FEATURE_NAMES.index("log2_io_bytes_per_node") - 2])
    assert checked > 50
    relearn = next(s for s in with_io if s.scale_unit == "ranks")
    assert relearn.ranks_per_node is None and np.isnan(relearn.io_bytes_per_node()).all()


def test_io_bytes_of_stored_runs_reach_the_series_context(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An io_bytes column (as Darshan logs attach to jobs) goes from the store into the
    series and its context: bytes per node at the largest scale, where runs record it."""
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    path = tmp_path / "runs.csv"
    path.write_text("app,system,nodes,runtime_s,io_bytes\n"
                    "io_app,sys,1,100,\nio_app,sys,2,55,4e9\nio_app,sys,4,30,8e9\n"
                    "io_app,sys,4,31,1.6e10\nplain,sys,1,10,\nplain,sys,2,6,\n")
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    ingest_file(store, "csv", path)
    io_app, plain = build_series(runs_frame(store))
    store.dispose()
    assert plain.io_bytes is None
    assert np.isnan(io_app.io_bytes[0]) and list(io_app.io_bytes[1:]) == [4e9, 8e9, 1.6e10]
    io_feature = FEATURE_NAMES.index("log2_io_bytes_per_node") - 2
    assert fit_context(io_app).summary[io_feature] == pytest.approx(math.log2(3e9))
    assert np.isnan(fit_context(plain).summary[io_feature])


def test_nested_examples_pair_each_cut_with_the_runs_beyond_it(bundled_series) -> None:  # type: ignore[no-untyped-def]
    usable = [s for s in bundled_series if s.scales.size >= 3]
    data = nested_examples(usable).arrays()
    expected_scale, expected_max, expected_group, expected_weight = [], [], [], []
    for group, series in enumerate(usable):
        for k in range(2, series.scales.size):
            beyond = series.scale > series.scales[k - 1]
            p = series.scale[beyond]
            expected_scale.append(p)
            expected_max.append(np.full(p.size, series.scales[k - 1]))
            expected_group.append(np.full(p.size, float(group)))
            expected_weight.append(1.0 / np.array([np.sum(p == x) for x in p]))
    n = sum(p.size for p in expected_scale)
    # the extrapolation examples come first, then the interior ones
    assert np.all(data["scale"][:n] > data["scale_max"][:n])
    assert np.all(data["scale"][n:] < data["scale_max"][n:])
    np.testing.assert_array_equal(data["scale"][:n], np.concatenate(expected_scale))
    np.testing.assert_array_equal(data["scale_max"][:n], np.concatenate(expected_max))
    np.testing.assert_array_equal(data["group"][:n], np.concatenate(expected_group))
    np.testing.assert_array_equal(data["weight"][:n], np.concatenate(expected_weight))
    # each example's law predictions are those of its own cut's context
    row = int(np.flatnonzero(data["group"][:n] == 3)[-1])
    series = usable[3]
    ctx = fit_context(_first_scales(series, series.scales.size - 1))
    for j, name in enumerate(CANDIDATE_LAWS):
        law = ctx.laws.get(name, ctx.laws["amdahl"])
        assert data["law_logs"][row, j] == pytest.approx(
            math.log(law.predict([data["scale"][row]])[0]), rel=1e-12)


def test_interior_examples_predict_each_inner_scale_of_a_cut_from_its_others(bundled_series) -> None:  # type: ignore[no-untyped-def]
    usable = [s for s in bundled_series if s.scales.size >= 3]
    data = nested_examples(usable).arrays()
    interior = data["scale"] < data["scale_max"]
    expected_scale, expected_max, expected_group = [], [], []
    for group, series in enumerate(usable):
        for k in range(3, series.scales.size + 1):
            for scale in series.scales[1:k - 1]:
                p = series.scale[series.scale == scale]
                expected_scale.append(p)
                expected_max.append(np.full(p.size, series.scales[k - 1]))
                expected_group.append(np.full(p.size, float(group)))
    np.testing.assert_array_equal(data["scale"][interior], np.concatenate(expected_scale))
    np.testing.assert_array_equal(data["scale_max"][interior], np.concatenate(expected_max))
    np.testing.assert_array_equal(data["group"][interior], np.concatenate(expected_group))
    # an interior example's laws are fitted on the other scales of its cut: the last
    # interior example of series 3 leaves its second-largest scale out of all of them
    row = int(np.flatnonzero(interior & (data["group"] == 3))[-1])
    series = usable[3]
    assert data["scale"][row] == series.scales[-2]
    ctx = fit_context(series.select(series.scale != data["scale"][row]))
    for j, name in enumerate(CANDIDATE_LAWS):
        law = ctx.laws.get(name, ctx.laws["amdahl"])
        assert data["law_logs"][row, j] == pytest.approx(
            math.log(law.predict([data["scale"][row]])[0]), rel=1e-12)


def _frame(rows: list[dict]) -> pd.DataFrame:  # type: ignore[type-arg]
    base = {"id": 0, "app": "a", "system": "s", "problem_size": "n", "ranks_per_node": 4.0,
            "threads_per_rank": None, "nodes": 1, "total_ranks": 4, "runtime_s": 1.0,
            "problem_size_num": None, "state": "COMPLETED", "censored": False, "extra": None}
    return pd.DataFrame([{**base, **row, "id": i} for i, row in enumerate(rows)])


def test_series_keys_merge_equal_texts_and_keep_frame_order_within_a_scale() -> None:
    frame = _frame([
        {"problem_size": "36", "nodes": 4, "runtime_s": 9.0},
        {"problem_size": 36.0, "nodes": 2, "runtime_s": 8.0, "problem_size_num": 36.0},
        {"problem_size": "36", "nodes": 4, "runtime_s": 7.0},
        {"problem_size": None, "nodes": None, "total_ranks": 8, "runtime_s": 3.0,
         "extra": {"scaling": "weak", "staging_s": 1.5}},
        {"problem_size": float("nan"), "nodes": 2, "total_ranks": 16, "runtime_s": 6.0,
         "extra": {"staging_s": 1.5}},
        {"app": "b", "ranks_per_node": None, "nodes": 1, "runtime_s": 5.0},
    ])
    series = build_series(frame)
    assert [s.key for s in series] == [("a", "s", "", "", "4", ""), ("a", "s", "36", "", "4", ""),
                                       ("b", "s", "n", "", "", "")]
    unsized, sized, other = series
    # a run without a node count makes the whole series count ranks
    assert unsized.scale_unit == "ranks" and list(unsized.scale) == [8, 16]
    assert unsized.weak and unsized.io_share == pytest.approx(np.median([1.5 / 3, 1.5 / 6]))
    assert list(sized.scale) == [2, 4, 4] and list(sized.runtime_s) == [8.0, 9.0, 7.0]
    assert sized.problem_size_num == 36.0 and sized.io_share is None and not sized.weak
    assert other.ranks_per_node is None and other.problem_size_num is None


#: Castro's wdmerger on Frontier (256^3 base + AMR, mgs=64; datasets/castro_scaling):
#: 4.7 times faster from 16 to 32 nodes, then 1.7, 1.5, 1.3 and 1.06 times per doubling.
_CACHE_EFFECT = ((16, 3113.7), (32, 669.0), (64, 404.6), (128, 272.9), (256, 210.2),
                 (512, 199.0))


def _stored_series(tmp_path, rows, scaling: str) -> Series:  # type: ignore[no-untyped-def]
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame

    path = tmp_path / f"runs{len(list(tmp_path.iterdir()))}.csv"
    path.write_text("app,system,nodes,runtime_s,scaling\n" + "".join(
        f"code,sys,{nodes},{runtime_s},{scaling}\n" for nodes, runtime_s in rows))
    store = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    ingest_file(store, "csv", path)
    (series,) = build_series(runs_frame(store, app="code"))
    store.dispose()
    return series


def _law_states(series: Series, k: int, name: str) -> list[float]:
    """Law ``name``'s state fitted in bulk to the context of the ``k`` smallest scales."""
    batch = fit_contexts(SeriesTable.of([series]), [series], np.array([0]), np.array([k]))
    return [float(v[0]) for v in batch.law_states[name].values()]


def test_laws_are_fitted_after_a_cache_effect(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Fitted across the drop, Amdahl's serial time went to 0 (ideal scaling without
    end) and the power law's exponent below -1; fitted to the scales after it, each law
    is the one-series fit of those scales, and the curve flattens as the runs did. The
    cut at 64 nodes keeps two scales after the drop, too few: it is fitted whole."""
    series = _stored_series(tmp_path, _CACHE_EFFECT, "strong")
    scales, medians = series.medians()
    for name in CANDIDATE_LAWS:
        np.testing.assert_allclose(
            _law_states(series, 6, name),
            [*_ONE_FIT[name](scales[1:], medians[1:]), scales[-1], scales[1]],
            rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(
            _law_states(series, 3, name)[:-2], _ONE_FIT[name](scales[:3], medians[:3]),
            rtol=1e-9, atol=1e-12, err_msg=name)
    laws = fit_context(series).laws
    assert laws["amdahl"].predict(np.array([4096.0]))[0] > 150.0  # was 7.1 s
    assert laws["power"].predict(np.array([1024.0]))[0] > 199.0 / 2  # slower than ideal


def test_time_to_train_and_near_ideal_steps_are_fitted_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Time-to-train beats ideal scaling where batch sizes change (not a cache effect),
    and a step within 10% of ideal is the noise of two medians: both fitted whole."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    to_target = _stored_series(tmp_path / "a", _CACHE_EFFECT,
                               "strong (fixed task: train to target quality)")
    near_ideal = _stored_series(tmp_path / "b", ((16, 1000.0), (32, 460.0), (64, 300.0),
                                                 (128, 220.0), (256, 180.0)), "strong")
    for series in (to_target, near_ideal):
        scales, medians = series.medians()
        k = scales.size
        np.testing.assert_allclose(_law_states(series, k, "amdahl")[:-2],
                                   _ONE_FIT["amdahl"](scales, medians), rtol=1e-9)
