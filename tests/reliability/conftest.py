"""Fixtures for the reliability tests: a trained store built once per test run (training
is the slow part), copied into each test's own directory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability._data import training_csv


@pytest.fixture(scope="session")
def trained_store_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store holding the training CSV's runs and a predictor trained on them
    (small trees: these tests are about the store and the CLI, not accuracy)."""
    from tests.conftest import built_once

    return built_once(tmp_path_factory, "reliability-trained.db", _train_template)


def _train_template(path: Path) -> None:
    from perfpredict.ingest import ingest_file
    from perfpredict.model.fit import HybridPredictor
    from perfpredict.model.series import build_series
    from perfpredict.store import open_store
    from perfpredict.store.artifacts import save_artifact
    from perfpredict.store.queries import runs_frame
    from perfpredict.train import build_artifact

    store = open_store(f"sqlite:///{path}")
    try:
        ingest_file(store, "csv", training_csv(path.with_name("reliability-training.csv")))
        frame = runs_frame(store)
        predictor = HybridPredictor(n_folds=2, regressor_params={"n_estimators": 10})
        save_artifact(store, build_artifact(build_series(frame), len(frame), predictor))
        with store.engine.connect() as conn:  # fold the WAL in: one file is the store
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.dispose()


@pytest.fixture
def trained_db(trained_store_template: Path, tmp_path: Path) -> Iterator[Path]:
    """This test's own copy of the trained store."""
    path = tmp_path / "store.db"
    shutil.copyfile(trained_store_template, path)
    yield path


@pytest.fixture
def trained_url(trained_db: Path) -> str:
    return f"sqlite:///{trained_db}"
