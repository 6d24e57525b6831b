"""Opening a store: engine settings per backend and the schema gate.

SQLite gets WAL journaling and a busy timeout so that ingest, train and estimate can run
at the same time without "database is locked" reaching the user. A new store is created,
when asked for (``db init``, ``ingest``), at the newest revision (under a lock, so parallel
first uses create it once); every other command refuses a missing one. A store the user
may only read is opened read-only and nothing tries to write to it. An
older store is refused with the exact command that upgrades it (optuna's habit), a newer
one with the advice to upgrade perfpredict, so no command ever writes to a schema it does
not understand.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import QueuePool

from perfpredict.config import origin_note, redact_url, store_url
from perfpredict.errors import BadInputError, MissingDependencyError, PerfPredictError
from perfpredict.store.location import (
    missing_store,
    require_sqlite_file,
    sqlite_file,
    sqlite_read_only,
    sqlite_uri,
)
from perfpredict.store.lost import lost_connection
from perfpredict.store.opened import Store
from perfpredict.store.revision import (
    SCHEMA_REVISION,
    SCHEMA_REVISIONS,
    check_revision,
    upgrade_advice,
)

SQLITE_BUSY_TIMEOUT_MS = 60_000


def _sqlite_pragmas(*, read_only: bool):  # type: ignore[no-untyped-def]
    """The per-connection settings; a read-only store keeps the journal mode it has."""

    def apply(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if not read_only:
            _enable_wal(cursor)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    return apply


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


def _sqlite_engine(path: Path, *, create: bool,
                   named_by: str | None = None) -> tuple[Engine, bool]:
    """An engine on the store file ``path`` and whether it is read-only. A missing file
    is created (with its directory) only when ``create``; else "no store at PATH"
    (``named_by``: where the CLI found it)."""
    import sqlite3

    if create and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        uri, read_only = f"file:{quote(str(path.resolve()))}", False
    else:
        require_sqlite_file(path, named_by)
        uri, read_only = sqlite_uri(path), sqlite_read_only(path)
    engine = create_engine("sqlite://", poolclass=QueuePool, creator=lambda: sqlite3.connect(
        uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, check_same_thread=False))
    event.listen(engine, "connect", _sqlite_pragmas(read_only=read_only))
    return engine, read_only


def make_engine(url: str, *, create: bool = True, named_by: str | None = None) -> Engine:
    """An engine for ``url`` with the settings perfpredict relies on; a URL refused is
    said to come from ``named_by`` where the CLI found it (:func:`open_store`)."""
    path = sqlite_file(url)
    if path is not None:
        return _sqlite_engine(path, create=create, named_by=named_by)[0]
    if url.startswith("sqlite"):  # in memory
        engine = create_engine(url)
        event.listen(engine, "connect", _sqlite_pragmas(read_only=False))
        return engine
    try:
        _check_backend(url)
    except BadInputError as exc:
        # a URL the config file gave was refused naming no file, to a user who gave none
        raise (exc.adding(f"the URL came from {named_by}") if named_by else exc) from None
    # psycopg logs the error it ignores closing a lost connection's pipeline ("error
    # ignored terminating <psycopg.Pipeline [BAD]>"); with no logging set up, Python
    # printed it above the one line that says the connection was lost (lost_connection).
    logging.getLogger("psycopg").addHandler(logging.NullHandler())
    try:
        return create_engine(url, pool_pre_ping=True, connect_args=_connect_timeout(url))
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            f"the database driver for {redact_url(url)} is not installed ({exc.name}); "
            "for PostgreSQL install it with: pip install 'perfpredict[postgres]'"
        ) from exc
    except Exception as exc:  # sqlalchemy.exc.ArgumentError and friends
        raise BadInputError(
            f"cannot use database URL {redact_url(url)!r}: {type(exc).__name__}; "
            "give a URL like sqlite:///path/to/store.db or postgresql+psycopg://user@host/db"
            + (f" in {named_by}" if named_by else "")
        ) from exc


#: Seconds a connection to a server may take, unless the URL (``?connect_timeout=N``) or
#: ``PGCONNECT_TIMEOUT`` says otherwise: libpq waits forever by default, and a command on
#: a server that accepted the connection but never answered (hung, or behind a firewall
#: that drops its packets) hung with it, a nightly ingest included.
CONNECT_TIMEOUT_S = 10


def _connect_timeout(url: str) -> dict[str, int]:
    """The driver's ``connect_timeout``, where the user set none (theirs wins)."""
    if "connect_timeout=" in url.partition("?")[2] or os.environ.get("PGCONNECT_TIMEOUT"):
        return {}
    return {"connect_timeout": CONNECT_TIMEOUT_S}


