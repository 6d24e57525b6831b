"""Trained artifacts kept in the store, so everyone using a shared store shares them.

Reading has a fast path for SQLite through the standard library: an estimate must not
pay SQLAlchemy's import time (about as long as numpy's) for one SELECT.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from perfpredict import artifact
from perfpredict.store.revision import check_revision

_LATEST = ("SELECT document FROM artifacts WHERE kind = ? "
           "ORDER BY created_epoch_s DESC, id DESC LIMIT 1")


def save_artifact(store, doc: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    from perfpredict.store.schema import artifacts

    with store.engine.begin() as conn:
        conn.execute(artifacts.insert().values(
            kind=doc["kind"], created_epoch_s=time.time(),
            format_version=doc["format_version"], sha256=doc["sha256"],
            document=artifact.to_text(doc)))


def load_latest_artifact(db_url: str, kind: str = artifact.KIND_RUNTIME) -> dict[str, Any] | None:
    """The newest artifact of ``kind`` in the store at ``db_url``, verified; None if the
    store has none (or does not exist yet)."""
    if db_url.startswith("sqlite:///"):
        path = Path(db_url.split(":///", 1)[1])
        if not path.exists():
            return None
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60)
        try:
            revision = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            check_revision(revision[0] if revision else None, db_url)
            row = conn.execute(_LATEST, (kind,)).fetchone()
        except sqlite3.OperationalError:  # no tables yet: a store nobody has written to
            return None
        finally:
            conn.close()
    else:
        from sqlalchemy import text

        from perfpredict.store import open_store

        store = open_store(db_url)
        try:
            with store.engine.connect() as sa_conn:
                row = sa_conn.execute(text(_LATEST.replace("?", ":kind")),
                                      {"kind": kind}).first()
        finally:
            store.dispose()
    if row is None:
        return None
    return artifact.loads(row[0], "the store")
