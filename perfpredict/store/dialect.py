"""The few statements whose spelling differs between SQLite and PostgreSQL, and the bulk
insert of an ingest, which each does its own fastest way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import Table
from sqlalchemy.engine import Connection
from sqlalchemy.sql.dml import Insert

from perfpredict.errors import BadInputError


def insert_ignoring_duplicates(conn: Connection, table: Table, *key_columns: str) -> Insert:
    """``INSERT ... ON CONFLICT (key) DO NOTHING`` for the connection's backend, so that
    re-ingesting a job, or two ingests racing on it, stores it exactly once. The key is
    one or more columns of a unique index."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing(index_elements=list(key_columns))
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).on_conflict_do_nothing(index_elements=list(key_columns))


def wait_for_writers(conn: Connection) -> None:
    """Wait, as the first statement of ``conn``'s transaction, until no other transaction
    writes to the store's runs, and keep new ones from writing them until this one ends:
    for a delete, which must see the runs and overlaps of an ingest under way before it
    decides what goes and which files to name for ``ingest --reread``. SQLite takes its
    one write lock (its busy timeout bounds the wait); PostgreSQL a table lock that its
    readers (estimate, train, runs list) do not wait for, and that an ingest waits for at
    its first run stored, holding nothing the delete takes."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        conn.exec_driver_sql("LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE")


#: The first key of the PostgreSQL advisory locks an ingest takes per file path (the
#: two-key form, apart from the migration's one-key lock): "pp" in ASCII.
PATH_LOCK_SPACE = 0x7070


def wait_for_ingests_of(conn: Connection, path: str) -> None:
    """Wait, in ``conn``'s transaction, until no other ingest of the file stored as ``path``
    is under way, and keep new ones waiting until this one ends. A results CSV a script
    appends to, ingested by two processes at once a line apart, was read as two files:
    neither saw the other's batch to extend, and each stored every row. SQLite needs
    nothing: an ingest claims its batch, its first write, under the store's one write
    lock, and looks for the earlier versions after."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%(space)s, hashtext(%(path)s))",
                             {"space": PATH_LOCK_SPACE, "path": path})


class Inserted(NamedTuple):
    """What :func:`insert_rows_ignoring_duplicates` did besides inserting."""

    #: stored rows that took the empty columns of a row of the same key
    n_filled: int
    #: Whether some row may have been left out, its key stored already: only then need
    #: a caller look up whose rows those keys are (an ingest meeting another file's jobs).
    some_left_out: bool