def _check_backend(url: str) -> None:
    """A store lives in SQLite or PostgreSQL (the migrations and upserts are written for
    those two); another database, or the ``postgres://`` spelling SQLAlchemy does not
    read, is refused by name rather than as a missing driver to install."""
    dialect = url.split(":", 1)[0].split("+", 1)[0].lower()
    if dialect == "postgres":
        raise BadInputError(f"cannot use database URL {redact_url(url)!r}: SQLAlchemy names "
                            "PostgreSQL postgresql://, not postgres://; write "
                            "postgresql+psycopg://user@host/db")
    if dialect != "postgresql":
        raise BadInputError(f"cannot use database URL {redact_url(url)!r}: a store is a SQLite "
                            f"file or a PostgreSQL database, not {dialect}; give a URL like "
                            "sqlite:///path/to/store.db or postgresql+psycopg://user@host/db")
    driver = url.split(":", 1)[0].partition("+")[2].lower()
    if driver not in ("", "psycopg"):
        raise BadInputError(f"cannot use database URL {redact_url(url)!r}: perfpredict's "
                            f"postgres extra installs psycopg (version 3), not {driver}; "
                            "write postgresql+psycopg://user@host/db")
    _check_credentials(url)
    _check_database_named(url)


def _check_credentials(url: str) -> None:
    """A password is percent-encoded in a URL: an ``@`` in it left as is made the rest of
    it part of the host name, which the driver's error then printed ("failed to resolve
    host 'evil@127.0.0.1'" for the password TopSecret@evil), and a bare ``%`` failed with
    a bare ValueError."""
    credentials = url.partition("://")[2].rpartition("@")[0]
    if "@" in credentials or re.search(r"%(?![0-9A-Fa-f]{2})", credentials):
        raise BadInputError(f"cannot use database URL {redact_url(url)!r}: percent-encode "
                            "the password's special characters (@ as %40, % as %25, : as "
                            "%3A, / as %2F; python -c \"import urllib.parse; print(urllib."
                            "parse.quote('PASSWORD', safe=''))\" prints it)")


def _check_database_named(url: str) -> None:
    """A server's URL names its port as a number and the store's database. A port that
    is no number was refused as a bare "ValueError"; a URL that named no database
    (``postgresql+psycopg://user@host:5432``) connected to the one named after the role,
    on most servers ``postgres``, the administrators' own, and the advice was to create
    the store there with 'db init'. libpq's own ways to name it (``?dbname=``,
    ``?service=``, PGDATABASE, PGSERVICE) are left to it."""
    safe = redact_url(url)
    try:
        parsed = make_url(url)
    except ValueError:
        raise BadInputError(f"cannot use database URL {safe!r}: its port (after the host's "
                            "colon) is not a number; write postgresql+psycopg://user@host:"
                            "5432/db, with a password's special characters percent-encoded "
                            "(: as %3A)") from None
    if parsed.database or {"dbname", "service"} & set(parsed.query) or any(
            os.environ.get(name) for name in ("PGDATABASE", "PGSERVICE")):
        return
    raise BadInputError(f"cannot use database URL {safe!r}: it names no database, and the "
                        "server would take the one named after your role (often 'postgres', "
                        "the administrators' own); name the store's database after the last "
                        "/: postgresql+psycopg://user@host/DBNAME")


def _sslmode_advice(url: str) -> str:
    """Where the sslmode the server could not meet was asked for: the URL's, else the
    PGSSLMODE of the process that failed. That is a dask worker's own where a worker
    failed: a worker started with PGSSLMODE=require was sent to "the URL's sslmode",
    which the URL did not have."""
    no_ssl = "this server offers no SSL: ask its administrator to enable it, or "
    if "sslmode" in make_url(url).query:
        return (f"the URL's sslmode ({no_ssl}use sslmode=prefer or leave sslmode out on a "
                "network you trust)")
    if os.environ.get("PGSSLMODE"):
        return (f"PGSSLMODE={os.environ['PGSSLMODE']} in the environment of the process "
                "that failed (a dask worker's own where a worker failed; the URL sets no "
                f"sslmode; {no_ssl}set PGSSLMODE=prefer or unset it there on a network you "
                "trust)")
    return ("the sslmode that the URL, PGSSLMODE or a service file (pg_service.conf) sets "
            f"for the process that failed ({no_ssl}ask for sslmode=prefer on a network you "
            "trust)")


