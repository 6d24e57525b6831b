"""Trained artifacts kept in the store, so everyone using a shared store shares them.

A runtime predictor is stored in two parts: its document (the predictor and its training
card) in ``artifacts``, sealed, carrying a digest of each application's series entries;
and one row per series entry in ``artifact_series``. An estimate reads the document and
the entries of the one application it asks about, checked against that application's
digest, so an edited, deleted or added row is refused: a center's store holds tens of
thousands of series (52k made a 56 MB document that took 4 s to read).

Reading goes through :func:`perfpredict.store.reading.query_rows`, with its fast path
for SQLite.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from perfpredict import artifact
from perfpredict.errors import ArtifactError, PerfPredictError
from perfpredict.model.entry import SeriesEntry
from perfpredict.store.reading import query_rows

#: The sealed document's digest of each application's entries (by casefolded name).
DIGESTS = "series_sha256_by_app"

_LATEST = ("SELECT id, document FROM artifacts WHERE kind = ? "
           "ORDER BY created_epoch_s DESC, id DESC LIMIT 1")
_ENTRIES = "SELECT entry FROM artifact_series WHERE artifact_id = ?"

#: Artifacts of one kind a store keeps: the newest and the one before it, whose series
#: entries an estimate that loaded it just before a ``train`` may still be reading.
#: Every train added one and none ever went, so a shared store retrained nightly grew
#: by a whole predictor a night (56 MB for a million runs), read by no one.
KEPT_PER_KIND = 2


def _digest(texts: list[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()


def save_artifact(store, doc: dict[str, Any]) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Store a sealed artifact and return the document as stored: a runtime predictor's
    series entries go to rows of their own, and the document is resealed with a digest
    of each application's entries in their place. Older artifacts of its kind beyond the
    newest :data:`KEPT_PER_KIND` go, with their entries, in the same transaction."""
    from sqlalchemy import select

    from perfpredict.store.schema import artifact_series, artifacts

    entries = [SeriesEntry.from_dict(e) for e in doc.get(artifact.SERIES) or []]
    texts = [artifact.entry_text(e.to_dict()) for e in entries]
    if artifact.SERIES in doc:
        by_app: dict[str, list[str]] = {}
        for entry, text in zip(entries, texts, strict=True):
            by_app.setdefault(entry.key.app.casefold(), []).append(text)
        body = {k: v for k, v in doc.items() if k not in (artifact.SERIES, "sha256")}
        doc = artifact.seal({**body, DIGESTS: {app: _digest(t) for app, t in by_app.items()}})
    with store.engine.begin() as conn:
        artifact_id = conn.execute(artifacts.insert().values(
            kind=doc["kind"], created_epoch_s=time.time(),
            format_version=doc["format_version"], sha256=doc["sha256"],
            document=artifact.to_text(doc))).inserted_primary_key[0]
        if texts:
            conn.execute(artifact_series.insert(), [
                {"artifact_id": artifact_id, "app": e.key.app,
                 "app_folded": e.key.app.casefold(), "entry": text}
                for e, text in zip(entries, texts, strict=True)])
        stale = list(conn.execute(
            select(artifacts.c.id).where(artifacts.c.kind == doc["kind"])
            .order_by(artifacts.c.created_epoch_s.desc(), artifacts.c.id.desc())
            .offset(KEPT_PER_KIND)).scalars())
        if stale:
            conn.execute(artifact_series.delete().where(artifact_series.c.artifact_id.in_(stale)))
            conn.execute(artifacts.delete().where(artifacts.c.id.in_(stale)))
    return doc


