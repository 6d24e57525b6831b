from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from perfpredict import artifact, datasets
from perfpredict.errors import ArtifactError
from perfpredict.overhead.regressor import OverheadRegressor
from perfpredict.overhead.trees import TABLE_DTYPES, TreeEnsemble
from perfpredict.predictor import HybridPredictor
from perfpredict.series import Series, SeriesKey, build_series


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
    """The table an artifact stores beside XGBoost's JSON predicts bit for bit as the
    JSON does: on the shipped predictor's two boosters, over random rows with NaNs."""
    from perfpredict.estimate import bundled_artifact_path

    doc = artifact.read_file(bundled_artifact_path())["predictor"]
    rng = np.random.default_rng(2)
    x = rng.normal(scale=3.0, size=(5000, len(doc["feature_names"])))
    x[rng.random(x.shape) < 0.1] = np.nan
    for name in ("booster", "spread_booster"):
        from_json = TreeEnsemble.from_xgboost_json(doc[f"{name}_json"])
        stored = TreeEnsemble.from_table(json.loads(json.dumps(doc[f"{name}_table"])))
        _assert_same_trees(stored, from_json)
        _assert_same_trees(TreeEnsemble.from_table(from_json.to_table()), from_json)
        assert np.array_equal(stored.predict(x), from_json.predict(x))


def test_predictor_round_trips_through_a_sealed_artifact(relearn_series, relearn_predictor) -> None:  # type: ignore[no-untyped-def]
    predictor = relearn_predictor
    text = artifact.dumps({"kind": "test", "predictor": predictor.to_dict()})
    rebuilt = HybridPredictor.from_dict(artifact.loads(text, "test")["predictor"])
    series = relearn_series[3]
    scales = np.array([512.0, 1024, 4096])
    a = predictor.predict(series, scales)
    b = rebuilt.predict(series, scales)
    assert [x.runtime_s for x in a] == pytest.approx([x.runtime_s for x in b])
    assert [x.upper_s for x in a] == pytest.approx([x.upper_s for x in b])


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
    assert predictor.app_rate("never-trained-app") == 0.0
    assert predictor.app_rate(known.key.app) != 0.0
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
    _, before = predictor._fit_app_evidence(relearn_series, group, target, weight, distance)
    changed = target.copy()
    changed[group == 7] += 1.0
    _, after = predictor._fit_app_evidence(relearn_series, group, changed, weight, distance)
    assert after[7] == before[7]
    assert np.unique(before).size <= predictor.n_folds
    assert (after != before).sum() >= n - n // predictor.n_folds - 1


def test_a_new_application_gets_intervals_calibrated_on_left_out_applications() -> None:
    """In the shipped predictor LULESH is one series, a new application: its intervals
    come from trees that never saw the application, which err as widely as the bundled
    applications differ, and are wider than the same runs get as a series of RELeARN, a
    known application whose own series agree closely."""
    from perfpredict.estimate import LoadedPredictor, bundled_artifact_path

    loaded = LoadedPredictor(artifact.read_file(bundled_artifact_path()), "bundled")
    predictor = loaded.predictor
    assert predictor.is_new_app("LULESH 2.0.3") and not predictor.is_new_app("RELeARN")
    assert predictor.is_new_app("an application never trained on")
    series, ctx = loaded.series_context(loaded.entries.of_app("LULESH 2.0.3")[0])
    as_known = dataclasses.replace(series, key=series.key._replace(app="RELeARN"))
    scales = np.array([100.0, 512.0, 2048.0])
    for new, known in zip(predictor.predict(series, scales, ctx=ctx),
                          predictor.predict(as_known, scales, ctx=ctx), strict=True):
        assert new.upper_s / new.lower_s > known.upper_s / known.lower_s


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


def test_artifact_verifies_as_written_and_reformatted() -> None:
    text = artifact.dumps({"kind": "test", "value": 1.5, "nested": {"b": [1, 2], "a": None}})
    assert text.endswith(f'"sha256":"{json.loads(text)["sha256"]}"}}')
    assert artifact.loads(text, "test")["nested"] == {"b": [1, 2], "a": None}
    reformatted = json.dumps(json.loads(text), indent=2)
    assert artifact.loads(reformatted, "test") == artifact.loads(text, "test")


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
    from perfpredict.overhead.contexts import SeriesTable
    from perfpredict.predictor import _examples_per_run, nested_examples

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
    from perfpredict.predictor import _nested_part, nested_examples
    from perfpredict.series import Series

    def series(n_scales: int, reps: int, name: str) -> Series:
        scale = np.repeat(2.0 ** np.arange(n_scales), reps)
        return Series((name, "s", "", "", ""), "nodes", scale, 100.0 / scale + 1.0,
                      weak=False)

    short = [series(2, 1, f"short{i}") for i in range(19)]
    assert _nested_part(short, list(range(19)), 2).scale == []
    mixed = [series(4, 50, "long"), *short]
    for seed in range(8):
        data = nested_examples(mixed, max_examples=100, random_state=seed).arrays()
        assert np.unique(data["group"]).tolist() == [0.0]


def test_batch_columns_match_one_estimate_at_a_time() -> None:
    from perfpredict.estimate import BATCH_COLUMNS, Query, load_predictor

    predictor = load_predictor(None)
    queries = [Query(app="bert", nodes=n) for n in (1, 8, 64, 8, 512)]
    queries += [Query(app="RELeARN", nodes=n, ranks_per_node=4) for n in (16, 1024)]
    columns = predictor.estimate_columns(queries, 0.8)
    for i, query in enumerate(queries):
        one = predictor.estimate(query, 0.8).as_dict()
        assert [one[c] for c in BATCH_COLUMNS] == [columns[c][i] for c in BATCH_COLUMNS]