#: What the server's answer to a connection says was wrong, and what to check instead of
#: whether it runs (or a function of the store's URL that says it): it answered, and
#: "password authentication failed ...; check ... that the server is running" sent a user
#: to the wrong place. libpq's English wording; a server or client in another language
#: gets the general advice.
_SERVER_ANSWERED: tuple[tuple[re.Pattern[str], str | Callable[[str], str]], ...] = (
    (re.compile(r"password authentication failed|no password supplied"),
     "the role's name and password (percent-encoded in the URL, or left out of it and "
     "kept in ~/.pgpass, mode 600, or PGPASSWORD)"),
    # "role does not exist" is no server down either: the URL's user name is wrong, or
    # the server's administrator has not created the role yet
    (re.compile(r'role "[^"]*" does not exist'),
     "the role's name in the URL (the user before the @; the server's administrator "
     "creates a role with createuser)"),
    # the server answered without SSL where an sslmode required it
    (re.compile(r"server does not support SSL"), _sslmode_advice),
    (re.compile(r'database "[^"]*" does not exist'),
     "the database's name (its owner creates it with createdb, then runs 'perfpredict db "
     "init')"),
    # no server was asked: the host's name is unknown to this machine (psycopg resolves it
    # itself, libpq says "could not translate host name"), a typo more often than a server
    (re.compile(r"failed to resolve host|could not translate host name"),
     "the host's name in the URL (after the @: this machine finds no address for it)"),
    # a center's server that lets only some hosts and roles in: no line of its pg_hba.conf
    # admits this one, or one rejects it, which only its administrator can change
    (re.compile(r"no pg_hba\.conf entry|pg_hba\.conf rejects connection"),
     "that the server lets this host and role in (its administrator adds a host line for "
     "them to its pg_hba.conf)"),
    # the database's owner revoked CONNECT from PUBLIC, as a center's hardening does
    (re.compile(r'permission denied for database "[^"]*"'),
     "that your role may connect to the database (its owner grants CONNECT on it to your "
     "role)"),
    # every connection the server (max_connections), the role or the database (CONNECTION
    # LIMIT) allows is taken, by other commands or other users: a retry later may pass
    (re.compile(r"too many (clients|connections)|remaining connection slots are reserved"),
     "the server's connection limits (every connection it allows your role is taken: run "
     "fewer commands at once, or ask its administrator to raise max_connections or the "
     "role's or database's CONNECTION LIMIT)"),
)


def _accepted(engine: Engine) -> threading.Event:
    """Set once the server has accepted a connection of ``engine``, before SQLAlchemy's
    first queries on it: what fails opening the store after that is a connection the
    server made and lost, not one it refused (:func:`_unopened`)."""
    accepted = threading.Event()
    event.listen(engine, "first_connect", lambda *_: accepted.set())
    return accepted


def _unopened(engine: Engine, url: str, exc: Exception, accepted: threading.Event,
              named_by: str | None = None) -> PerfPredictError:
    """What a user sees when opening the store failed outside perfpredict's own checks.
    A connection the server had accepted and then lost on the way (a killed backend, a
    restart) is the lost connection it is, exit 1 and "run it again", as the same event
    a moment later says (:func:`lost_connection`): it was "cannot open the store ...
    server closed the connection unexpectedly; check ... that the server is running",
    exit 2. One refused or never made is :func:`_cannot_open`."""
    lost = lost_connection(Store(engine, url), exc) if accepted.is_set() else None
    return lost or _cannot_open(url, exc, named_by)


