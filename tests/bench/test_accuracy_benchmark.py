"""The accuracy benchmark's stores of a few series (``--small-stores K``), its stores
shaped like a center's (``--center-stores K``) and its comparison across stores
(``--across-stores``), on the bundled Castro and PencilFFTs data sets (BSD-3 and MIT, so
present on every clone)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def castro_store(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from bench.accuracy_benchmark import build_store

    path = Path(tmp_path_factory.mktemp("small")) / "castro.db"
    store = build_store(f"sqlite:///{path}", ("castro_scaling",))
    yield store
    store.dispose()


@pytest.mark.slow
def test_small_stores_backtest_draws_of_k_series_and_pool_them(castro_store) -> None:  # type: ignore[no-untyped-def]
    from bench.accuracy_benchmark import small_stores

    table = small_stores(castro_store, "extrapolate", n_series=3, repeats=2)
    hybrid = {r["group"]: r for r in table if r["method"] == "hybrid"}
    assert set(hybrid) == {"castro_scaling", "all"}
    # two draws of three series each: three to six distinct series were tested
    assert 3 <= hybrid["castro_scaling"]["n_series"] <= 6
    assert hybrid["castro_scaling"]["coverage"] is not None
    assert {r["method"] for r in table} >= {"hybrid", "amdahl", "amdahl_log", "power"}
    # the draws are seeded: the same call gives the same table
    assert small_stores(castro_store, "extrapolate", n_series=3, repeats=2) == table


def test_a_data_set_of_no_more_series_than_k_is_not_drawn_from(castro_store) -> None:  # type: ignore[no-untyped-def]
    from bench.accuracy_benchmark import small_stores

    assert small_stores(castro_store, "extrapolate", n_series=10_000, repeats=1) == []


def test_a_center_store_holds_k_series_of_every_application(castro_store) -> None:  # type: ignore[no-untyped-def]
    """Each draw is one store holding K series of each of Castro's two applications
    (flame_wave and wdmerger, 19 and 12 series of five or more scales), all of an
    application with fewer; the draws are seeded and differ from each other."""
    from collections import Counter

    from bench.accuracy_benchmark import _drawable, center_draws

    series = _drawable(castro_store).series
    app_of = {key: app for _, app, key, _ in series}
    assert Counter(app_of.values()) == {"Castro-flame_wave": 19, "Castro-wdmerger": 12}
    draws = center_draws(series, per_application=2, repeats=3, seed=7)
    assert [seed for _, _, seed in draws] == [7, 8, 9]
    for picked, data_sets, _ in draws:
        assert data_sets == {"castro_scaling"}
        assert len(set(picked)) == len(picked)
        assert Counter(app_of[key] for key in picked) == {"Castro-flame_wave": 2,
                                                          "Castro-wdmerger": 2}
    assert len({tuple(picked) for picked, _, _ in draws}) == 3
    assert center_draws(series, per_application=2, repeats=3, seed=7) == draws
    (everything, _, _), = center_draws(series, per_application=50, repeats=1)
    assert sorted(everything) == sorted(app_of)


@pytest.mark.slow
def test_center_stores_backtest_each_draw_as_one_store(castro_store) -> None:  # type: ignore[no-untyped-def]
    """Two draws of one series per application: every method predicts the same test
    runs, of two to four distinct series."""
    from bench.accuracy_benchmark import center_stores

    table = center_stores(castro_store, "extrapolate", per_application=1, repeats=2)
    rows = [r for r in table if r["group"] == "castro_scaling"]
    assert {r["method"] for r in rows} >= {"hybrid", "amdahl", "amdahl_log", "power",
                                           "blackbox_xgboost"}
    assert len({(r["n_series"], r["n_runs"]) for r in rows}) == 1
    assert 2 <= rows[0]["n_series"] <= 4
    assert next(r for r in rows if r["method"] == "hybrid")["coverage"] is not None


@pytest.mark.slow
def test_across_stores_reports_each_store_as_its_own_backtest() -> None:
    """One row per store and split, whose pooled figures are those of the same backtest
    run on its own, with every judged data set of the store listed."""
    from bench.accuracy_benchmark import (
        CENTER_DRAWS,
        BenchStore,
        across_stores,
        build_store,
        center_stores,
    )
    from perfpredict.evaluate import evaluate
    from perfpredict.evaluate.metrics import acceptance

    names = ("castro_scaling", "pencilffts_jeanzay")
    stores = (BenchStore("both", names, {}),
              BenchStore("both, leave-out", names, {"leave_out": "source"}),
              BenchStore("a center's", names, {}, per_application=1))
    rows = across_stores(stores, splits=("extrapolate",))
    assert [(r["store"], r["split"]) for r in rows] == [("both", "extrapolate"),
                                                        ("both, leave-out", "extrapolate"),
                                                        ("a center's", "extrapolate")]
    for row in rows:
        assert row["data sets beaten on MAPE"].endswith("of 2")
        assert all(name in row["hybrid MAPE per data set (best)"] for name in names)
    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(f"sqlite:///{Path(tmp) / 'alone.db'}", names)
        try:
            pooled = acceptance(evaluate(store, "extrapolate", leave_out="source"), "all")
            center = acceptance(center_stores(store, "extrapolate", per_application=1,
                                              repeats=CENTER_DRAWS), "all")
        finally:
            store.dispose()
    assert rows[1]["hybrid MAPE"] == round(pooled["hybrid_mape_pct"], 1)
    assert rows[1]["coverage"] == round(pooled["coverage"], 3)
    # two backtests, not one reported twice: their figures differ (any one rounded
    # figure may coincide, as the pooled MAPE of these two stores did, 18.5% each)
    figures = [{k: v for k, v in row.items() if k != "store"} for row in rows]
    assert figures[0] != figures[1]
    # the center's row pools its draws, of one series per application each
    assert rows[2]["hybrid MAPE"] == round(center["hybrid_mape_pct"], 1)
    assert rows[2]["coverage"] == round(center["coverage"], 3)


@pytest.mark.parametrize("option", [["--dataset", "relearn"], ["--leave-out", "source"],
                                    ["--with-bundled"], ["--no-borrow-bundled"],
                                    ["--protocol", "by-series"]])
def test_across_stores_refuses_options_that_choose_a_store(option: list[str], capsys) -> None:  # type: ignore[no-untyped-def]
    from bench.accuracy_benchmark import main

    with pytest.raises(SystemExit) as exit_:
        main(["--across-stores", *option])
    assert exit_.value.code == 2
    assert "--across-stores chooses its own stores" in capsys.readouterr().err
