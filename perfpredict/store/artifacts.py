"""Trained artifacts kept in the store, so everyone using a shared store shares them.

A runtime predictor is stored in two parts: its document (the predictor and its training
card) in ``artifacts``, sealed, carrying the digest of its series entries; and one row
per series entry in ``artifact_series``, each with its own checksum. An estimate reads
the document and the entries of the one application it asks about: a center's store
holds tens of thousands of series (52k made a 56 MB document that took 4 s to read).

Reading has a fast path for SQLite through the standard library: an estimate must not
pay SQLAlchemy's import time (about as long as numpy's) for a few SELECTs.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from perfpredict import artifact
from perfpredict.errors import ArtifactError
from perfpredict.store.revision import check_revision

#: The key of a runtime predictor's series entries in its document as trained.
SERIES = "series"

_LATEST = ("SELECT id, document FROM artifacts WHERE kind = ? "
           "ORDER BY created_epoch_s DESC, id DESC LIMIT 1")
_ENTRIES = "SELECT entry, sha256 FROM artifact_series WHERE artifact_id = ?"


def _entry_text(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def save_artifact(store, doc: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    """Store a sealed artifact; a runtime predictor's series entries go to rows of their
    own, and the stored document is resealed with their digest instead."""
    from perfpredict.store.schema import artifact_series, artifacts

    entries: list[dict[str, Any]] | None = doc.get(SERIES)
    texts = [_entry_text(e) for e in entries or []]
    if entries is not None:
        body = {k: v for k, v in doc.items() if k not in (SERIES, "sha256")}
        doc = artifact.seal({**body, "series_sha256": _sha256("\n".join(texts))})
    with store.engine.begin() as conn:
        artifact_id = conn.execute(artifacts.insert().values(
            kind=doc["kind"], created_epoch_s=time.time(),
            format_version=doc["format_version"], sha256=doc["sha256"],
            document=artifact.to_text(doc))).inserted_primary_key[0]
        if texts:
            conn.execute(artifact_series.insert(), [
                {"artifact_id": artifact_id, "app": e["key"][0],
                 "app_folded": e["key"][0].casefold(), "entry": text, "sha256": _sha256(text)}
                for e, text in zip(entries or [], texts, strict=True)])


class _Reader:
    """Read-only queries with ``?`` placeholders on the store at ``db_url``: sqlite3 for a
    SQLite file, SQLAlchemy otherwise (its engine kept for the reader's life)."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self._store: Any = None

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]] | None:
        """The rows, or None when the store does not exist or has no tables yet."""
        if self.db_url.startswith("sqlite:///"):
            path = Path(self.db_url.split(":///", 1)[1])
            if not path.exists():
                return None
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
            try:
                revision = conn.execute("SELECT version_num FROM alembic_version").fetchone()
                check_revision(revision[0] if revision else None, self.db_url)
                return conn.execute(sql, params).fetchall()
            except sqlite3.OperationalError:  # no tables yet: a store nobody has written to
                return None
            finally:
                conn.close()
        from sqlalchemy import text

        from perfpredict.store import open_store

        if self._store is None:
            self._store = open_store(self.db_url)
        names = [f"p{i}" for i in range(len(params))]
        for name in names:
            sql = sql.replace("?", f":{name}", 1)
        bound = dict(zip(names, params, strict=True))
        with self._store.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), bound)]


class StoredSeries:
    """The series entries of one stored runtime predictor, read when asked for."""

    def __init__(self, reader: _Reader, artifact_id: int, series_sha256: str) -> None:
        self._reader = reader
        self._artifact_id = artifact_id
        self._series_sha256 = series_sha256
        self._of_app: dict[str, list[dict[str, Any]]] = {}

    def _read(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        entries = []
        for text, sha256 in self._reader.rows(sql, self._artifact_id, *params) or []:
            if _sha256(text) != sha256:
                raise ArtifactError(
                    "the model artifact from the store fails its checksum (a series entry "
                    "was modified or damaged); retrain with 'perfpredict train'")
            entries.append(json.loads(text))
        return entries

    def of_app(self, app: str) -> list[dict[str, Any]]:
        """The entries of ``app``, matched without case (read once per application)."""
        folded = app.casefold()
        if folded not in self._of_app:
            self._of_app[folded] = self._read(_ENTRIES + " AND app_folded = ? ORDER BY id",
                                              folded)
        return self._of_app[folded]

    def apps(self) -> list[str]:
        rows = self._reader.rows("SELECT DISTINCT app FROM artifact_series "
                                 "WHERE artifact_id = ?", self._artifact_id)
        return sorted(app for (app,) in rows or [])

    def all(self) -> list[dict[str, Any]]:
        """Every entry, in training order, checked against the document's digest."""
        texts = [text for text, _ in self._reader.rows(_ENTRIES + " ORDER BY id",
                                                        self._artifact_id) or []]
        if _sha256("\n".join(texts)) != self._series_sha256:
            raise ArtifactError("the model artifact from the store fails its checksum (its "
                                "series entries were modified or damaged); retrain with "
                                "'perfpredict train'")
        return [json.loads(text) for text in texts]


def _latest(reader: _Reader, kind: str) -> tuple[int, dict[str, Any]] | None:
    rows = reader.rows(_LATEST, kind)
    if not rows:
        return None
    artifact_id, text = rows[0]
    return int(artifact_id), artifact.loads(text, "the store")


def load_latest_artifact(db_url: str, kind: str = artifact.KIND_RUNTIME) -> dict[str, Any] | None:
    """The newest artifact of ``kind`` in the store at ``db_url``, verified; None if the
    store has none (or does not exist yet). A runtime predictor's series entries are not
    in it: see :func:`load_latest_runtime`."""
    found = _latest(_Reader(db_url), kind)
    return None if found is None else found[1]


def load_latest_runtime(db_url: str) -> tuple[dict[str, Any], StoredSeries | None] | None:
    """The newest runtime predictor's document and its series entries, read on demand
    (None for a document stored with its entries inside, as before schema revision
    0003); None if the store has no runtime predictor."""
    reader = _Reader(db_url)
    found = _latest(reader, artifact.KIND_RUNTIME)
    if found is None:
        return None
    artifact_id, doc = found
    if SERIES in doc:
        return doc, None
    return doc, StoredSeries(reader, artifact_id, str(doc.get("series_sha256")))