def _cannot_open(url: str, exc: Exception, named_by: str | None = None) -> BadInputError:
    """What a user sees when the store cannot be reached, password hidden, and where the
    CLI found its URL (``named_by``). Only a server's store can be down: a SQLite file's
    message names the file's permissions. It said "check --db and PERFPREDICT_DB" to a
    notebook that had passed the URL itself."""
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    cause = type(getattr(exc, "orig", None) or exc).__name__
    if sqlite_file(url):
        check = "that the file is a perfpredict store you can read"
    elif cause == "InsufficientPrivilege":  # the server answered: the role may not
        check = ("that your role may use it (the store's owner grants that, and runs "
                 "'perfpredict db init' where your role may not create tables)")
    elif cause == "UndefinedTable":
        check = ("that the database is a perfpredict store (it lacks its tables; "
                 "'perfpredict db init' makes one in an empty database)")
    else:
        advice = next((advice for pattern, advice in _SERVER_ANSWERED
                       if pattern.search(first_line)), "that the server is running")
        check = advice if isinstance(advice, str) else advice(url)
    return BadInputError(f"cannot open the store at {redact_url(url)}{origin_note(named_by)}: "
                         f"{failure_text(exc)}; check {check}")


def failure_text(exc: Exception) -> str:
    """What the database said opening a store failed of: ``exc``'s type and first line,
    passwords hidden."""
    first_line = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {redact_url(first_line)}"


#: What a role must be granted on every table of a store to write to it, besides the
#: SELECT that reading it takes, and on the sequences that number rows (USAGE).
WRITE_PRIVILEGES = ("INSERT", "UPDATE", "DELETE")

#: Each privilege the connecting role holds or not on the tables named that exist, and
#: USAGE on the sequences numbering the ``numbered`` ones.
_PRIVILEGES = text(
    "SELECT t.name, p.name, has_table_privilege(to_regclass(t.name), p.name) "
    "FROM unnest(CAST(:tables AS text[])) AS t(name) "
    "CROSS JOIN unnest(CAST(:privileges AS text[])) AS p(name) "
    "WHERE to_regclass(t.name) IS NOT NULL "
    "UNION ALL SELECT s.name, 'USAGE', has_sequence_privilege(s.name, 'USAGE') FROM ("
    "SELECT pg_get_serial_sequence(t.name, 'id') AS name "
    "FROM unnest(CAST(:numbered AS text[])) AS t(name) "
    "WHERE to_regclass(t.name) IS NOT NULL) AS s WHERE s.name IS NOT NULL")


@dataclass(frozen=True)
class _Grants:
    """What the connecting role may not do to a server's store, as ``privilege on
    table`` phrases, and its name and schema, quoted as a GRANT names them."""

    role: str
    schema: str
    unreadable: list[str]
    unwritable: list[str]
    #: it may write none of it: a SELECT-only role on a shared store
    reader_only: bool

    @classmethod
    def of(cls, conn: Connection) -> _Grants:
        from perfpredict.store.schema import metadata

        role, schema = conn.execute(
            text("SELECT quote_ident(current_user), quote_ident(current_schema())")).one()
        held = conn.execute(_PRIVILEGES, {
            "tables": [*metadata.tables, "alembic_version"],
            "privileges": ["SELECT", *WRITE_PRIVILEGES],
            "numbered": [t.name for t in metadata.sorted_tables if "id" in t.c]}).all()
        writes = [(name, privilege, granted) for name, privilege, granted in held
                  if privilege != "SELECT" and name != "alembic_version"]
        return cls(role, schema,
                   [name for name, privilege, granted in held
                    if privilege == "SELECT" and not granted],
                   [f"{privilege} on {name}" for name, privilege, granted in writes
                    if not granted],
                   not any(granted for _, _, granted in writes))


def _server_read_only(engine: Engine, url: str, *, write: bool) -> bool:
    """Whether the role may only read the server's store at ``url`` (a SELECT-only role
    on a shared store), refusing in one line, naming the tables and the GRANT to ask
    for, a role that may not read all of it, or, to ``write``, write all of it. Such a
    role met the table it lacked mid-command: a SELECT revoked on the artifacts failed
    an estimate with several lines of SQL, a write half-granted an ingest. A role that
    may write some tables but not others only reads, so no read ever half-writes."""
    with engine.connect() as conn:
        grants = _Grants.of(conn)
    if grants.unreadable:
        raise BadInputError(
            f"your role {grants.role} may not read table(s) {', '.join(grants.unreadable)} "
            f"of the store at {redact_url(url)} (SELECT is not granted); ask the store's "
            f"owner to run: GRANT SELECT ON ALL TABLES IN SCHEMA {grants.schema} TO "
            f"{grants.role}")
    if write and grants.unwritable and not grants.reader_only:
        raise BadInputError(
            f"your role {grants.role} may write only part of the store at "
            f"{redact_url(url)} and this command writes to it (it lacks "
            f"{', '.join(grants.unwritable)}); ask the store's owner to run: GRANT "
            f"{', '.join(WRITE_PRIVILEGES)} ON ALL TABLES IN SCHEMA {grants.schema} TO "
            f"{grants.role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA {grants.schema} TO "
            f"{grants.role}")
    return bool(grants.unwritable)


