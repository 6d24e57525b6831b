from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict import artifact, datasets
from perfpredict.errors import ArtifactError, BadInputError
from perfpredict.model.entry import SeriesEntry
from perfpredict.model.fit import HybridPredictor
from perfpredict.model.runtime import CALIBRATED_BY, RuntimeModel
from perfpredict.model.series import Series, SeriesKey, build_series
from perfpredict.overhead.contexts import SeriesTable
from perfpredict.overhead.features import fit_context
from perfpredict.overhead.regressor import OverheadRegressor
from perfpredict.overhead.trees import TABLE_DTYPES, TreeEnsemble


@pytest.fixture(scope="module")
def relearn_series():  # type: ignore[no-untyped-def]
    frame = datasets.load("relearn")
    frame["id"] = range(len(frame))
    for column in ("nodes", "state", "censored", "extra"):
        frame[column] = None
    frame["censored"] = False
    return build_series(frame)


def test_series_are_grouped_by_problem_size_and_use_ranks(relearn_series) -> None:  # type: ignore[no-untyped-def]
    assert len(relearn_series) == 25
    first = relearn_series[0]
    assert first.scale_unit == "ranks"
    assert first.weak
    assert list(first.scales) == [32, 64, 128, 256, 512]


@pytest.fixture(scope="module")
def relearn_predictor(relearn_series):  # type: ignore[no-untyped-def]
    return HybridPredictor().fit(relearn_series)


@pytest.fixture(scope="module")
def relearn_strong(relearn_series):  # type: ignore[no-untyped-def]
    """RELeARN's series read as strong scaling, and the model fitted on them: the pool
    of the tests of what strong scaling alone does (the drift, the edge, the ramps).
    A fit takes seconds, and a fitted model is frozen, so the module shares one."""
    strong = [dataclasses.replace(s, weak=False) for s in relearn_series]
    return strong, HybridPredictor().fit(strong).model_


def test_numpy_tree_evaluator_matches_xgboost() -> None:
    import xgboost

    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 5))
    y = np.sin(x[:, 0]) + 0.3 * x[:, 1]
    x[rng.random(x.shape) < 0.1] = np.nan
    regressor = OverheadRegressor(n_estimators=80).fit(x, y)
    booster = xgboost.Booster()
    booster.load_model(bytearray(regressor.model_json_.encode()))
    np.testing.assert_allclose(regressor.predict(x), booster.predict(xgboost.DMatrix(x)),
                               atol=1e-5)


def _assert_same_trees(a: TreeEnsemble, b: TreeEnsemble) -> None:
    assert a.base_score == b.base_score and a.depth == b.depth
    for name in TABLE_DTYPES:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def test_tree_table_holds_the_trees_of_the_xgboost_json() -> None:
    """The table an artifact stores predicts bit for bit as XGBoost's JSON of the same
    booster does, over random rows with NaNs, after a trip through JSON."""
    rng = np.random.default_rng(2)
    x = rng.normal(scale=3.0, size=(5000, 6))
    y = np.cos(x[:, 2]) - 0.2 * x[:, 4]
    x[rng.random(x.shape) < 0.1] = np.nan
    regressor = OverheadRegressor(n_estimators=60).fit(x, y)
    from_json = TreeEnsemble.from_xgboost_json(regressor.model_json_)
    stored = TreeEnsemble.from_table(json.loads(json.dumps(regressor.ensemble_.to_table())))
    _assert_same_trees(stored, from_json)
    assert np.array_equal(stored.predict(x), from_json.predict(x))


def test_the_mean_of_tree_ensembles_predicts_the_mean_of_their_margins() -> None:
    """Two ensembles of different depths, side by side with halved leaves, predict the
    mean of their margins (missing values included) and keep doing so as a table."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2000, 4))
    x[rng.random(x.shape) < 0.1] = np.nan
    deep = OverheadRegressor(n_estimators=40, max_depth=3).fit(x[:, :3], np.nan_to_num(x[:, 0]))
    shallow = OverheadRegressor(n_estimators=25, max_depth=2, random_state=1).fit(
        x[:, 1:], np.nan_to_num(np.sin(x[:, 2])))
    # the same feature columns for both: the second learned on columns 1-3 of x
    rows = x[:, :3]
    mean = TreeEnsemble.mean([deep.ensemble_, shallow.ensemble_])
    np.testing.assert_allclose(mean.predict(rows), (deep.predict(rows) + shallow.predict(rows)) / 2,
                               atol=1e-12)
    assert mean.depth == 3 and mean.roots.size == 65
    stored = TreeEnsemble.from_table(json.loads(json.dumps(mean.to_table())))
    _assert_same_trees(stored, mean)


def test_predictor_round_trips_through_a_sealed_artifact(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    predictor = relearn_predictor
    text = artifact.dumps({"kind": "test", "predictor": predictor.model_.to_dict()})
    rebuilt = RuntimeModel.from_dict(artifact.loads(text, "test")["predictor"])
    assert rebuilt.to_dict() == predictor.model_.to_dict()
    series = relearn_series[3]
    scales = np.array([512.0, 1024, 4096])
    assert predictor.predict(series, scales) == rebuilt.predict(series, scales)


def test_intervals_contain_the_prediction_and_widen_with_distance(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    predictor = relearn_predictor
    preds = predictor.predict(relearn_series[0], np.array([1024.0, 4096, 65536]))
    widths = [(p.upper_s - p.lower_s) / p.runtime_s for p in preds]
    assert all(p.lower_s < p.runtime_s < p.upper_s for p in preds)
    assert widths == sorted(widths)
    assert preds[-1].beyond_calibration


def test_a_series_borrows_its_applications_evidence_beyond_its_runs(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """The same runs under an application the predictor never saw get no application
    evidence: the same prediction inside the measured range, another one beyond it."""
    predictor = relearn_predictor
    known = relearn_series[3]
    unseen = dataclasses.replace(known, key=known.key._replace(app="never-trained-app"))
    assert predictor.model_.app_rate("never-trained-app") == 0.0
    assert predictor.model_.app_rate(known.key.app) != 0.0
    inside = known.scales
    beyond = np.array([2048.0, 8192.0])
    same = [p.runtime_s for p in predictor.predict(known, inside)]
    assert same == [p.runtime_s for p in predictor.predict(unseen, inside)]
    assert ([p.runtime_s for p in predictor.predict(known, beyond)]
            != [p.runtime_s for p in predictor.predict(unseen, beyond)])


def test_a_series_trains_with_application_evidence_free_of_its_own(relearn_series) -> None:  # type: ignore[no-untyped-def]
    """Cross-fitted target encoding: the rate a series trains with does not move with its
    own errors (the trees could read them off it otherwise), while the rates of its
    application's series in other folds do."""
    rng = np.random.default_rng(0)
    n = len(relearn_series)
    group = np.repeat(np.arange(n), 3).astype(float)
    target, weight = rng.normal(0.1, 0.05, group.size), np.ones(group.size)
    distance = np.tile([0.5, 1.0, 2.0], n)
    predictor = HybridPredictor()
    names, app_of = np.unique([s.key.app for s in relearn_series], return_inverse=True)
    fold = predictor._series_folds(n)
    before, _ = predictor._fit_app_evidence(names, app_of, fold, group, target, weight,
                                            distance)
    changed = target.copy()
    changed[group == 7] += 1.0
    after, _ = predictor._fit_app_evidence(names, app_of, fold, group, changed, weight,
                                           distance)
    assert after[7] == before[7]
    assert np.unique(before).size <= predictor.n_folds
    assert (after != before).sum() >= n - n // predictor.n_folds - 1


