"""A runtime predictor's series entries live in rows of their own, read per application."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from perfpredict import artifact
from perfpredict.errors import ArtifactError
from perfpredict.estimate import bundled_artifact_path
from perfpredict.model.entry import SeriesEntry
from perfpredict.store.artifacts import SERIES, load_latest_runtime, save_artifact


@pytest.fixture
def trained_doc() -> dict:  # type: ignore[type-arg]
    doc = json.loads(bundled_artifact_path().read_text())
    return artifact.seal({k: v for k, v in doc.items() if k != "sha256"})


def test_entries_round_trip_per_application(store, trained_doc) -> None:  # type: ignore[no-untyped-def]
    stored = save_artifact(store, trained_doc)
    found = load_latest_runtime(store.url)
    assert found is not None
    doc, entries = found
    assert doc == stored  # what train reports is what is stored
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT sha256 FROM artifacts")).scalar_one() == doc["sha256"]
    assert entries is not None and SERIES not in doc
    assert doc["predictor"] == trained_doc["predictor"]
    assert entries.all() == trained_doc[SERIES]
    trained = [SeriesEntry.from_dict(e) for e in trained_doc[SERIES]]
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