def _other_owner(engine: Engine, url: str) -> tuple[str, str] | None:
    """The role owning a server's store and the store's URL as that role (password left
    out), when the connecting role is not it, nor a member of it: PostgreSQL lets only
    the owner alter a table, so a loader granted every write ran 'db upgrade' as told and
    met "must be owner of table runs", which named no one."""
    with engine.connect() as conn:
        row = conn.execute(text(
            "SELECT tableowner, pg_has_role(current_user, tableowner, 'USAGE') FROM "
            "pg_tables WHERE schemaname = current_schema() AND tablename = "
            "'alembic_version'")).first()
    if row is None or row[1]:
        return None
    given = make_url(url).difference_update_query(["password"])
    as_owner = URL.create(given.drivername, username=row[0], host=given.host,
                          port=given.port, database=given.database, query=given.query)
    return row[0], as_owner.render_as_string(hide_password=False)


def _require_create(engine: Engine, url: str) -> None:
    """Refuse, in one line naming the privilege, to make a store in a server's empty
    database where the role may not create tables (its first DDL failed with
    "permission denied for schema public")."""
    with engine.connect() as conn:
        role, schema, may_create = conn.execute(text(
            "SELECT quote_ident(current_user), quote_ident(current_schema()), "
            "has_schema_privilege(current_schema(), 'CREATE')")).one()
    if not may_create:
        raise BadInputError(
            f"the database at {redact_url(url)} holds no perfpredict store and your role "
            f"{role} may not create its tables (CREATE on schema {schema} is not granted); "
            "ask the database's owner to create the store ('perfpredict db init' as their "
            f"role) and grant you its tables, or to run: GRANT CREATE ON SCHEMA {schema} TO "
            f"{role}")


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


def _readable_revision(engine: Engine, url: str) -> str | None:
    """:func:`stored_revision`, where a server's role that may not read the revision is
    told the GRANT it lacks: a loader granted INSERT, UPDATE and DELETE without SELECT
    met "cannot open the store ...: permission denied for table alembic_version", which
    named no grant, on every command, ``db status`` included."""
    try:
        return stored_revision(engine)
    except DBAPIError as exc:
        if type(exc.orig).__name__ == "InsufficientPrivilege":  # the server answered
            _server_read_only(engine, url, write=False)  # names the tables and the GRANT
        raise


def _migrate(engine: Engine, *, upgrade: bool) -> str | None:
    """Create a new store, or with ``upgrade`` migrate an older one, under a lock, and
    return the revision it migrated from (None when it created the store or changed
    nothing).

    Several processes may open a new store at once (parallel ingests): the first to take
    the lock creates it, the others find it created when they get the lock. So with two
    ``db upgrade`` at once: the second finds the store upgraded, and says so, where both
    said they had upgraded it from the old revision.
    """
    from perfpredict.store import migrations

    with engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        try:
            if sqlite:
                # SQLite's own way to rebuild a table others' foreign keys name (0008):
                # the checks off outside the transaction, every key checked before it
                # commits, and the connection closed after, not pooled with them off.
                conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
                # Take the write lock now (waiting the busy timeout), not at the first DDL.
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            elif conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('perfpredict-migrate'))"))
            revision = stored_revision(conn)
            old = upgrade and revision in SCHEMA_REVISIONS[:-1]
            # Only forwards: a newer or foreign store is left alone for the gate to refuse.
            if revision is None or old:
                migrations.upgrade(conn)
                if sqlite:
                    _refuse_dangling_keys(conn, str(engine.url))
            conn.commit()
        finally:
            if sqlite:
                conn.invalidate()
    return revision if old else None


def _refuse_dangling_keys(conn: Connection, url: str) -> None:
    """Refuse to commit a SQLite migration, run with the foreign key checks off, that
    leaves a row naming one its store does not hold."""
    dangling = conn.exec_driver_sql("PRAGMA foreign_key_check").first()
    if dangling:
        table, row_id, parent, _ = dangling
        raise PerfPredictError(
            f"cannot upgrade the store at {url}: row {row_id} of its table {table} names a "
            f"row of {parent} that it does not hold; nothing was changed. Restore the store "
            "from its backup, or delete that row, then upgrade again")