class StoredSeries:
    """The series entries of one stored runtime predictor, read when asked for."""

    def __init__(self, db_url: str, artifact_id: int, digests: dict[str, str]) -> None:
        self._db_url = db_url
        self._artifact_id = artifact_id
        self._digests = digests
        self._of_app: dict[str, list[SeriesEntry]] = {}

    def _texts(self, sql: str, *params: Any) -> list[str]:
        return [text for (text,) in query_rows(self._db_url, sql, self._artifact_id, *params) or []]

    def of_app(self, app: str) -> list[SeriesEntry]:
        """The entries of ``app``, matched without case (read once per application)."""
        folded = app.casefold()
        if folded not in self._of_app:
            texts = self._texts(_ENTRIES + " AND app_folded = ? ORDER BY id", folded)
            if not texts and folded in self._digests:
                self._check_kept()
            if (_digest(texts) if texts else None) != self._digests.get(folded):
                raise ArtifactError(
                    f"the model artifact from the store fails its checksum (the series "
                    f"entries of {app!r} were modified, added or deleted); retrain with "
                    "'perfpredict train'")
            self._of_app[folded] = [SeriesEntry.from_dict(json.loads(text)) for text in texts]
        return self._of_app[folded]

    def _check_kept(self) -> None:
        """Refuse to read on when this predictor is no longer in the store: two trains
        since it was loaded replaced it (:data:`KEPT_PER_KIND`), and its entries went
        with it. Not a damaged artifact, which the checksum would have called it."""
        if not query_rows(self._db_url, "SELECT id FROM artifacts WHERE id = ?",
                          self._artifact_id):
            raise PerfPredictError(
                "the predictor this estimate loaded has since been replaced by newer "
                "'perfpredict train' runs and is no longer in the store; run the command "
                "again (from Python, load it again with load_predictor(store))")

    @property
    def n_applications(self) -> int:
        """The applications, case aside, from the digests loaded (no query)."""
        return len(self._digests)

    def apps(self) -> list[str]:
        return _apps_of(self._db_url, self._artifact_id)

    def all(self) -> list[dict[str, Any]]:
        """Every entry, in training order, each application's checked as in :meth:`of_app`."""
        rows = query_rows(self._db_url, "SELECT app_folded, entry FROM artifact_series "
                     "WHERE artifact_id = ? ORDER BY id", self._artifact_id) or []
        if not rows and self._digests:
            self._check_kept()
        by_app: dict[str, list[str]] = {}
        for folded, text in rows:
            by_app.setdefault(folded, []).append(text)
        if {app: _digest(texts) for app, texts in by_app.items()} != self._digests:
            raise ArtifactError("the model artifact from the store fails its checksum (its "
                                "series entries were modified, added or deleted); retrain "
                                "with 'perfpredict train'")
        return [json.loads(text) for _, text in rows]


def _latest(db_url: str, kind: str) -> tuple[int, dict[str, Any]] | None:
    rows = query_rows(db_url, _LATEST, kind)
    if not rows:
        return None
    artifact_id, text = rows[0]
    return int(artifact_id), artifact.loads(text, "the store")


def load_latest_artifact(db_url: str, kind: str = artifact.KIND_RUNTIME) -> dict[str, Any] | None:
    """The newest artifact of ``kind`` in the store at ``db_url``, verified; None if the
    store has none (or does not exist yet). A runtime predictor's series entries are not
    in it: see :func:`load_latest_runtime`."""
    found = _latest(db_url, kind)
    return None if found is None else found[1]


def trained_applications(db_url: str) -> list[str]:
    """The applications the store's newest runtime predictor has series of, sorted; none
    where it has no predictor. ``train --app`` replaces the predictor of a shared store
    as a whole: what it says of those it leaves out is read from this."""
    found = _latest(db_url, artifact.KIND_RUNTIME)
    if found is None:
        return []
    return _apps_of(db_url, found[0])


def _apps_of(db_url: str, artifact_id: int) -> list[str]:
    rows = query_rows(db_url, "SELECT DISTINCT app FROM artifact_series WHERE artifact_id = ?",
                      artifact_id)
    return sorted(app for (app,) in rows or [])


def load_latest_runtime(db_url: str) -> tuple[dict[str, Any], StoredSeries] | None:
    """The newest runtime predictor's document and its series entries, read on demand;
    None if the store has no runtime predictor. A document without entry digests (one
    holding its entries, stored before schema revision 0003) is refused: retrain."""
    found = _latest(db_url, artifact.KIND_RUNTIME)
    if found is None:
        return None
    artifact_id, doc = found
    if DIGESTS not in doc:
        raise ArtifactError("the store's runtime predictor was trained by a perfpredict "
                            "before its series entries were stored apart; retrain with "
                            "'perfpredict train'")
    return doc, StoredSeries(db_url, artifact_id, dict(doc[DIGESTS]))