def test_intervals_are_calibrated_by_application_in_a_kind_with_enough_applications(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """A scaling kind with eight applications or more has its residuals cross-fitted by
    application, and an estimate of a new one says so; a kind with one, in the same
    store, by series, and a new one is warned."""
    from perfpredict.estimate import calibration_notes

    def new_app_notes(model: RuntimeModel, app: str, weak: bool) -> str:
        return " ".join(calibration_notes(model, app, weak=weak)[-1:])

    assert relearn_predictor.model_.calibrated_by == {"strong": "series", "weak": "series"}
    assert "may be too narrow" in new_app_notes(relearn_predictor.model_, "new code", True)
    # a known strong-scaling application among too few to calibrate by application
    few_apps = [dataclasses.replace(s, key=s.key._replace(app=f"code{i % 3}"), weak=False)
                for i, s in enumerate(relearn_series)]
    few = HybridPredictor().fit(few_apps).model_
    assert few.calibrated_by["strong"] == "series" and not few.is_new_app("code1")
    assert "calibrated by series and may be too narrow" in new_app_notes(few, "code1", False)
    strong = [dataclasses.replace(s, key=s.key._replace(app=f"code{i % 8}"), weak=False)
              for i, s in enumerate(relearn_series)]
    model = HybridPredictor().fit(strong + relearn_series).model_
    assert model.calibrated_by == {"strong": "application", "weak": "series"}
    assert "applications left out" in new_app_notes(model, "new code", False)
    assert "may be too narrow" in new_app_notes(model, "new code", True)
    assert not model.is_new_app("code3")
    assert not calibration_notes(model, "code3", weak=False)
    assert RuntimeModel.from_dict(model.to_dict()).calibrated_by == model.calibrated_by


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0, 8.0, 48.0, 2048.0]), max_size=12))
def test_a_series_distinct_scales_are_numpys_unique(scale: list[float]) -> None:
    """``Series.scales`` sorts instead of calling ``np.unique`` (start-up, issue 5)."""
    series = Series(SeriesKey("a", "s", "", "", "", ""), "nodes", np.array(scale),
                    np.ones(len(scale)), weak=False)
    np.testing.assert_array_equal(series.scales, np.unique(np.array(scale)))


def _io_series(name: str, heavy: bool, rng: np.random.Generator) -> Series:
    """A strong-scaling series that halves its runtime up to 4 nodes; beyond, an
    I/O-heavy one (1 TB per node) stops scaling, a light one (1 MB) keeps on."""
    p = np.array([1.0, 2, 4, 8, 16, 32])
    exponent = 0.8 if heavy else 0.1
    runtime = 1000 / p * np.maximum(p / 4, 1) ** exponent * rng.uniform(0.98, 1.02, p.size)
    return Series(key=SeriesKey(name, "sys", "", "", "", ""), scale_unit="nodes", scale=p,
                  runtime_s=runtime, weak=False, io_bytes=(1e12 if heavy else 1e6) * p)


def test_io_bytes_per_node_tell_apart_series_of_the_same_shape() -> None:
    """Series that scale alike up to 4 nodes and part beyond it by how much I/O they do:
    given only their first three scales, the trees tell them apart by I/O bytes per node,
    the one feature in which they differ."""
    rng = np.random.default_rng(0)
    pool = [_io_series(f"code{i}", heavy=i % 2 == 0, rng=rng) for i in range(24)]
    predictor = HybridPredictor().fit(pool)
    heavy, light = (_io_series("new", heavy=h, rng=np.random.default_rng(1)) for h in (True, False))
    first_three = heavy.scale <= 4
    at_32 = np.array([32.0])
    heavy_s = predictor.predict(heavy.select(first_three), at_32)[0].runtime_s
    light_s = predictor.predict(light.select(first_three), at_32)[0].runtime_s
    assert heavy_s > 2 * light_s


@pytest.mark.parametrize(("ranks_per_node", "threads_per_rank", "label"), [
    ("1", "1", "default size, 1 rank/node, 1 thread/rank"),  # was "1 threads/rank"
    ("8", "16", "default size, 8 ranks/node, 16 threads/rank"),
    ("0.5", "2", "default size, 0.5 ranks/node, 2 threads/rank"),  # MLPerf HPC's mean
    ("", "1", "default size, 1 thread/rank"),
    ("", "", "default size"),
])
def test_a_series_name_counts_its_layout_in_the_singular_for_one(
        ranks_per_node: str, threads_per_rank: str, label: str) -> None:
    key = SeriesKey("lulesh", "opal", "", "", ranks_per_node, threads_per_rank)
    assert key.name == f"lulesh on opal [{label}]"


def test_artifact_verifies_as_written_and_reformatted() -> None:
    text = artifact.dumps({"kind": "test", "value": 1.5, "nested": {"b": [1, 2], "a": None}})
    assert text.endswith(f'"sha256":"{json.loads(text)["sha256"]}"}}')
    assert artifact.loads(text, "test")["nested"] == {"b": [1, 2], "a": None}
    reformatted = json.dumps(json.loads(text), indent=2)
    assert artifact.loads(reformatted, "test") == artifact.loads(text, "test")
    # a file is read as bytes, verified without decoding it
    assert artifact.loads(text.encode(), "test") == artifact.loads(text, "test")
    with pytest.raises(ArtifactError, match="checksum"):
        artifact.loads(text.replace("1.5", "2.5").encode(), "test")


def test_an_artifact_file_that_is_not_utf8_is_refused_in_one_message(tmp_path: Path) -> None:
    path = tmp_path / "predictor.json"
    text = artifact.dumps({"kind": "test", "value": 1.5})
    path.write_bytes(text.encode().replace(b'"test"', b'"t\xe9st"'))  # a Latin-1 byte
    with pytest.raises(ArtifactError, match="not UTF-8 text") as refused:
        artifact.read_file(path)
    assert str(path) in str(refused.value)


