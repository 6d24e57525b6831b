"""Reading a few rows of a store without SQLAlchemy where it is a SQLite file: an
estimate must not pay SQLAlchemy's import time (about as long as numpy's) for the few
SELECTs it makes (its predictor, one application's series, the machine's catalog entry)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from perfpredict.store.revision import check_revision


def query_rows(db_url: str, sql: str, *params: Any) -> list[tuple[Any, ...]] | None:
    """The rows of a read-only query with ``?`` placeholders on the store at ``db_url``,
    or None when the store does not exist or has no tables yet: sqlite3 for a SQLite
    file, else SQLAlchemy on an engine opened and disposed for the query (an estimate
    makes two or three, and nothing is left holding connections)."""
    if db_url.startswith("sqlite:///"):
        path = Path(db_url.split(":///", 1)[1])
        if not path.exists():
            return None
        import sqlite3  # here: an estimate without a store (the bundled predictor) skips it

        from perfpredict.store.location import sqlite_read_only, sqlite_uri

        conn = sqlite3.connect(sqlite_uri(path, read_only=True), uri=True, timeout=60)
        try:
            revision = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            check_revision(revision[0] if revision else None, db_url,
                           read_only=sqlite_read_only(path))
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:  # no tables yet: a store nobody has written to
            return None
        finally:
            conn.close()
    from sqlalchemy import text

    from perfpredict.store import open_store

    names = [f"p{i}" for i in range(len(params))]
    for name in names:
        sql = sql.replace("?", f":{name}", 1)
    with open_store(db_url, create=False) as store, store.engine.connect() as sa_conn:
        result = sa_conn.execute(text(sql), dict(zip(names, params, strict=True)))
        return [tuple(row) for row in result]


def runs_by_batch_checksum(db_url: str, app: str,
                           ingested_after_epoch_s: float | None = None) -> dict[str, int]:
    """How many runs of ``app`` (exactly so named) the store holds, per checksum of the
    file they were ingested from, counting only files ingested after
    ``ingested_after_epoch_s`` when given: what an estimate tells its user its predictor
    never learned from. Empty where the store holds none (or has no tables yet).

    Since a time, the files ingested after it come first and their runs are looked up
    by file (SQLite takes a ``CROSS JOIN``'s tables in the order written): after a
    ``train`` there are none, where reading an application's runs first cost every
    estimate a pass over them (10k runs 20 ms, a center's most common code many times
    that)."""
    if ingested_after_epoch_s is None:
        rows = query_rows(db_url, "SELECT b.sha256, COUNT(*) FROM runs r JOIN ingest_batches b "
                          "ON r.batch_id = b.id WHERE r.app = ? GROUP BY b.sha256", app)
    else:
        rows = query_rows(db_url, "SELECT b.sha256, COUNT(*) FROM ingest_batches b CROSS JOIN "
                          "runs r WHERE r.batch_id = b.id AND b.started_epoch_s > ? AND "
                          "r.app = ? GROUP BY b.sha256", ingested_after_epoch_s, app)
    return {str(sha256): int(n) for sha256, n in rows or ()}


def runs_deleted_since(db_url: str, app: str, trained_epoch_s: float) -> int:
    """How many runs of ``app`` (exactly so named) that were in the store when a
    predictor read it at ``trained_epoch_s`` have been deleted since (``runs delete``):
    runs it learned from and answers with, which the store no longer holds."""
    rows = query_rows(db_url, "SELECT COALESCE(SUM(a.n_runs), 0) FROM batch_deletions d "
                      "JOIN batch_deletion_apps a ON a.deletion_id = d.id WHERE a.app = ? "
                      "AND d.ingested_epoch_s <= ? AND d.deleted_epoch_s > ?",
                      app, trained_epoch_s, trained_epoch_s)
    return int(rows[0][0]) if rows else 0