def insert_rows_ignoring_duplicates(conn: Connection, table: Table, columns: Sequence[str],
                                    rows: list[tuple[Any, ...]], *key_columns: str,
                                    replace_where: str | None = None,
                                    kept: Sequence[str] = (), kept_where: str = "TRUE",
                                    filled_where: str | None = None,
                                    unfilled: Sequence[str] = ()) -> Inserted:
    """:func:`insert_ignoring_duplicates` of plain tuples, inside the connection's
    transaction, the fastest way each backend has: SQLite's ``executemany`` on the DBAPI
    cursor, PostgreSQL's ``COPY`` (:func:`_copy_rows`).

    With ``replace_where`` (SQL in which ``excluded`` is the new row and the table's name
    the stored one) a row whose key is stored replaces it where the condition holds,
    except the columns ``kept``, which keep their stored value unless the new row has one,
    where ``kept_where`` (SQL as ``replace_where``) holds too. With ``filled_where`` (SQL
    as ``replace_where``) a row whose key is stored and that did not replace it, where the
    condition holds, fills the stored row's empty (NULL) columns with its values and
    changes none the stored row has, except the columns ``unfilled`` (where the stored row
    came from: its line in another file is no line of its own); the number of stored rows
    so filled is returned, and whether some row may have been left out (:class:`Inserted`).
    Rows are taken in order: of two rows with one key, the second meets the first as the
    stored one.

    For bulk ingest: SQLAlchemy's per-row parameter processing cost more than SQLite's
    insert itself. The values must be what the driver binds as is: JSON already as text,
    no NaN for NULL (PostgreSQL would store NaN).
    """
    quote = conn.dialect.identifier_preparer.quote
    target = quote(table.name)
    names = ", ".join(quote(c) for c in columns)
    keys = ", ".join(quote(c) for c in key_columns)
    on_conflict = f"ON CONFLICT ({keys}) "
    replace = None
    if replace_where is not None:
        assignments = ", ".join(
            f"{quote(c)} = CASE WHEN {kept_where} THEN COALESCE(excluded.{quote(c)}, "
            f"{target}.{quote(c)}) ELSE excluded.{quote(c)} END" if c in kept
            else f"{quote(c)} = excluded.{quote(c)}"
            for c in columns if c not in key_columns)
        replace = f"{on_conflict}DO UPDATE SET {assignments} WHERE {replace_where}"
    fill = None
    if filled_where is not None:
        filled = [c for c in columns if c not in key_columns and c not in unfilled]
        fill = (f"{on_conflict}DO UPDATE SET " + ", ".join(
            f"{quote(c)} = COALESCE({target}.{quote(c)}, excluded.{quote(c)})" for c in filled)
            + f" WHERE ({filled_where}) AND (" + " OR ".join(
            f"({target}.{quote(c)} IS NULL AND excluded.{quote(c)} IS NOT NULL)"
            for c in filled) + ")")
    rounds = _rounds(rows, itemgetter(*(list(columns).index(c) for c in key_columns)))
    if conn.dialect.name == "postgresql":
        return _copy_rows(conn, table, columns, rounds, replace or on_conflict + "DO NOTHING",
                          fill)
    insert = (f"INSERT INTO {target} ({names}) VALUES ({', '.join(['?'] * len(columns))}) "
              f"{on_conflict}")
    cursor = conn.connection.cursor()
    n_filled, some_left_out = 0, False
    try:
        for round_rows in rounds:
            # Ignoring conflicts first, and only where some conflicted (the driver sums
            # ``rowcount`` over ``executemany``) replaying the rows with the replacing
            # statement, then with the filling one: SQLite's ``DO UPDATE`` looks each
            # row's key up before inserting it, which made a 1M-line sacct ingest 35%
            # slower where nothing conflicts.
            cursor.executemany(insert + "DO NOTHING", round_rows)
            if cursor.rowcount == len(round_rows):
                continue
            some_left_out = True  # or replaced: SQLite's count does not tell them apart
            for clause in (replace, fill):
                if clause is not None:
                    cursor.executemany(insert.removesuffix(on_conflict) + clause, round_rows)
            n_filled += int(cursor.rowcount) if fill is not None else 0
    finally:
        cursor.close()
    return Inserted(n_filled, some_left_out)


def _rounds(rows: list[tuple[Any, ...]],
            key_of: Callable[[tuple[Any, ...]], Any]) -> list[list[tuple[Any, ...]]]:
    """``rows`` in rounds of one row per key: the first row of each key, then the second
    ... in order. ``ON CONFLICT DO UPDATE`` may touch a stored row once per PostgreSQL
    statement, and a row that replaces or fills a stored one must meet it as one row
    after another would (a requeued job's incarnations, a record of a run read twice),
    whichever statement comes first for the others."""
    row_keys = list(map(key_of, rows))
    if len(set(row_keys)) == len(rows):
        return [rows]
    seen: dict[Any, int] = {}
    rounds: list[list[tuple[Any, ...]]] = []
    for key, row in zip(row_keys, rows, strict=True):
        n_before = seen[key] = seen.get(key, -1) + 1
        if n_before == len(rounds):
            rounds.append([])
        rounds[n_before].append(row)
    return rounds