def test_tampered_artifact_is_refused() -> None:
    text = artifact.dumps({"kind": "test", "value": 1.5})
    doc = json.loads(text)
    doc["value"] = 2.5
    with pytest.raises(ArtifactError, match="checksum"):
        artifact.loads(json.dumps(doc), "test")
    with pytest.raises(ArtifactError, match="checksum"):  # edited in the written layout
        artifact.loads(text.replace("1.5", "2.5"), "test")
    with pytest.raises(ArtifactError, match="not valid JSON"):
        artifact.loads(text[: len(text) // 2], "test")
    newer = json.loads(text)
    newer["format_version"] = artifact.FORMAT_VERSION + 1
    with pytest.raises(ArtifactError, match="newer"):
        artifact.loads(json.dumps(newer), "test")


def test_nested_examples_sample_series_beyond_the_cap(relearn_series) -> None:  # type: ignore[no-untyped-def]
    from perfpredict.model.nested import _examples_per_run, nested_examples

    full = nested_examples(relearn_series).arrays()
    # the sample is drawn by the examples each series gives, so their count must be exact
    assert full["scale"].size == _examples_per_run(SeriesTable.of(relearn_series), 2).sum()
    cap = full["scale"].size // 3
    capped = nested_examples(relearn_series, max_examples=cap).arrays()
    kept = np.unique(capped["group"])
    assert np.unique(full["group"]).size == len(relearn_series)
    assert 1 < kept.size < len(relearn_series) and capped["scale"].size <= cap
    # the sample is reproducible and keeps each series' own examples whole
    again = nested_examples(relearn_series, max_examples=cap).arrays()
    np.testing.assert_array_equal(capped["log_runtime"], again["log_runtime"])
    in_full = np.isin(full["group"], kept)
    np.testing.assert_array_equal(capped["log_runtime"], full["log_runtime"][in_full])


def test_series_without_examples_neither_crash_nor_fill_the_sample() -> None:
    """Two-scale series give no nested examples: a chunk of only those (as dask cuts
    them) is empty, and the capped sample never consists of them."""
    from perfpredict.model.nested import _nested_part, nested_examples
    from perfpredict.model.series import Series

    def series(n_scales: int, reps: int, name: str) -> Series:
        scale = np.repeat(2.0 ** np.arange(n_scales), reps)
        return Series(SeriesKey(name, "s", "", "", "", ""), "nodes", scale, 100.0 / scale + 1.0,
                      weak=False)

    short = [series(2, 1, f"short{i}") for i in range(19)]
    assert _nested_part(short, list(range(19)), 2).scale == []
    mixed = [series(4, 50, "long"), *short]
    for seed in range(8):
        data = nested_examples(mixed, max_examples=100, random_state=seed).arrays()
        assert np.unique(data["group"]).tolist() == [0.0]


class _ConstantTrees:
    """Stands in for the spread trees: the same log spread for every row."""

    def __init__(self, log_spread: float) -> None:
        self.log_spread = log_spread

    def predict(self, rows: np.ndarray) -> np.ndarray:
        return np.full(rows.shape[0], self.log_spread)


def _constant_spread(log_spread: float) -> dict[str, _ConstantTrees]:
    """Spread trees for every way of calibrating, each the same constant."""
    return dict.fromkeys(CALIBRATED_BY, _ConstantTrees(log_spread))


def test_interval_widths_scale_with_the_predicted_spread(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """The normalised conformal scores are multiplied back by the spread model's
    prediction: twice the spread, twice the log half-widths."""
    series = relearn_series[0].select(np.repeat([True, False], [6, 4]))  # a series with repeats
    scales = np.array([128.0, 1024.0, 8192.0])
    narrow, wide = (dataclasses.replace(relearn_predictor.model_,
                                        spread_trees=_constant_spread(np.log(s)))
                    for s in (0.5, 1.0))
    a, b = (m.predict_columns(series, scales) for m in (narrow, wide))
    np.testing.assert_allclose(np.log(b.upper_s / b.runtime_s),
                               2 * np.log(a.upper_s / a.runtime_s))
    np.testing.assert_allclose(np.log(b.lower_s / b.runtime_s),
                               2 * np.log(a.lower_s / a.runtime_s))


def test_exceedance_is_the_tail_beyond_the_quantile(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """The interval model answers P(runtime > walltime) directly: at the q quantile it is
    1 - q (more where few residuals make the bound a step in q: never less), it falls as
    the walltime grows, and it is 0.5 at the point prediction, above it below."""
    model = relearn_predictor.model_
    # between measured scales and beyond them: where the calibrated interval stands (at
    # a measured one the series' own repeats decide, tested below)
    series, scales = relearn_series[2], np.array([300.0, 2048.0, 16384.0])
    for q in (0.6, 0.9, 0.99):
        walltime = model.quantile(series, scales, q)
        tail = model.exceedance(series, scales, walltime)
        assert np.all(tail >= 1 - q - 2e-3) and np.any(np.abs(tail - (1 - q)) < 2e-3)
        assert np.all(model.exceedance(series, scales, walltime * 1.5) < 1 - q)
    median = model.quantile(series, scales, 0.5)
    assert np.all(model.exceedance(series, scales, median) == 0.5)
    longer = model.exceedance(series, scales[:1], median[0] * np.array([1.05, 1.2, 2.0]))
    assert np.all(np.diff(longer) <= 0) and longer[0] > longer[-1]
    # below the point prediction, the lower side: a walltime at the q quantile (q < 0.5)
    # is outrun by 1 - q of runs (never fewer), one far below it by nearly all (a cap)
    for q in (0.05, 0.3):
        tail = model.exceedance(series, scales, model.quantile(series, scales, q))
        assert np.all(tail >= 1 - q - 2e-3) and np.any(np.abs(tail - (1 - q)) < 2e-3)
    assert np.all(model.exceedance(series, scales, median / 100) > 0.999)


def _repeat_deviations(series: Series) -> np.ndarray:
    """The definition, run by run: |log| of a repeated run's runtime against the mean
    log runtime of the other runs at its scale (ascending)."""
    log_t = np.log(series.runtime_s)
    return np.sort([abs(log_t[i] - np.delete(log_t, i)[np.delete(series.scale, i) == p].mean())
                    for i, p in enumerate(series.scale)
                    if np.count_nonzero(series.scale == p) >= 2])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from([1.0, 2.0, 4.0]),
                                   st.floats(1.0, 1e4)), min_size=1, max_size=8),
                min_size=1, max_size=4))
def test_the_series_table_holds_each_repeated_runs_deviation(runs_per_series) -> None:  # type: ignore[no-untyped-def]
    """What the contexts and the noise floor read, vectorised over every run of every
    series, is the definition run by run, in the runs' own order; NaN for a run alone
    at its scale."""
    series_list = [Series(SeriesKey("a", f"s{i}", "", "", "", ""), "nodes",
                          np.array([p for p, _ in runs]), np.array([t for _, t in runs]),
                          weak=False) for i, runs in enumerate(runs_per_series)]
    table = SeriesTable.of(series_list)
    for i, series in enumerate(series_list):
        deviation = table.repeat_deviation_log[table.run_series() == i]
        alone = np.array([np.count_nonzero(series.scale == p) == 1 for p in series.scale])
        assert np.array_equal(np.isnan(deviation), alone)
        np.testing.assert_allclose(np.sort(deviation[~alone]), _repeat_deviations(series),
                                   atol=1e-12)


