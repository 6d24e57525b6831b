"""The accuracy benchmark's stores of a few series (``--small-stores K``), on the bundled
Castro data set (BSD-3, so present on every clone)."""

from __future__ import annotations

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