def insert_rows(conn: Connection, table: Table, columns: Sequence[str],
                rows: list[tuple[Any, ...]]) -> None:
    """Plain tuples inserted in their order, inside the connection's transaction, the
    fastest way each backend has: SQLite's ``executemany``, PostgreSQL's ``COPY``
    straight into ``table`` (no key to keep, so nothing to stage).
    For a table without a unique key beside its own (an ingest's rejects): a statement
    a row made each reject cost 75-100 us on SQLite and 190 us on PostgreSQL, against
    10-15 us in bulk (a file of 200,000 bad lines, docs/performance.md)."""
    if not rows:
        return
    quote = conn.dialect.identifier_preparer.quote
    target, names = quote(table.name), ", ".join(quote(c) for c in columns)
    if conn.dialect.name == "postgresql":
        driver: Any = conn.connection.driver_connection  # psycopg's, for its COPY
        with (driver.cursor() as cursor,
              cursor.copy(f"COPY {target} ({names}) FROM STDIN (FORMAT binary)") as copy):
            copy.set_types(_copy_types(table, columns))
            for row in rows:
                copy.write_row(row)
        return
    conn.exec_driver_sql(f"INSERT INTO {target} ({names}) VALUES "
                         f"({', '.join(['?'] * len(columns))})", rows)


#: How ``COPY ... (FORMAT binary)`` writes a value of each column type of the schema: as
#: the column's type reads it (a Python int as a 4-byte integer, a float as 8 bytes).
#: Strings and JSON (given encoded already) as text, which is their binary form too.
#: Binary, the driver spent 40% less per row than as text (text: 2.4 s for 250k runs).
_COPY_TYPES = {"integer": "int4", "float": "float8", "boolean": "bool", "string": "text",
               "text": "text", "JSON": "text"}


def _copy_types(table: Table, columns: Sequence[str]) -> list[str]:
    return [_COPY_TYPES[table.c[c].type.__visit_name__] for c in columns]


def _copy_rows(conn: Connection, table: Table, columns: Sequence[str],
               rounds: list[list[tuple[Any, ...]]], on_conflict: str, fill: str | None
               ) -> Inserted:
    """PostgreSQL: each round of rows (:func:`_rounds`) ``COPY``-ed into a temporary
    staging table, then moved into ``table`` with one ``INSERT ... SELECT ... ON
    CONFLICT``, and moved in again with ``fill`` (an ``ON CONFLICT`` clause) where given,
    in the connection's transaction (the staging table goes at its end, so a failed
    ingest leaves nothing). The number of stored rows ``fill`` updated is returned, and
    whether the first statement left rows out (neither inserted nor replaced them).

    ``executemany`` made a statement of every row: a 1M-line sacct dump (250k runs) took
    4.4-7.1 times what ``psql``'s ``\\copy`` of the file takes, most of it waiting for the
    server (bench/ingest_benchmark.py --pg; docs/performance.md)."""
    quote = conn.dialect.identifier_preparer.quote
    target, stage = quote(table.name), quote(f"{table.name}_staged")
    names = ", ".join(quote(c) for c in columns)
    copy_types = _copy_types(table, columns)
    from psycopg.errors import InsufficientPrivilege  # the postgres extra's driver

    driver: Any = conn.connection.driver_connection  # psycopg's, for its COPY
    cursor = driver.cursor()
    n_filled, some_left_out = 0, False
    try:
        for round_rows in rounds:
            try:  # every column of the table, so rows of any columns fit; no constraints
                cursor.execute(f"CREATE TEMP TABLE IF NOT EXISTS {stage} ON COMMIT DROP AS "
                               f"SELECT * FROM {target} WITH NO DATA; TRUNCATE {stage}")
            except InsufficientPrivilege:  # the role reads and writes the tables already
                role, database = quote(driver.info.user), quote(driver.info.dbname)
                raise BadInputError(
                    f"your role {role} may not create the temporary table an ingest stages "
                    f"its rows in (TEMPORARY on database {database} is not granted); nothing "
                    f"was stored; ask the database's owner to run: GRANT TEMPORARY ON "
                    f"DATABASE {database} TO {role}") from None
            with cursor.copy(f"COPY {stage} ({names}) FROM STDIN (FORMAT binary)") as copy:
                copy.set_types(copy_types)
                for row in round_rows:
                    copy.write_row(row)
            for clause in (on_conflict, fill):
                if clause is not None:
                    cursor.execute(f"INSERT INTO {target} ({names}) SELECT {names} "
                                   f"FROM {stage} {clause}")
                    if clause is on_conflict:
                        some_left_out |= cursor.rowcount != len(round_rows)
            n_filled += max(cursor.rowcount, 0) if fill is not None else 0
    finally:
        cursor.close()
    return Inserted(n_filled, some_left_out)
