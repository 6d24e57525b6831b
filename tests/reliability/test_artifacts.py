"""Model artifacts (issue 6): a tampered, truncated, non-JSON, newer-format or malformed
artifact, in the store or as the bundled file, is refused by ``perfpredict estimate`` with
one line and exit 1; and nothing in perfpredict loads pickle or joblib."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfpredict import artifact
from perfpredict.cli.app import app
from perfpredict.store import open_store
from tests.conftest import bundled_doc_as_trained
from tests.reliability._data import APPS

REPO = Path(__file__).resolve().parents[2]


def _tampered(text: str) -> str:
    """One number changed: the predictor's recorded nested error."""
    doc = json.loads(text)
    doc["predictor"]["metrics"]["nested_mean_abs_log_error_hybrid"] += 0.01
    return json.dumps(doc, sort_keys=True)


def _truncated(text: str) -> str:
    return text[: len(text) // 2]


def _not_json(_text: str) -> str:
    return "<html>502 Bad Gateway</html>"


def _resealed(doc: dict[str, object]) -> str:
    body = {k: v for k, v in doc.items() if k != "sha256"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return json.dumps({**body, "sha256": hashlib.sha256(canonical).hexdigest()})


def _newer_format(text: str) -> str:
    doc = json.loads(text)
    doc["format_version"] = artifact.FORMAT_VERSION + 1
    return _resealed(doc)


def _wrong_layout(text: str) -> str:
    """Checksum and version fine, but not the layout this perfpredict reads (a stale
    bundled file from before a predictor change)."""
    doc = json.loads(text)
    del doc["predictor"]["conformal"]
    return _resealed(doc)


def _unknown_tree_table(text: str) -> str:
    """A tree table in a layout this perfpredict does not read (int64 indices)."""
    doc = json.loads(text)
    doc["predictor"]["correction_trees"]["arrays"]["left"]["dtype"] = "<i8"
    return _resealed(doc)


DAMAGE: dict[str, tuple[Callable[[str], str], str]] = {
    "tampered": (_tampered, "fails its checksum"),
    "truncated": (_truncated, "not valid JSON"),
    "not json": (_not_json, "not valid JSON"),
    "newer format": (_newer_format, "upgrade perfpredict"),
    "wrong layout": (_wrong_layout, "retrain"),
    "unknown tree table": (_unknown_tree_table, "retrain"),
}


def _stored_document(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT document FROM artifacts ORDER BY id DESC").fetchone()[0]
    finally:
        conn.close()


def _estimate(url: str) -> object:
    return CliRunner().invoke(app, ["--db", url, "estimate", "--app", APPS[0], "--nodes", "8"])


def _assert_refused(result: object, phrase: str) -> None:
    assert result.exit_code == 1, result.output  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    assert phrase in lines[0], lines[0]
    assert "Traceback" not in result.output  # type: ignore[attr-defined]


def test_intact_artifact_answers(trained_url: str) -> None:
    result = _estimate(trained_url)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_damaged_artifact_in_the_store_is_refused(trained_db: Path, damage: str) -> None:
    change, phrase = DAMAGE[damage]
    conn = sqlite3.connect(trained_db)
    with conn:
        conn.execute("UPDATE artifacts SET document = ?", (change(_stored_document(trained_db)),))
    conn.close()
    _assert_refused(_estimate(f"sqlite:///{trained_db}"), phrase)
    assert "the store" in _estimate(f"sqlite:///{trained_db}").stderr


def test_a_damaged_series_entry_is_refused_and_the_others_still_answer(
        trained_db: Path) -> None:
    """A trained store keeps each series entry in a row of its own, with its checksum:
    an estimate reads only the rows of the application it asks about."""
    conn = sqlite3.connect(trained_db)
    with conn:
        entry, = conn.execute("SELECT entry FROM artifact_series WHERE app = ? LIMIT 1",
                              (APPS[0],)).fetchone()
        conn.execute("UPDATE artifact_series SET entry = ? WHERE entry = ?",
                     (entry.replace('"medians_s":[', '"medians_s":[1', 1), entry))
    conn.close()
    url = f"sqlite:///{trained_db}"
    _assert_refused(_estimate(url), "fails its checksum")
    other = CliRunner().invoke(app, ["--db", url, "estimate", "--app", APPS[1], "--nodes", "8"])
    assert other.exit_code == 0, other.output


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_damaged_bundled_artifact_is_refused(tmp_path: Path, damage: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from perfpredict.estimate import bundled_artifact_path

    change, phrase = DAMAGE[damage]
    bundled = tmp_path / "predictor.json"
    bundled.write_text(change(bundled_artifact_path().read_text()))
    monkeypatch.setattr("perfpredict.estimate.lookup.bundled_artifact_path", lambda: bundled)
    empty_store = f"sqlite:///{tmp_path / 'empty.db'}"  # no artifact: the bundled one is used
    open_store(empty_store).dispose()
    result = _estimate(empty_store)
    _assert_refused(result, phrase)
    assert "predictor.json" in result.stderr


_LOADERS = re.compile(r"^\s*(?:import|from)\s+(?:c?pickle|joblib|dill|cloudpickle|shelve|marshal)\b"
                      r"|\b(?:pickle|joblib|dill|cloudpickle|shelve|marshal)\.(?:loads?|Unpickler)\b",
                      re.MULTILINE)


def test_nothing_imports_pickle_or_joblib() -> None:
    sources = [p for folder in ("perfpredict", "cli") for p in (REPO / folder).rglob("*.py")]
    assert len(sources) > 20
    offenders = [f"{p.relative_to(REPO)}: {m.group(0).strip()}"
                 for p in sources for m in _LOADERS.finditer(p.read_text(encoding="utf-8"))]
    assert offenders == []
    # ... and the scanner does see an import when there is one.
    assert _LOADERS.search("import joblib\n") and _LOADERS.search("    from pickle import loads\n")
    assert _LOADERS.search("model = pickle.load(fh)")


def test_bundled_artifact_is_plain_verified_json() -> None:
    from perfpredict.estimate import bundled_artifact_path

    path = bundled_artifact_path()
    doc = artifact.read_file(path)  # refuses a damaged one
    assert doc["format_version"] <= artifact.FORMAT_VERSION


def test_a_stored_document_with_its_series_inside_asks_to_retrain(tmp_path: Path) -> None:
    """Stores trained before schema revision 0003 hold the series entries inside the
    document: refused with the command that replaces it, not read through a second path."""
    from perfpredict.store import open_store

    db = tmp_path / "older.db"
    open_store(f"sqlite:///{db}").dispose()
    text = artifact.dumps(bundled_doc_as_trained())
    doc = json.loads(text)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO artifacts (kind, created_epoch_s, format_version, sha256, "
                     "document) VALUES (?, 1.0, ?, ?, ?)",
                     (doc["kind"], doc["format_version"], doc["sha256"], text))
    conn.close()
    url = f"sqlite:///{db}"
    bert = CliRunner().invoke(app, ["--db", url, "estimate", "--app", "bert", "--nodes", "64"])
    assert bert.exit_code == 1, bert.output
    assert "retrain with 'perfpredict train'" in bert.stderr
    assert len(bert.stderr.strip().splitlines()) == 1


def test_an_artifact_of_an_earlier_layout_is_refused_with_a_retrain_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Format 4 (series entries without ``repeat_deviations_log``) is not read: the
    estimate says to retrain, in one line."""

    doc = bundled_doc_as_trained()
    assert doc["format_version"] == artifact.FORMAT_VERSION == 5
    for entry in doc[artifact.SERIES]:
        del entry["repeat_deviations_log"]
    earlier = tmp_path / "predictor.json"
    earlier.write_text(_resealed({**doc, "format_version": 4}))
    monkeypatch.setattr("perfpredict.estimate.lookup.bundled_artifact_path", lambda: earlier)
    empty_store = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(empty_store).dispose()
    result = CliRunner().invoke(app, ["--db", empty_store, "estimate", "--app", "bert",
                                      "--nodes", "100"])
    assert result.exit_code == 1, result.output
    assert "retrain with 'perfpredict train'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
