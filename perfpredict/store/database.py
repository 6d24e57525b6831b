"""Opening a store: engine settings per backend and the schema gate.

SQLite gets WAL journaling and a busy timeout so that ingest, train and estimate can run
at the same time without "database is locked" reaching the user. A new, empty store is
created at the newest revision (under a lock, so parallel first uses create it once); an
older store is refused with the exact command that upgrades it (optuna's habit), a newer
one with the advice to upgrade perfpredict, so no command ever writes to a schema it does
not understand.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Connection, Engine

from perfpredict.config import redact_url
from perfpredict.errors import BadInputError, MissingDependencyError, PerfPredictError
from perfpredict.store.revision import SCHEMA_REVISION, SCHEMA_REVISIONS, check_revision

SQLITE_BUSY_TIMEOUT_MS = 60_000


@dataclass
class Store:
    """An open run store. ``url`` is kept for messages (use :attr:`safe_url` to print)."""

    engine: Engine
    url: str

    @property
    def safe_url(self) -> str:
        return redact_url(self.url)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    def dispose(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        """``with open_store(url) as store:`` disposes of the engine on the way out."""
        self.dispose()


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    _enable_wal(cursor)
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _enable_wal(cursor) -> None:  # type: ignore[no-untyped-def]
    """Switch the file to WAL (it stays so); retried, because SQLite answers "database is
    locked" at once, without waiting out the busy timeout, when the switch would need a
    lock another process holds, as when several commands first open a new store."""
    import sqlite3
    import time

    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    delay_s = 0.01
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay_s)
            delay_s = min(delay_s * 2, 0.5)


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with the settings perfpredict relies on."""
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[-1]
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    try:
        return create_engine(url, pool_pre_ping=True)
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            f"the database driver for {redact_url(url)} is not installed ({exc.name}); "
            "for PostgreSQL install it with: pip install 'perfpredict[postgres]'"
        ) from exc
    except Exception as exc:  # sqlalchemy.exc.ArgumentError and friends
        raise BadInputError(
            f"cannot use database URL {redact_url(url)!r}: {type(exc).__name__}; "
            "give a URL like sqlite:///path/to/store.db or postgresql+psycopg://user@host/db"
        ) from exc


def _cannot_open(url: str, exc: Exception) -> BadInputError:
    """What a user sees when the store cannot be reached, password hidden."""
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    return BadInputError(
        f"cannot open the store at {redact_url(url)}: {type(exc).__name__}: "
        f"{redact_url(first_line)}; check the --db URL or PERFPREDICT_DB and that the "
        "server is running")


def stored_revision(bind: Engine | Connection) -> str | None:
    """The Alembic revision the store is at, or None for a store with no tables yet
    ("unversioned" when it has tables but no revision: not a perfpredict store)."""
    names = set(inspect(bind).get_table_names())
    if "alembic_version" not in names:
        return None if not names else "unversioned"
    if isinstance(bind, Connection):
        return bind.execute(text("SELECT version_num FROM alembic_version")).scalar()
    with bind.connect() as conn:
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _migrate(engine: Engine, *, upgrade: bool) -> None:
    """Create a new store, or with ``upgrade`` migrate an older one, under a lock.

    Several processes may open a new store at once (parallel ingests): the first to take
    the lock creates it, the others find it created when they get the lock.
    """
    from perfpredict.store import migrations

    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            # Take the write lock now (waiting the busy timeout), not at the first DDL.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('perfpredict-migrate'))"))
        revision = stored_revision(conn)
        # Only forwards: a newer or foreign store is left alone for the gate to refuse.
        if revision is None or (upgrade and revision in SCHEMA_REVISIONS[:-1]):
            migrations.upgrade(conn)
        conn.commit()


def open_store(url: str, *, upgrade: bool = False) -> Store:
    """Open (creating if empty) the store at ``url``, refusing one at another revision.

    With ``upgrade=True`` an older store is migrated to the newest revision first; that is
    what ``perfpredict db upgrade`` calls.
    """
    engine = make_engine(url)
    try:
        revision = stored_revision(engine)
        if revision is None or (upgrade and revision in SCHEMA_REVISIONS[:-1]):
            _migrate(engine, upgrade=upgrade)
            revision = stored_revision(engine)
    except Exception as exc:  # connection refused, bad credentials, unreadable file
        engine.dispose()
        raise _cannot_open(url, exc) from exc
    try:
        check_revision(revision, redact_url(url))
    except PerfPredictError:
        engine.dispose()
        raise
    return Store(engine=engine, url=url)


def describe_store(url: str) -> dict[str, str]:
    """URL (password hidden), backend and schema revision, without changing anything."""
    engine = make_engine(url)
    try:
        revision = stored_revision(engine) or "empty (created on first use)"
    except Exception as exc:
        raise _cannot_open(url, exc) from exc
    finally:
        engine.dispose()
    return {"url": redact_url(url), "backend": engine.dialect.name,
            "revision": revision, "required_revision": SCHEMA_REVISION}