def test_a_series_measured_once_per_scale_gets_the_noise_floor(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """RELeARN measures each scale twice: the noise floor is learned from those repeats,
    and a series of single runs gets an interval no narrower than that noise, flagged."""
    from perfpredict.uncertainty.noise import NoiseFloor

    # two runs at a scale: each deviates from the other by their log ratio
    pair = Series(SeriesKey("a", "s", "", "", "", ""), "nodes", np.array([1.0, 1.0, 2.0]),
                  np.array([100.0, 110.0, 60.0]), weak=False)
    np.testing.assert_allclose(_repeat_deviations(pair), [np.log(1.1)] * 2)

    model = relearn_predictor.model_
    assert model.noise_floor.n_series == len(relearn_series)
    single = relearn_series[5]
    first_runs = np.unique(single.scale, return_index=True)[1]
    once = single.select(np.isin(np.arange(single.scale.size), first_runs))
    scales = once.scales
    half_width = model.noise_floor.half_width_log(0.9)
    assert half_width > 0.0 == NoiseFloor(np.empty(0), 0, {}).half_width_log(0.9)
    # a quiet curve: residuals a hundredth of the noise
    quiet = dataclasses.replace(model, spread_trees=_constant_spread(np.log(1e-4)))
    pred = quiet.predict_columns(once, scales, 0.9)
    np.testing.assert_allclose(np.log(pred.upper_s / pred.runtime_s), half_width)
    np.testing.assert_allclose(np.log(pred.runtime_s / pred.lower_s), half_width)
    assert pred.noise_floor.all()
    # a series with repeats shows its own noise: no floor (a step or more beyond its
    # measured range, past the ramp from its repeats' noise, the quiet curve's interval
    # stands)
    beyond = scales[-1] * np.array([2.0, 3.0])
    with_repeats = quiet.predict_columns(single, beyond, 0.9)
    assert not with_repeats.noise_floor.any()
    assert np.all(np.log(with_repeats.upper_s / with_repeats.runtime_s) < half_width / 10)
    # and the kill probability of a walltime just above the prediction is the noise's
    walltime = pred.runtime_s * np.exp(half_width)
    np.testing.assert_allclose(quiet.exceedance(once, scales, walltime), 0.05, atol=0.01)


def test_the_noise_floor_is_the_applications_own_where_three_series_have_repeats() -> None:
    """Codes differ in how much a run varies: an application with three or more series
    with repeats gets its own floor, one with fewer (or unknown) the pooled one."""
    from perfpredict.uncertainty.noise import NoiseFloor

    def pairs(app: str, ratio: float, n: int) -> list[Series]:
        return [Series(SeriesKey(app, f"s{i}", "", "", "", ""), "nodes",
                       np.array([1.0, 1.0, 2.0, 2.0]),
                       np.array([100.0, 100.0 * ratio, 60.0, 60.0 * ratio]), weak=False)
                for i in range(n)]

    series_list = pairs("noisy", 1.5, 3) + pairs("quiet", 1.01, 4) + pairs("few", 1.2, 2)
    table = SeriesTable.of(series_list)
    floor = NoiseFloor.fit(table.repeat_deviation_log, table.run_series(),
                           [s.key.app for s in series_list])
    assert sorted(floor.by_app) == ["noisy", "quiet"] and floor.n_series == 9
    np.testing.assert_allclose(floor.half_width_log(0.9, "noisy"), np.log(1.5))
    np.testing.assert_allclose(floor.half_width_log(0.9, "quiet"), np.log(1.01))
    pooled = floor.half_width_log(0.9)
    assert floor.half_width_log(0.9, "few") == floor.half_width_log(0.9, "new") == pooled
    assert np.log(1.01) < pooled <= np.log(1.5)
    assert floor.upper_tail(np.array([np.log(1.1)]), "noisy")[0] > floor.upper_tail(
        np.array([np.log(1.1)]), "quiet")[0] == 0.0
    again = NoiseFloor.from_dict(json.loads(json.dumps(floor.to_dict())))
    assert again.half_width_log(0.8, "noisy") == floor.half_width_log(0.8, "noisy")


def test_the_noise_floors_tail_is_read_off_its_deviations_not_its_largest() -> None:
    """With quantiles every half percent, the floor between 99.5% and 100% was the line
    to the largest deviation, one run 2,000 times its repeats (MLPerf ssd): half-width
    0.59 at 99.5%, 4.8 at 99.8% for deviations whose own 99.8% quantile is 0.95. A floor
    stored before the tail levels reads with the levels it was stored at."""
    from perfpredict.uncertainty.noise import NoiseFloor

    rng = np.random.default_rng(0)
    deviation = np.append(np.abs(rng.normal(0.0, 0.1, 20_000)), np.log(2000.0))
    floor = NoiseFloor.fit(deviation, np.arange(deviation.size), ["app"] * deviation.size)
    for confidence in (0.996, 0.998, 0.999):
        assert floor.half_width_log(confidence) == pytest.approx(
            np.quantile(deviation, confidence), rel=0.05)
    assert floor.half_width_log(0.9995) < 1.0 < np.log(2000.0)
    doc = floor.to_dict()
    old = NoiseFloor.from_dict({k: v for k, v in doc.items() if k != "levels"} | {
        "quantiles": NoiseFloor.fit(deviation[:201], np.arange(201), ["a"] * 201)
        .to_dict()["quantiles"]})
    assert old.levels.size != floor.levels.size  # read at the levels it was stored at
    assert NoiseFloor.from_dict(doc).half_width_log(0.998) == floor.half_width_log(0.998)


def test_a_repeat_at_a_measured_scale_gets_the_series_own_noise(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """At a scale a series measured, its estimate is the median of its runs there and a
    new run is one more draw of its run-to-run noise: with nine or more deviations of its
    own repeats, the interval is their conformal quantile, whatever the calibrated
    spread, and the kill probability of a walltime their conformal tail; between or
    beyond its measured scales, or with fewer repeats, the calibrated interval stands."""
    import math

    from perfpredict.uncertainty.noise import MIN_OWN_DEVIATIONS, RepeatNoise

    model = relearn_predictor.model_
    series = relearn_series[5]
    deviations = _repeat_deviations(series)
    assert deviations.size >= MIN_OWN_DEVIATIONS
    between = np.sqrt(series.scales[:2].prod())
    scales = np.array([series.scales[1], between, series.scales[-1] * 2])
    for spread in (1e-4, 0.3):  # a quiet and a wide calibrated spread
        wide = dataclasses.replace(model, spread_trees=_constant_spread(np.log(spread)))
        for confidence in (0.5, 0.8):
            pred = wide.predict_columns(series, scales, confidence)
            own = deviations[math.ceil((deviations.size + 1) * confidence) - 1]
            np.testing.assert_allclose(np.log(pred.upper_s[0] / pred.runtime_s[0]), own)
            np.testing.assert_allclose(np.log(pred.runtime_s[0] / pred.lower_s[0]), own)
            # the kill probability at that walltime is the repeats' tail there
            tail = wide.exceedance(series, scales[:1], pred.upper_s[:1])
            # a step more where deviations tie: two runs at a scale deviate alike
            assert (1 - confidence) / 2 <= tail[0] <= (1 - confidence) / 2 + 1 / (
                deviations.size + 1)
        # elsewhere, the calibrated spread decides
        quiet_or_wide = np.log(pred.upper_s[1:] / pred.runtime_s[1:])
        assert np.all(quiet_or_wide < 0.01) if spread < 0.01 else np.all(quiet_or_wide > 0.1)
    # a confidence the repeats cannot hold: the calibrated interval, no narrower than them
    quiet = dataclasses.replace(model, spread_trees=_constant_spread(np.log(1e-4)))
    assert RepeatNoise(deviations).half_width_log(0.99) is None
    pred = quiet.predict_columns(series, scales[:1], 0.99)
    np.testing.assert_allclose(np.log(pred.upper_s / pred.runtime_s), deviations[-1])
    # past their largest deviation the kill probability is the calibrated interval's too,
    # falling as the walltime grows (it stayed at the repeats' 1 / (2 (n + 1)))
    wide = dataclasses.replace(model, spread_trees=_constant_spread(np.log(0.3)))
    bound = wide.predict_columns(series, scales[:1], 0.99).upper_s[0]
    assert np.log(bound / pred.runtime_s[0]) > deviations[-1]
    tails = wide.exceedance(series, np.repeat(scales[:1], 2), np.array([bound, 2 * bound]))
    assert tails[1] < tails[0] <= 1 / (2 * (deviations.size + 1))


def test_an_estimate_from_the_artifact_is_the_prediction_from_the_runs(  # type: ignore[no-untyped-def]
        relearn_series, relearn_predictor) -> None:
    """An estimate reads a series from its artifact entry, which keeps one median per
    scale: it must still know the runs were repeated, or every deployed interval of a
    series with repeats is widened to the noise floor that its backtest never had (and
    says "one run per measured scale")."""
    from perfpredict.model.entry import SeriesEntry
    from perfpredict.overhead.features import fit_context

    model = relearn_predictor.model_
    quiet = dataclasses.replace(model, spread_trees=_constant_spread(np.log(1e-4)))
    repeated = relearn_series[5]
    first_runs = np.unique(repeated.scale, return_index=True)[1]
    once = repeated.select(np.isin(np.arange(repeated.scale.size), first_runs))
    scales = np.concatenate([repeated.scales, repeated.scales[-1] * np.array([1.5, 4.0])])
    for series, floored in ((repeated, False), (once, True)):
        from_runs = quiet.predict_columns(series, scales, 0.9)
        stored, ctx = SeriesEntry.of(fit_context(series)).context()
        from_entry = quiet.predict_columns(stored, scales, 0.9, ctx)
        assert from_entry.noise_floor.any() == floored
        for column in ("runtime_s", "lower_s", "upper_s", "noise_floor"):
            np.testing.assert_allclose(getattr(from_entry, column),
                                       getattr(from_runs, column), rtol=1e-12)
        np.testing.assert_allclose(quiet.exceedance(stored, scales, from_runs.upper_s, ctx),
                                   quiet.exceedance(series, scales, from_runs.upper_s),
                                   rtol=1e-12)


def test_trees_train_on_one_thread_with_a_seed_whatever_the_caller_asks(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 14, item 8: the same store gives the same trees on any machine, so XGBoost
    is told one thread and the seed, and a caller's parameters cannot change the threads."""
    import xgboost

    seen: dict[str, object] = {}
    real = xgboost.XGBRegressor

    class Recording(real):  # type: ignore[misc, valid-type]
        def __init__(self, **params: object) -> None:
            seen.update(params)
            super().__init__(**params)

    monkeypatch.setattr(xgboost, "XGBRegressor", Recording)
    with pytest.raises(TypeError):
        OverheadRegressor(n_jobs=4)  # type: ignore[call-arg]
    rng = np.random.default_rng(0)
    OverheadRegressor(n_estimators=5, random_state=7).fit(rng.normal(size=(50, 3)),
                                                           rng.normal(size=50))
    assert seen["n_jobs"] == 1 and seen["random_state"] == 7


def test_intervals_beyond_one_doubling_grow_at_least_with_the_distance(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """Calibrated on residuals that do not grow with distance, the interval d doublings
    out is still d times the one-doubling interval, and the kill probability of its
    upper bound is the interval's tail."""
    from perfpredict.uncertainty.conformal import DistanceConformal

    rng = np.random.default_rng(5)
    distance = rng.uniform(0, 5, 4000)
    flat = DistanceConformal().fit(rng.normal(0, 0.1, distance.size), distance)
    model = dataclasses.replace(relearn_predictor.model_, conformal={"strong": flat, "weak": flat},
                                spread_trees=_constant_spread(0.0))
    series = relearn_series[1]
    top = series.scales[-1]
    scales = top * 2.0 ** np.array([1.0, 3.0, 4.0])
    pred = model.predict_columns(series, scales, 0.9)
    half = np.log(pred.upper_s / pred.runtime_s)
    np.testing.assert_allclose(half[1:] / half[0], [3.0, 4.0], rtol=1e-9)
    np.testing.assert_allclose(model.exceedance(series, scales, pred.upper_s), 0.05, atol=2e-3)


def test_the_slope_drift_joins_the_base_beyond_the_measured_range_of_strong_scaling(relearn_series, relearn_strong) -> None:  # type: ignore[no-untyped-def]
    """The drift is the base's fourth member for strong-scaling series beyond their
    largest measured scale only: inside the range, and for weak scaling, the three laws
    answer as before."""
    strong, model = relearn_strong
    assert model.drift is not None
    without = dataclasses.replace(model, drift=None)
    series = strong[0]
    inside, beyond = series.scales, series.scales[-1] * np.array([2.0, 8.0])
    loaded = RuntimeModel.from_dict(model.to_dict()).drift
    assert loaded is not None
    np.testing.assert_array_equal(loaded.drift, model.drift.drift)
    earlier = {k: v for k, v in model.to_dict().items() if k != "drift"}
    assert RuntimeModel.from_dict(earlier).drift is None  # an artifact from before it
    np.testing.assert_array_equal(model.predict_columns(series, inside).runtime_s,
                                  without.predict_columns(series, inside).runtime_s)
    assert np.all(model.predict_columns(series, beyond).runtime_s
                  != without.predict_columns(series, beyond).runtime_s)
    weak = relearn_series[0]
    np.testing.assert_array_equal(model.predict_columns(weak, beyond).runtime_s,
                                  without.predict_columns(weak, beyond).runtime_s)


def test_beyond_the_measured_range_a_strong_scaling_base_goes_on_from_the_largest_scales_runs(relearn_strong) -> None:  # type: ignore[no-untyped-def]
    """Just beyond a strong-scaling series' largest measured scale the base (the estimate
    less its learned correction) is the median measured there, not where the laws put
    it, so an estimate does not step at the edge of the measured range; farther out the
    base keeps that move: its members' mean times the same factor."""
    from perfpredict.model.base_estimate import drift_log, edge_offset_log, ensemble_log
    from perfpredict.overhead.features import CANDIDATE_LAWS, SUMMARY_NAMES, law_log_predictions

    strong, model = relearn_strong
    series = strong[0]
    ctx = fit_context(series)
    p = ctx.scale_max * np.array([1.0 + 1e-9, 2.0, 8.0])
    got = model.predict_columns(series, p)
    assert not got.peer_series.any()
    base_log = np.log(got.runtime_s) - np.log(got.overhead_coefficient)
    assert base_log[0] == pytest.approx(np.log(ctx.medians_s[-1]), abs=1e-6)

    def law_matrix(scales: np.ndarray) -> np.ndarray:
        logs = law_log_predictions(ctx, scales)
        return np.column_stack([logs[name] for name in CANDIDATE_LAWS])

    move = edge_offset_log(law_matrix(ctx.scales[-1:]), np.log(ctx.medians_s[-1:]),
                           np.array([True]))[0]
    assert abs(move) > 1e-3  # the laws do not pass through the largest scale's runs
    n = p.size
    members_log = ensemble_log(law_matrix(p), drift_log(
        model.drift, np.full(n, True), p, np.full(n, ctx.scale_max),
        np.full(n, np.log(ctx.medians_s[-1])),
        np.full(n, ctx.summary[SUMMARY_NAMES.index("edge_slope")])))
    np.testing.assert_allclose(base_log, members_log + move, rtol=1e-9)


def test_the_correction_is_ramped_in_over_the_series_last_spacing(relearn_series, relearn_strong, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """At the largest measured scale an estimate is the median measured there and does
    not step just beyond it: the learned correction rises linearly in log scale from
    nothing there to all of it one step of the series' own last spacing out (at most a
    doubling), and training's nested examples carry their context's spacing to be
    ramped alike."""
    from perfpredict.model.base_estimate import correction_ramp
    from perfpredict.model.nested import nested_examples

    np.testing.assert_allclose(
        correction_ramp(np.array([-1.0, 0.0, 0.25, 0.5, 0.75, 3.0, 0.5, 0.5]),
                        np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 4.0, np.nan])),
        [0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 0.5, 0.5])
    strong, model = relearn_strong
    series = strong[0]
    ctx = fit_context(series)
    spacing = np.log2(ctx.scales[-1] / ctx.scales[-2])
    assert 0 < spacing <= 1
    got = model.predict_columns(series, ctx.scale_max * np.array([1.0 + 1e-9, 2.0 ** spacing]))
    assert got.runtime_s[0] == pytest.approx(ctx.medians_s[-1], rel=1e-6)
    assert abs(np.log(got.overhead_coefficient[1])) > 1e-3  # in full one step out
    # within the step, the correction a step out, ramped (read at the distance itself,
    # the trees' answer was blended with their answer at the edge, which no example
    # taught, and weak scaling's estimates dipped)
    for fitted, asked in ((model, series), (relearn_predictor.model_,
                                            relearn_series[0])):
        asked_ctx = fit_context(asked)
        step = min(np.log2(asked_ctx.scales[-1] / asked_ctx.scales[-2]), 1.0)
        share = np.array([0.1, 0.3, 0.6, 0.9, 1.0])
        coefficient = fitted.predict_columns(
            asked, asked_ctx.scale_max * 2.0 ** (share * step)).overhead_coefficient
        np.testing.assert_allclose(np.log(coefficient), share * np.log(coefficient[-1]),
                                   rtol=1e-9, atol=1e-12)
    data = nested_examples([series]).arrays()
    beyond = data["scale"] > data["scale_max"]  # contexts that are cuts of the series
    for top, step in zip(data["scale_max"][beyond], data["edge_spacing_log2"][beyond],
                         strict=True):
        below = series.scales[series.scales < top]
        assert step == pytest.approx(np.log2(top / below[-1]), abs=1e-12)


def test_the_interval_is_ramped_like_the_estimate(relearn_series, relearn_predictor, relearn_strong) -> None:  # type: ignore[no-untyped-def]
    """Within a step of the series' last spacing beyond its largest measured scale the
    interval goes from the one there to the calibrated one a step out, its log bounds
    blended as the correction is ramped in: it neither jumps at the edge (RELeARN's did,
    from +-0.5% to +-13%, then narrowed as the node count grew) nor narrows as it grows,
    and a walltime on a bound there is outrun no more often than the bound's confidence
    says."""
    model = relearn_predictor.model_
    strong_model = relearn_strong[1]
    for fitted, series in ((model, relearn_series[0]),
                           (strong_model, dataclasses.replace(relearn_series[0], weak=False))):
        ctx = fit_context(series)
        step = np.log2(ctx.scales[-1] / ctx.scales[-2])
        distance = step * np.array([0.0, 1e-6, 0.25, 0.5, 0.75, 1.0])
        got = fitted.predict_columns(series, ctx.scale_max * 2.0 ** distance)
        width = np.log(got.upper_s / got.lower_s)
        lower = np.log(got.lower_s / got.runtime_s)
        upper = np.log(got.upper_s / got.runtime_s)
        share = distance / step
        np.testing.assert_allclose(lower[1:], (1 - share[1:]) * lower[0] + share[1:] * lower[-1],
                                   rtol=1e-4, atol=1e-9)
        np.testing.assert_allclose(upper[1:], (1 - share[1:]) * upper[0] + share[1:] * upper[-1],
                                   rtol=1e-4, atol=1e-9)
        assert width[-1] > width[0]  # the calibrated interval a step out is the wider
        assert np.all(np.diff(width) > 0)
        # (few residuals make a bound a step in the confidence: no more than 0.05)
        kill = fitted.exceedance(series, ctx.scale_max * 2.0 ** distance[2:5],
                                 got.upper_s[2:5])
        assert np.all((kill > 0.04) & (kill <= 0.05 + 1e-9))


def test_a_fixed_work_interval_reaches_no_lower_than_ideal_scaling(relearn_series, relearn_strong) -> None:  # type: ignore[no-untyped-def]
    """Beyond the largest measured scale a strong-scaling interval of fixed work stops
    at ideal scaling from the lower end of the interval there (or at the estimate, where
    that lies above ideal), so the lower bound never jumps up past the measurements; a
    series whose runs time a target (its hint says so) and weak scaling keep the
    calibrated lower side, which reaches below it."""
    from perfpredict.model.series import trains_to_target

    assert trains_to_target("strong (fixed task: train to target quality)")
    assert trains_to_target("strong(v0.7: single-model time-to-train)")
    assert not trains_to_target("strong") and not trains_to_target("")
    strong, model = relearn_strong
    series = strong[0]
    ctx = fit_context(series)
    p = ctx.scale_max * np.array([0.5, 2.0, 8.0, 64.0])
    edge = model.predict_columns(series, np.array([ctx.scale_max]))
    ideal_s = edge.lower_s[0] * ctx.scale_max / p
    got = model.predict_columns(series, p)
    beyond = p > ctx.scale_max
    # continuous at the edge: just past it, no higher than at it
    just_past = model.predict_columns(series, np.array([ctx.scale_max * 1.001]))
    assert just_past.lower_s[0] <= edge.lower_s[0]
    bound = np.minimum(ideal_s, got.runtime_s)
    assert np.all(got.lower_s[beyond] >= bound[beyond] * (1 - 1e-12))
    assert np.isclose(got.lower_s[beyond], bound[beyond], rtol=1e-9).any()  # it binds
    to_target = model.predict_columns(dataclasses.replace(series, fixed_work=False), p)
    np.testing.assert_allclose(to_target.runtime_s, got.runtime_s)
    np.testing.assert_allclose(to_target.upper_s, got.upper_s)
    assert np.any(to_target.lower_s[beyond] < ideal_s[beyond])  # what the bound stops
    assert to_target.lower_s[0] == got.lower_s[0]  # inside the measured range: as before
    weak = model.predict_columns(relearn_series[0], p)
    assert np.any(weak.lower_s[beyond] < ideal_s[beyond])
    entry = SeriesEntry.of(fit_context(dataclasses.replace(series, fixed_work=False)))
    assert SeriesEntry.from_dict(entry.to_dict()).series().fixed_work is False


def test_a_fixed_work_estimate_is_no_faster_than_ideal_scaling(relearn_strong) -> None:  # type: ignore[no-untyped-def]
    """Runs that beat ideal scaling (a cache effect: 1,000 s, 400 s, 150 s at 1, 2 and 4
    units) had their laws carry the super-linear speed-up on without end; beyond the
    largest measured scale the estimate of fixed work is no faster than ideal scaling
    from the median there, while time-to-train, which may beat it, keeps the laws'."""
    strong, model = relearn_strong
    scales = np.array([1.0, 2.0, 4.0])
    fast = Series(SeriesKey("super", "s", "", "", "", ""), "nodes", scales,
                  np.array([1000.0, 400.0, 150.0]), weak=False)
    p = np.array([8.0, 64.0, 1e6])
    ideal_s = 150.0 * 4.0 / p
    got = model.predict_columns(fast, p)
    assert np.all(got.runtime_s >= ideal_s * (1 - 1e-12))
    np.testing.assert_allclose(got.runtime_s[1:], ideal_s[1:], rtol=1e-9)  # it binds
    assert np.all(got.lower_s <= got.runtime_s) and np.all(got.upper_s >= got.runtime_s)
    to_target = model.predict_columns(dataclasses.replace(fast, fixed_work=False), p)
    assert np.all(to_target.runtime_s[1:] < ideal_s[1:])


def test_a_weak_scaling_estimate_goes_on_from_the_largest_scales_runs(  # type: ignore[no-untyped-def]
        relearn_series, relearn_predictor) -> None:
    """One node past a weak-scaling series' largest measured scale the estimate was the
    laws' mean, 26% below the median measured there (RELeARN: 1,275.8 s at 128 nodes,
    937.7 s at 129); the base is moved onto that median until the learned correction
    takes over, one step of the series' spacing out."""
    model = relearn_predictor.model_
    series = relearn_series[0]
    ctx = fit_context(series)
    got = model.predict_columns(series, ctx.scale_max * np.array([1.0, 1.0 + 1e-6]))
    assert got.runtime_s[1] == pytest.approx(got.runtime_s[0], rel=1e-4)


def test_names_told_apart_by_letter_case_each_find_their_own_series(  # type: ignore[no-untyped-def]
        relearn_series, relearn_predictor) -> None:
    """"MyCode" and "mycode" (ingest warns of them): an estimate for either answered
    from the better measured of the two, so the other was unreachable."""
    from perfpredict.estimate.lookup import InlineSeries, Query, find_series

    entries = []
    for app, series in (("MyCode", relearn_series[0]), ("mycode", relearn_series[1])):
        named = dataclasses.replace(series, key=series.key._replace(app=app))
        entries.append(SeriesEntry.of(fit_context(named)).to_dict())
    found = InlineSeries.of_entries(entries)
    for app in ("MyCode", "mycode"):
        match = find_series(found, relearn_predictor.model_, Query(app=app, nodes=4))
        assert match.entry.key.app == app
    with pytest.raises(BadInputError) as either:  # no exact spelling: either may be meant
        find_series(found, relearn_predictor.model_, Query(app="MYCODE", nodes=4))
    assert str(either.value) == ("application 'MYCODE' matches 'MyCode', 'mycode', which "
                                 "differ only in letter case or spacing; give one of them "
                                 "exactly")
    spaced = find_series(found, relearn_predictor.model_, Query(app=" mycode ", nodes=4))
    assert spaced.entry.key.app == "mycode"  # white space aside, before case


@pytest.mark.parametrize("part", ["system", "problem_size", "variant"])
def test_a_system_size_or_variant_is_found_as_an_application_is(  # type: ignore[no-untyped-def]
        relearn_series, relearn_predictor, part: str) -> None:
    """The same rule for every name a query narrows by (:func:`resolve_name`): the name
    as given, else the one equal but for white space and case; two such spellings
    ("Lichtenberg", "LICHTENBERG") were both read and the best measured answered, one
    unreachable but by an exact name."""
    from perfpredict.estimate.lookup import InlineSeries, Query, find_series

    series = relearn_series[0]
    entries = [SeriesEntry.of(fit_context(dataclasses.replace(
        series, key=series.key._replace(**{part: name})))).to_dict()
        for name in ("Big Iron", "BIG IRON")]
    model = relearn_predictor.model_
    for name in ("Big Iron", "BIG IRON"):
        query = Query(app=series.key.app, nodes=4, **{part: name})  # type: ignore[arg-type]
        assert getattr(find_series(InlineSeries.of_entries(entries), model, query).entry.key, part) == name
    query = Query(app=series.key.app, nodes=4, **{part: "big iron"})  # type: ignore[arg-type]
    label = part.replace("_", " ")
    with pytest.raises(BadInputError, match=rf"^{label} 'big iron' matches 'BIG IRON', "
                       "'Big Iron', which differ only in letter case or spacing; give one of "
                       "them exactly$"):
        find_series(InlineSeries.of_entries(entries), model, query)
    one = InlineSeries.of_entries(entries[:1])
    assert getattr(find_series(one, model, query).entry.key, part) == "Big Iron"
    spaced = dataclasses.replace(query, **{part: " BIG IRON "})
    assert getattr(find_series(one, model, spaced).entry.key, part) == "Big Iron"


def test_a_system_is_found_by_an_alias_its_catalog_entry_gives(  # type: ignore[no-untyped-def]
        relearn_series, relearn_predictor, tmp_path: Path) -> None:
    """``aliases = ["big-iron"]`` in a ``systems add`` file: an estimate with ``--system
    big-iron`` said the application had no runs on it."""
    from perfpredict.catalog import SystemSpec, add_system
    from perfpredict.errors import NotFoundError
    from perfpredict.estimate.lookup import InlineSeries, Query, find_series
    from perfpredict.store import open_store

    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    add_system(store, SystemSpec(name="Xmachine", aliases=("big-iron",)))
    store.dispose()
    series = relearn_series[0]
    named = dataclasses.replace(series, key=series.key._replace(system="Xmachine"))
    found = InlineSeries.of_entries([SeriesEntry.of(fit_context(named)).to_dict()])
    model = relearn_predictor.model_
    query = Query(app=series.key.app, nodes=4, system="Big_Iron")
    assert find_series(found, model, query, url).entry.key.system == "Xmachine"
    with pytest.raises(NotFoundError, match="no series with system 'Big_Iron'"):
        find_series(found, model, query, None)  # no store: no catalog to ask
    with pytest.raises(NotFoundError, match="no series with system 'other'"):
        find_series(found, model, dataclasses.replace(query, system="other"), url)


def test_a_strong_scaling_series_sees_its_applications_exponent(relearn_series, relearn_strong) -> None:  # type: ignore[no-untyped-def]
    """The pooled exponent is a feature of strong-scaling series of an application with
    evidence only; an artifact from before it loads, with no evidence and a feature
    list one shorter (its trees never read the appended feature)."""
    strong, model = relearn_strong
    series = strong[0]
    ctx = fit_context(series.select(series.scale <= series.scales[2]))
    beyond = series.scales[-1] * np.array([2.0, 8.0])
    assert np.all(model.pooled_exponent_log(series, ctx, beyond) != 0.0)
    weak = relearn_series[0]
    assert np.all(model.pooled_exponent_log(weak, ctx, beyond) == 0.0)
    doc = model.to_dict()
    assert RuntimeModel.from_dict(doc).exponent_evidence == model.exponent_evidence
    earlier = {k: v for k, v in doc.items() if k != "exponent_evidence"}
    earlier["feature_names"] = doc["feature_names"][:-1]
    loaded = RuntimeModel.from_dict(earlier)
    assert loaded.exponent_evidence == {}
    assert np.all(loaded.pooled_exponent_log(series, ctx, beyond) == 0.0)


def _alone_and_borrowing(relearn_series, n_own: int):  # type: ignore[no-untyped-def]
    """A store of one strong-scaling application (``n_own`` of RELeARN's series, read as
    strong scaling) and the models trained on it alone and borrowing eight others."""
    own = [dataclasses.replace(s, key=s.key._replace(app="mine"), weak=False)
           for s in relearn_series[:n_own]]
    others = [dataclasses.replace(s, key=s.key._replace(app=f"code{i % 8}"), weak=False)
              for i, s in enumerate(relearn_series)]
    return (own, HybridPredictor().fit(own).model_,
            HybridPredictor().fit(own, borrowed_series=others).model_)


def test_borrowed_series_calibrate_the_intervals_and_teach_half_the_correction(relearn_series) -> None:  # type: ignore[no-untyped-def]
    """A store of one strong-scaling application borrows eight others: its intervals are
    calibrated on applications left out, and its correction is the mean of trees learned
    on its own series and trees learned with the borrowed ones too, while what it counts
    as learned from (series, examples) stays its own."""
    own, alone, borrowed = _alone_and_borrowing(relearn_series, 12)
    assert alone.calibrated_by["strong"] == "series"
    assert borrowed.calibrated_by["strong"] == "application"
    assert borrowed.n_series == alone.n_series == len(own)
    assert borrowed.n_examples == alone.n_examples
    # two sets of trees, each as many as the store's own
    assert (borrowed.correction_trees["strong"].roots.size
            == 2 * alone.correction_trees["strong"].roots.size)
    p = np.array([own[0].scale.max() * 4])
    a, b = (m.predict(own[0], p)[0] for m in (alone, borrowed))
    assert (b.upper_s - b.lower_s) != pytest.approx(a.upper_s - a.lower_s)


def test_a_store_of_few_series_applies_half_a_borrowed_correction(relearn_series) -> None:  # type: ignore[no-untyped-def]
    """Four strong-scaling series are too few to learn or judge a correction: alone the
    store has none (its estimates are the laws' mean), borrowing it applies the mean of
    trees learned on its own series and on the borrowed ones too, unjudged."""
    own, alone, borrowed = _alone_and_borrowing(relearn_series, 4)
    assert alone.apply_correction == {"strong": False, "weak": False}
    assert borrowed.apply_correction == {"strong": True, "weak": False}  # no weak series
    assert (borrowed.correction_trees["strong"].roots.size
            == 2 * alone.correction_trees["strong"].roots.size)
    # without weak scaling of its own, both kinds share one set of trees, written once
    assert "arrays" in borrowed.to_dict()["correction_trees"]
    series = own[0]
    ctx = fit_context(series.select(series.scale <= series.scales[2]))
    beyond = series.scales[-1] * np.array([2.0, 8.0])
    plain = alone.predict_columns(series, beyond, ctx=ctx).runtime_s
    corrected = borrowed.predict_columns(series, beyond, ctx=ctx).runtime_s
    assert np.all(corrected != plain)


def test_weak_scaling_in_a_borrowing_store_learns_its_correction_with_the_borrowed(relearn_series) -> None:  # type: ignore[no-untyped-def]
    """Beside fewer than 8 strong-scaling applications, a store that borrows learns weak
    scaling's correction wholly with the borrowed series (trees on every example), and
    half of strong scaling's (the mean of those and of trees on its own examples); the
    artifact keeps the two apart, and an estimate read from it predicts as trained."""
    own_strong = [dataclasses.replace(s, key=s.key._replace(app="mine"), weak=False)
                  for s in relearn_series[:8]]
    own_weak = relearn_series[8:16]
    others = [dataclasses.replace(s, key=s.key._replace(app=f"code{i % 8}"), weak=False)
              for i, s in enumerate(relearn_series)]
    model = HybridPredictor().fit(own_strong + own_weak, borrowed_series=others).model_
    trees = model.correction_trees
    assert trees["strong"].roots.size == 2 * trees["weak"].roots.size
    doc = json.loads(json.dumps(model.to_dict()))
    assert set(doc["correction_trees"]) == {"strong", "weak"}
    loaded = RuntimeModel.from_dict(doc)
    for series in (own_weak[0], own_strong[0]):
        beyond = series.scales[-1] * np.array([2.0, 8.0])
        np.testing.assert_allclose(loaded.predict_columns(series, beyond).runtime_s,
                                   model.predict_columns(series, beyond).runtime_s)


def test_an_application_with_enough_series_learns_its_own_half_of_the_correction(relearn_series) -> None:  # type: ignore[no-untyped-def]
    """In a store that borrows, an application of eight or more strong-scaling series
    beside another learns its own half of the correction on its examples alone (one
    code's shape must not carry to the other, as CP2K's did to Castro's); one of fewer
    series keeps the store's own half; the artifact keeps the trees per application,
    and one from before them loads without any."""
    big = [dataclasses.replace(s, key=s.key._replace(app="big"), weak=False)
           for s in relearn_series[:10]]
    small = [dataclasses.replace(s, key=s.key._replace(app="small"), weak=False)
             for s in relearn_series[10:14]]
    others = [dataclasses.replace(s, key=s.key._replace(app=f"code{i % 8}"), weak=False)
              for i, s in enumerate(relearn_series)]
    model = HybridPredictor().fit(big + small, borrowed_series=others).model_
    assert set(model.app_correction_trees) == {"big"}
    assert (model.app_correction_trees["big"].roots.size
            == model.correction_trees["strong"].roots.size)  # its own trees and every's
    doc = json.loads(json.dumps(model.to_dict()))
    loaded = RuntimeModel.from_dict(doc)
    before = RuntimeModel.from_dict({k: v for k, v in doc.items()
                                     if k != "app_correction_trees"})
    assert before.app_correction_trees == {}
    for series, own_trees in ((big[0], True), (small[0], False)):
        beyond = series.scales[-1] * np.array([2.0, 8.0])
        predicted = model.predict_columns(series, beyond).runtime_s
        np.testing.assert_allclose(loaded.predict_columns(series, beyond).runtime_s,
                                   predicted)
        # without the per-application trees, only the big application's estimate moves
        moved = before.predict_columns(series, beyond).runtime_s != predicted
        assert moved.all() if own_trees else not moved.any()


def test_up_to_the_largest_measured_scale_the_base_is_moved_onto_the_measured_runs(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    """At a measured scale the estimate is the median of the runs there; between two, the
    laws' mean moved by their misses at the two, interpolated in log scale; below the
    range by the miss at the smallest; beyond the range, in a weak-scaling series (these
    are), it is not moved."""
    from perfpredict.model.base_estimate import ENSEMBLE
    from perfpredict.overhead.features import law_log_predictions

    series = relearn_series[0]
    ctx = fit_context(series)
    measured = relearn_predictor.predict_columns(series, ctx.scales).runtime_s
    np.testing.assert_allclose(measured, ctx.medians_s, rtol=1e-12)

    def laws_mean_log(p: np.ndarray) -> np.ndarray:
        logs = law_log_predictions(ctx, p)
        return np.mean([logs[name] for name in ENSEMBLE], axis=0)

    miss = np.log(ctx.medians_s) - laws_mean_log(ctx.scales)
    assert np.all(miss != 0)  # the laws do not pass through the runs
    between = np.sqrt(ctx.scales[:-1] * ctx.scales[1:])  # halfway in log scale
    got = np.log(relearn_predictor.predict_columns(series, between).runtime_s)
    np.testing.assert_allclose(got, laws_mean_log(between) + (miss[:-1] + miss[1:]) / 2,
                               rtol=1e-12)
    below = ctx.scales[:1] / 2.0  # below the range: moved by the smallest scale's miss
    np.testing.assert_allclose(np.log(relearn_predictor.predict_columns(series, below)
                                      .runtime_s), laws_mean_log(below) + miss[0], rtol=1e-12)
    beyond = relearn_predictor.predict_columns(series, ctx.scales[-1:] * 2.0)
    np.testing.assert_allclose(np.log(beyond.runtime_s),
                               laws_mean_log(ctx.scales[-1:] * 2.0)
                               + np.log(beyond.overhead_coefficient), rtol=1e-12)


def test_training_moves_interpolation_examples_as_the_estimate_moves_its_base(relearn_series) -> None:  # type: ignore[no-untyped-def]
    """Each interior example (a scale left out of a cut of its series) is moved by what an
    estimate from the cut's other scales would be moved by, so that the intervals between
    measured scales are calibrated on the predictions made there."""
    from perfpredict.model.base_estimate import edge_offset_log, measured_offset_at
    from perfpredict.model.nested import nested_examples

    series = relearn_series[0]
    data = nested_examples([series]).arrays()
    inside = data["scale"] <= data["scale_max"]
    assert inside.any() and np.any(data["measured_offset_log"][inside] != 0)
    assert np.all(data["measured_offset_log"][~inside] == 0)
    for scale, top, offset in zip(data["scale"][inside], data["scale_max"][inside],
                                  data["measured_offset_log"][inside], strict=True):
        cut = series.select((series.scale != scale) & (series.scale <= top))
        ctx = fit_context(cut)
        assert offset == pytest.approx(measured_offset_at(
            ctx, np.array([scale]), strong=False, with_drift=False)[0], abs=1e-12)
    # beyond a strong-scaling context, training moves the base as an estimate from that
    # context would (fit.py adds edge_offset_log of these to measured_offset_log)
    strong = dataclasses.replace(series, weak=False)
    data = nested_examples([strong]).arrays()
    beyond = np.flatnonzero(data["scale"] > data["scale_max"])
    assert beyond.size
    moves = edge_offset_log(data["edge_law_logs"], data["edge_log_runtime"],
                            np.full(data["scale"].size, True))
    for i in beyond:
        ctx = fit_context(strong.select(strong.scale <= data["scale_max"][i]))
        assert moves[i] == pytest.approx(measured_offset_at(
            ctx, data["scale"][i:i + 1], strong=True, with_drift=True)[0], abs=1e-9)


def test_estimates_beyond_the_measured_range_are_continuous_in_the_node_count() -> None:
    """Trees answer in steps: read at exact distances, the bundled predictor's estimates
    jumped by 0.07 in log (median over its strong-scaling series) to 0.20 within 1/256
    of a doubling, and rose and fell as the node count grew. Read off a grid of distances
    and blended between, no estimate moves by more than its slope does (at most 0.007
    per 1/256 of a doubling)."""
    from bench.estimate_shape import bundled_series

    loaded, trained = bundled_series()
    largest_steps = []
    for entry, series, ctx in trained:
        if entry.weak:
            continue
        p = ctx.scale_max * 2.0 ** (np.arange(1, 2 * 128) / 128)
        runtime_s = loaded.predictor.predict_columns(series, p, 0.9, ctx).runtime_s
        largest_steps.append(np.abs(np.diff(np.log(runtime_s))).max())
    assert len(largest_steps) > 100
    assert max(largest_steps) < 0.03, sorted(largest_steps)[-5:]
