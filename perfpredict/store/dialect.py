"""The few statements whose spelling differs between SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def insert_rows_ignoring_duplicates(conn: Connection, table: Table, columns: Sequence[str],
                                    rows: list[tuple[Any, ...]], *key_columns: str) -> None:
    """:func:`insert_ignoring_duplicates` of plain tuples, straight to the DBAPI cursor's
    ``executemany`` inside the connection's transaction.

    For bulk ingest: SQLAlchemy's per-row parameter processing cost more than SQLite's
    insert itself. The values must be what the driver binds as is: JSON already as text,
    no NaN for NULL (PostgreSQL would store NaN).
    """
    quote = conn.dialect.identifier_preparer.quote
    marker = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    statement = (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "
        f"VALUES ({', '.join([marker] * len(columns))}) "
        f"ON CONFLICT ({', '.join(quote(c) for c in key_columns)}) DO NOTHING")
    cursor = conn.connection.cursor()
    try:
        cursor.executemany(statement, rows)
    finally:
        cursor.close()
