"""The few statements whose spelling differs between SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import Table
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert


def insert_ignoring_duplicates(conn: Connection, table: Table, *key_columns: str) -> Insert:
    """``INSERT ... ON CONFLICT (key) DO NOTHING`` for the connection's backend, so that
    re-ingesting a job, or two ingests racing on it, stores it exactly once. The key is
    one or more columns of a unique index."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing(index_elements=list(key_columns))
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).on_conflict_do_nothing(index_elements=list(key_columns))