def open_store(url: str | os.PathLike[str], *, upgrade: bool = False, create: bool = True,
               write: bool = False, named_by: str | None = None) -> Store:
    """Open the store at ``url`` (or a SQLite file's path, as ``--db`` takes it), refusing
    one at another revision, and with ``write`` one the user may only read (one line now
    rather than a failed INSERT later).

    With ``create`` (the library's default; the CLI passes it only for ``db init`` and
    ``ingest``) a missing or empty store is created at the newest revision; without it,
    it is "no store at ...". With ``upgrade=True`` an older store is migrated to the
    newest revision first; that is what ``perfpredict db upgrade`` calls.

    ``named_by`` is where the CLI found ``url`` (:func:`perfpredict.config.resolve_db`),
    which its messages then name; a caller who passed the URL leaves it out.
    """
    url = store_url(url)
    path = sqlite_file(url)
    if path is not None:
        engine, read_only = _sqlite_engine(path, create=create, named_by=named_by)
    else:
        engine, read_only = make_engine(url, named_by=named_by), False
    accepted = _accepted(engine)
    try:
        revision = _readable_revision(engine, url)
        if revision is None and not create:
            raise missing_store(str(path) if path else redact_url(url), named_by)
        server = path is None and engine.dialect.name != "sqlite"
        if server and revision in SCHEMA_REVISIONS:  # other tables: the gate says so
            read_only = _server_read_only(engine, url, write=write)
        old = revision in SCHEMA_REVISIONS[:-1]
        migrate = revision is None or (upgrade and old)
        owner = _other_owner(engine, url) if server and old else None
        if server and revision is None:
            _require_create(engine, url)
        if migrate and owner is not None:
            raise BadInputError(f"your role may not upgrade the store at {redact_url(url)}; "
                                + upgrade_advice(redact_url(url), owner=owner))
        if read_only and (write or migrate):
            raise BadInputError(
                f"the store at {redact_url(url)} is read-only to you and this command "
                "writes to it; ask its owner for write access, or use a store of your own"
                + (" (--db)" if named_by else ""))
        upgraded_from = None
        if migrate:
            upgraded_from = _migrate(engine, upgrade=upgrade)
            revision = stored_revision(engine)
    except PerfPredictError:
        engine.dispose()
        raise
    except Exception as exc:  # connection refused or lost, bad credentials, unreadable file
        engine.dispose()
        raise _unopened(engine, url, exc, accepted, named_by) from exc
    try:
        check_revision(revision, redact_url(url), read_only=read_only, owner=owner)
    except PerfPredictError:
        engine.dispose()
        raise
    return Store(engine=engine, url=url, read_only=read_only, upgraded_from=upgraded_from)


def describe_store(url: str, *, must_exist: bool = True,
                   named_by: str | None = None) -> dict[str, str | None]:
    """URL (password hidden), backend, schema revision and what that means for a
    writer (``state``), without changing anything. A missing SQLite file is "no store
    at ..." when it ``must_exist`` (the user named it), else a store not created yet
    (the default one, created on first use).

    ``revision`` is None where no schema is stored, so that a script comparing it with
    ``required_revision`` reads a null, not a sentence; ``state`` tells a store not
    created yet from an empty database: "not created", "empty", "current", "older"
    (``db upgrade`` migrates it), "newer" (a later perfpredict's) or "not a store"
    (tables but no revision). ``named_by`` as for :func:`open_store`."""
    path = sqlite_file(url)
    if path is not None and not path.exists() and not must_exist:
        return {"url": redact_url(url), "backend": "sqlite", "revision": None,
                "required_revision": SCHEMA_REVISION, "state": "not created"}
    engine = make_engine(url, create=False, named_by=named_by)
    accepted = _accepted(engine)
    try:
        revision = _readable_revision(engine, url)
    except PerfPredictError:
        raise
    except Exception as exc:
        raise _unopened(engine, url, exc, accepted, named_by) from exc
    finally:
        engine.dispose()
    state = ("empty" if revision is None else "not a store" if revision == "unversioned"
             else "current" if revision == SCHEMA_REVISION
             else "older" if revision in SCHEMA_REVISIONS else "newer")
    return {"url": redact_url(url), "backend": engine.dialect.name, "revision": revision,
            "required_revision": SCHEMA_REVISION, "state": state}
