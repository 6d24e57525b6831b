"""A runtime predictor's series entries live in rows of their own, read per application."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from perfpredict import artifact
from perfpredict.errors import ArtifactError, PerfPredictError
from perfpredict.model.entry import SeriesEntry
from perfpredict.store.artifacts import load_latest_runtime, save_artifact
from tests.conftest import bundled_doc_as_trained


@pytest.fixture
def trained_doc() -> dict:  # type: ignore[type-arg]
    return artifact.seal(bundled_doc_as_trained())


def test_entries_round_trip_per_application(store, trained_doc) -> None:  # type: ignore[no-untyped-def]
    stored = save_artifact(store, trained_doc)
    found = load_latest_runtime(store.url)
    assert found is not None
    doc, entries = found
    assert doc == stored  # what train reports is what is stored
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT sha256 FROM artifacts")).scalar_one() == doc["sha256"]
    assert entries is not None and artifact.SERIES not in doc
    assert doc["predictor"] == trained_doc["predictor"]
    assert entries.all() == trained_doc[artifact.SERIES]
    trained = [SeriesEntry.from_dict(e) for e in trained_doc[artifact.SERIES]]
    assert entries.apps() == sorted({e.key.app for e in trained})
    bert = [e for e in trained if e.key.app == "bert"]
    assert entries.of_app("BERT") == bert and entries.of_app("no such app") == []


def test_a_changed_entry_fails_its_checksum(store, trained_doc) -> None:  # type: ignore[no-untyped-def]
    save_artifact(store, trained_doc)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE artifact_series SET entry = REPLACE(entry, :old, :new) "
                          "WHERE app = 'resnet'"), {"old": '"n_runs":', "new": '"n_runs":1'})
    found = load_latest_runtime(store.url)
    assert found is not None and found[1] is not None
    assert found[1].of_app("bert")  # untouched entries still read
    with pytest.raises(ArtifactError, match="checksum"):
        found[1].of_app("resnet")
    with pytest.raises(ArtifactError, match="checksum"):
        found[1].all()


@pytest.mark.parametrize("change", [
    "DELETE FROM artifact_series WHERE app = 'bert'",
    "DELETE FROM artifact_series WHERE id = (SELECT MIN(id) FROM artifact_series "
    "WHERE app = 'bert')",
    "INSERT INTO artifact_series (artifact_id, app, app_folded, entry) SELECT artifact_id, "
    "app, app_folded, entry FROM artifact_series WHERE app = 'bert'",
])
def test_deleted_or_added_entries_fail_the_checksum(store, trained_doc, change) -> None:  # type: ignore[no-untyped-def]
    """Rows are checked against the sealed document, not against themselves."""
    save_artifact(store, trained_doc)
    with store.engine.begin() as conn:
        conn.execute(text(change))
    found = load_latest_runtime(store.url)
    assert found is not None and found[1] is not None
    with pytest.raises(ArtifactError, match="checksum"):
        found[1].of_app("bert")
    assert found[1].of_app("resnet")


def _artifact_rows(store) -> tuple[list[int], set[int]]:  # type: ignore[no-untyped-def]
    with store.engine.connect() as conn:
        kept = list(conn.execute(text("SELECT id FROM artifacts WHERE kind = :kind "
                                      "ORDER BY id"), {"kind": artifact.KIND_RUNTIME}).scalars())
        owners = set(conn.execute(text("SELECT DISTINCT artifact_id FROM artifact_series"))
                     .scalars())
    return kept, owners


def test_a_train_keeps_the_newest_two_predictors_not_every_one(store, trained_doc) -> None:  # type: ignore[no-untyped-def]
    """Every train added a predictor (1.6 MB for the bundled data sets, 56 MB for a
    million runs) and none ever went: a shared store retrained nightly grew by one a
    night. The newest two stay, the one before kept for an estimate that loaded it just
    before a train; a walltime advisor, another kind, is not counted against them."""
    store_url = store.url
    save_artifact(store, artifact.seal({"kind": "another_kind"}))
    save_artifact(store, trained_doc)
    loaded_first = load_latest_runtime(store_url)
    assert loaded_first is not None
    save_artifact(store, trained_doc)
    assert loaded_first[1].of_app("bert")  # the one before the newest still reads
    for _ in range(3):
        save_artifact(store, trained_doc)
    kept, owners = _artifact_rows(store)
    assert len(kept) == 2 and owners == set(kept)
    newest = load_latest_runtime(store_url)
    assert newest is not None and newest[1].all() == trained_doc[artifact.SERIES]
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM artifacts WHERE kind = "
                                 "'another_kind'")).scalar_one() == 1
    # loaded, then replaced twice over: said so, not "fails its checksum ... retrain"
    for read in (lambda: loaded_first[1].of_app("resnet"), loaded_first[1].all):
        with pytest.raises(PerfPredictError, match=r"^the predictor this estimate loaded has "
                           r"since been replaced by newer 'perfpredict train' runs"):
            read()
