"""Which commands may create a store, and a shared store that the user may only read
(issue 14, items 11 and 12), through the CLI."""

from __future__ import annotations

import hashlib
import json
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from typer.testing import CliRunner, Result

from perfpredict.cli.app import app
from tests.conftest import _postgres_url

LULESH = ("--app", "LULESH 2.0.3", "--ranks-per-node", "36")
#: Commands a reader of a shared store runs, and that must not write to it.
READS = [("runs", "stats"), ("estimate", *LULESH, "--nodes", "20"), ("advise", *LULESH),
         ("systems", "show", "Frontier"), ("db", "init"), ("db", "upgrade")]


def _cli(db: str, *args: str) -> Result:
    return CliRunner().invoke(app, ["--db", db, *args])


def _trained(url: str) -> None:
    """A store holding the LULESH data set and a predictor trained on it alone (borrowing
    would train on the bundled data sets too, which says nothing of access to the store),
    whose catalog lacks Frontier, as a store seeded by an older perfpredict lacks a newer
    entry (the reads then want to add it: exactly what a reader must not do)."""
    for args in (("datasets", "load", "lulesh_thicket"), ("train", "--no-borrow-bundled"),
                 ("systems", "show", "Frontier")):
        assert _cli(url, *args).exit_code == 0
    from sqlalchemy import delete

    from perfpredict.store import open_store
    from perfpredict.store.schema import systems

    with open_store(url) as store, store.engine.begin() as conn:
        conn.execute(delete(systems).where(systems.c.name == "Frontier"))


@pytest.fixture(scope="module")
def trained_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("trained") / "store.db"
    _trained(f"sqlite:///{path}")
    return path


@pytest.fixture
def read_only_copy(trained_file: Path, tmp_path: Path) -> Iterator[Path]:
    """The trained store copied into a directory, both made read-only (file 444, folder
    555), as a center shares one; permissions restored afterwards for clean-up."""
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "store.db"
    with sqlite3.connect(trained_file) as source, sqlite3.connect(path) as copy:
        source.backup(copy)  # with what the WAL still holds, which copying the file misses
    path.chmod(0o444)
    folder.chmod(0o555)
    yield path
    folder.chmod(0o755)
    path.chmod(0o644)


@pytest.mark.parametrize("args", READS, ids=[a[0] for a in READS])
def test_read_only_sqlite_store_answers_and_is_left_untouched(
        read_only_copy: Path, args: tuple[str, ...]) -> None:
    """Tests run as root, whom no chmod stops: that nothing appears beside the store
    (SQLite's -wal and -shm files) and nothing in it changes shows that it was opened
    read-only, as an ordinary user's command must open it."""
    digest = hashlib.sha256(read_only_copy.read_bytes()).hexdigest()
    result = _cli(str(read_only_copy), *args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in read_only_copy.parent.iterdir()) == ["store.db"]
    assert hashlib.sha256(read_only_copy.read_bytes()).hexdigest() == digest


def test_read_only_store_shows_the_shipped_catalog_it_lacks(read_only_copy: Path) -> None:
    result = _cli(str(read_only_copy), "systems", "show", "Frontier")
    assert "Frontier" in result.stdout


@pytest.mark.parametrize("args", [("train",), ("datasets", "load", "relearn"),
                                  ("runs", "delete", "--batch", "1")])
def test_writing_to_a_read_only_sqlite_store_is_one_line(
        read_only_copy: Path, args: tuple[str, ...]) -> None:
    result = _cli(str(read_only_copy), *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: the store at ")
    assert "is read-only to you" in result.stderr and "server" not in result.stderr


def test_sqlite_errors_never_mention_a_server(tmp_path: Path) -> None:
    not_a_store = tmp_path / "notes.db"
    not_a_store.write_text("these are notes, not a SQLite database\n" * 100)
    result = _cli(str(not_a_store), "runs", "stats")
    assert result.exit_code == 2
    assert "server" not in result.stderr and str(not_a_store) in result.stderr


@pytest.fixture
def select_only_url() -> Iterator[str]:
    """A trained PostgreSQL store and the URL of a role that may only SELECT from it."""
    for url in _postgres_url():
        _trained(url)
        with _role(url, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO ROLE") as reader:
            yield reader


@pytest.mark.postgres
def test_select_only_postgres_role_reads_the_store(select_only_url: str) -> None:
    for args in READS:
        result = _cli(select_only_url, *args)
        assert result.exit_code == 0, (args, result.output)
    refused = _cli(select_only_url, "train")
    assert refused.exit_code == 2 and "is read-only to you" in refused.stderr


MISSING_STORE_COMMANDS = [("runs", "stats"), ("estimate", "--app", "bert", "--nodes", "8"),
                          ("advise", "--app", "bert"), ("train",), ("systems", "list"),
                          ("db", "status"), ("db", "upgrade")]


@pytest.mark.parametrize("args", MISSING_STORE_COMMANDS, ids=" ".join)
def test_a_missing_store_is_not_created(tmp_path: Path, args: tuple[str, ...]) -> None:
    """A mistyped --db is an error (exit 1), not a new empty store nor an answer from the
    bundled predictor."""
    missing = tmp_path / "no-such-dir" / "store.db"
    result = _cli(str(missing), *args)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"Error: no store at {missing} (from --db); create it "
                                    f"with \"perfpredict --db '{missing}' db init\"")
    assert result.stderr.rstrip().endswith(", or correct --db")
    assert not missing.parent.exists()


def test_db_init_and_ingest_create_a_store(tmp_path: Path) -> None:
    initialised = tmp_path / "a" / "store.db"
    assert _cli(str(initialised), "db", "init").exit_code == 0
    stats = _cli(str(initialised), "runs", "stats")
    assert stats.exit_code == 0 and stats.stdout.startswith("runs: 0,")
    ingested = tmp_path / "b" / "store.db"
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\nx,Frontier,2,10\n")
    assert _cli(str(ingested), "ingest", "csv", str(runs)).exit_code == 0
    assert _cli(str(ingested), "runs", "stats").stdout.startswith("runs: 1,")


def test_a_store_named_in_the_environment_must_exist_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "typo.db"
    monkeypatch.setenv("PERFPREDICT_DB", str(missing))
    result = CliRunner().invoke(app, ["runs", "stats"])
    assert result.exit_code == 1 and f"no store at {missing}" in result.stderr
    assert not missing.exists()


def test_the_default_store_is_still_created_on_first_use(isolated_home: Path) -> None:
    """Nobody named it, so nothing was mistyped: a first 'advise' in a fresh user
    directory answers from the bundled predictor, as the examples do."""
    result = CliRunner().invoke(app, ["runs", "stats"])
    assert result.exit_code == 0, result.output
    assert (isolated_home / "perfpredict.db").exists()


def test_db_status_of_the_default_store_before_first_use(isolated_home: Path) -> None:
    result = CliRunner().invoke(app, ["db", "status"])
    assert result.exit_code == 0, result.output
    assert "revision: none yet (the default store is created on first use)" in result.stdout
    assert "state: not created" in result.stdout
    assert not (isolated_home / "perfpredict.db").exists()


def test_db_status_as_json_reads_no_revision_as_null(isolated_home: Path,
                                                     tmp_path: Path) -> None:
    """A script compares revision with required_revision: where none is stored it reads
    null and a state, not the sentence the text shows ('none yet (...)')."""
    result = CliRunner().invoke(app, ["db", "status", "--format", "json"])
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert (status["revision"], status["state"]) == (None, "not created")
    other_tables = tmp_path / "other.db"
    with sqlite3.connect(other_tables) as conn:
        conn.execute("CREATE TABLE t (a)")
    result = CliRunner().invoke(app, ["--db", str(other_tables), "db", "status",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["state"] == "not a store"


def test_db_status_as_json_for_a_script(cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    """A script checks the revision before it writes: the same fields as the text, as
    JSON (the card's --format json for scripts; db status had text alone)."""
    from perfpredict.store.revision import SCHEMA_REVISION

    result = cli("db", "status", "--format", "json")
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert status["revision"] == status["required_revision"] == SCHEMA_REVISION
    text = cli("db", "status").stdout.splitlines()
    assert text == [f"{key}: {value}" for key, value in status.items()]


@pytest.mark.parametrize(("url", "said"), [
    ("postgres://u@db.example/runs", "SQLAlchemy names PostgreSQL postgresql://, not postgres://"),
    ("mysql+pymysql://u@db.example/runs", "a SQLite file or a PostgreSQL database, not mysql"),
    ("oracle://u@db.example/runs", "a SQLite file or a PostgreSQL database, not oracle"),
    ("postgresql+psycopg2://u@db.example/runs", "installs psycopg (version 3), not psycopg2"),
])
def test_a_database_that_cannot_hold_a_store_is_bad_usage(url: str, said: str) -> None:
    """Another database (or the postgres:// spelling a Heroku-style URL has) is refused by
    name, exit 2, not as a missing driver whose install would not help."""
    result = _cli(url, "runs", "stats")
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: cannot use database URL '{url}': ") and said in line
    assert "pip install" not in line


@pytest.mark.parametrize(("url", "said"), [
    ("postgresql+psycopg://loader@db.example:5432", "it names no database"),
    ("postgresql+psycopg://loader@db.example/", "it names no database"),
    ("postgresql+psycopg://loader:S3cr3t@db.example:543two/center", "its port (after the "
     "host's colon) is not a number"),
])
@pytest.mark.parametrize("args", [("runs", "stats"), ("db", "init")], ids=" ".join)
def test_a_server_url_without_a_database_or_a_numeric_port_is_bad_usage(
        url: str, said: str, args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """A URL without a database connected to the one named after the role (the test
    server's and most centers' 'postgres', the administrators' own), and 'no store there;
    create it with db init' sent the user to fill it; a port that is no number was a bare
    'ValueError'. Both are refused before any connection, saying what to write."""
    for name in ("PGDATABASE", "PGSERVICE"):
        monkeypatch.delenv(name, raising=False)
    line = _one_line(_cli(url, *args))
    assert line.startswith(f"Error: cannot use database URL '{url.replace('S3cr3t', '***')}': "
                           f"{said}")
    assert "postgresql+psycopg://user@host" in line
    assert "S3cr3t" not in line and "ValueError" not in line and "db init" not in line


def test_a_server_url_may_leave_the_database_to_libpq(monkeypatch: pytest.MonkeyPatch) -> None:
    """``?dbname=`` and PGDATABASE name the database as libpq reads them: such a URL is
    not refused for naming none (here the server it names is not there)."""
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "2")
    line = _one_line(_cli("postgresql+psycopg://loader@127.0.0.1:1?dbname=center", "runs",
                          "stats"))
    assert "names no database" not in line and "cannot open the store" in line
    monkeypatch.setenv("PGDATABASE", "center")
    line = _one_line(_cli("postgresql+psycopg://loader@127.0.0.1:1", "runs", "stats"))
    assert "names no database" not in line and "cannot open the store" in line


@pytest.mark.parametrize("password", ["TopSecret@evil", "50%off"])
def test_a_password_not_percent_encoded_says_how_and_shows_none_of_it(password: str) -> None:
    """An '@' left in a password made its rest part of the host, which the driver's error
    printed ("failed to resolve host 'evil@127.0.0.1'"); a bare '%' failed with a bare
    ValueError."""
    result = _cli(f"postgresql+psycopg://u:{password}@127.0.0.1:1/runs", "runs", "stats")
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert "percent-encode the password's special characters (@ as %40, % as %25" in line
    assert password.split("@")[0] not in line and "evil" not in line


@pytest.mark.parametrize(("text", "said"), [
    (b"db = 5\n", "db must be a store URL or file path in quotes, got 5"),
    (b'db = ""\n', "db must be a store URL or file path in quotes, got ''"),
    (b'dbx = "x.db"\n', "the config file sets 'dbx', which perfpredict does not read"),
    (b"db = '\xff'\n", "the config file is not valid TOML"),
])
def test_a_bad_config_file_is_one_line_naming_it(isolated_home: Path, text: bytes,
                                                   said: str) -> None:
    (isolated_home / "config.toml").write_bytes(text)
    result = CliRunner().invoke(app, ["runs", "stats"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {isolated_home / 'config.toml'}") and said in line


def test_an_empty_store_variable_names_no_store(isolated_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFPREDICT_DB", "")
    result = CliRunner().invoke(app, ["runs", "stats"])
    assert result.exit_code == 0, result.output
    assert (isolated_home / "perfpredict.db").exists()


#: A command of each kind: one that reads the store through sqlite3's fast path where it
#: can (estimate), one that creates and writes it (ingest), one that reads it whole.
ESTIMATE_INGEST_STATS = [("estimate", "--app", "x", "--nodes", "8"),
                         ("ingest", "csv", "{csv}"), ("runs", "stats")]


def _run(url: str, args: tuple[str, ...], tmp_path: Path) -> Result:
    csv = tmp_path / "runs.csv"
    csv.write_text("app,system,nodes,runtime_s\nx,Frontier,2,10\n")
    return _cli(url, *[arg.format(csv=csv) for arg in args])


def _one_line(result: Result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    (line,) = result.output.strip().splitlines()
    return line


@pytest.mark.postgres
def test_a_database_that_is_not_there_is_not_sent_to_the_server() -> None:
    """The server answered 'database "x" does not exist', and the advice was to check
    that the server is running."""
    for url in _postgres_url():
        missing = make_url(url).set(database="no_such_center").render_as_string(
            hide_password=False)
        line = _one_line(_cli(missing, "runs", "stats"))
    assert 'database "no_such_center" does not exist' in line
    assert line.endswith("; check the database's name (its owner creates it with createdb, "
                         "then runs 'perfpredict db init')")


@pytest.mark.postgres
def test_a_role_that_is_not_there_is_not_sent_to_the_server() -> None:
    """The server answered 'role "x" does not exist', and the advice was to check that
    the server is running: a misspelt user name in a center's URL is the usual cause."""
    for url in _postgres_url():
        scheme, _, rest = url.partition("://")
        unknown = f"{scheme}://no_such_loader@{rest.rpartition('@')[2]}"
        line = _one_line(_cli(unknown, "runs", "stats"))
    assert 'role "no_such_loader" does not exist' in line
    assert "server is running" not in line
    assert line.endswith("; check the role's name in the URL (the user before the @; the "
                         "server's administrator creates a role with createuser)")


@pytest.mark.postgres
def test_ssl_required_of_a_server_without_it_is_sent_to_the_sslmode() -> None:
    """A URL with ?sslmode=require on a server that offers no SSL (the test server) was
    told to check that the server is running, which had answered."""
    for url in _postgres_url():
        requiring = make_url(url).update_query_dict({"sslmode": "require"})
        host = str(requiring.host or requiring.query.get("host") or "")
        over_tcp = bool(host) and not host.startswith("/")
        if over_tcp:
            line = _one_line(_cli(requiring.render_as_string(hide_password=False), "runs",
                                  "stats"))
    if not over_tcp:
        pytest.skip("libpq asks no SSL of the Unix socket that PERFPREDICT_TEST_PG_URL names")
    assert "server does not support SSL" in line and "server is running" not in line
    assert line.endswith("; check the URL's sslmode (this server offers no SSL: ask its "
                         "administrator to enable it, or use sslmode=prefer or leave sslmode "
                         "out on a network you trust)")


@pytest.mark.postgres
def test_ssl_required_by_pgsslmode_is_sent_to_the_environment_not_the_url(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A dask worker started with PGSSLMODE=require, its URL without sslmode, was sent to
    "the URL's sslmode": the line says where the setting came from, PGSSLMODE in the
    environment of the process that failed (a worker's message is made there)."""
    for url in _postgres_url():
        given = make_url(url)
        host = str(given.host or given.query.get("host") or "")
        over_tcp = bool(host) and not host.startswith("/") and "sslmode" not in given.query
        if over_tcp:
            with monkeypatch.context() as worker_environment:  # not the test database's
                worker_environment.setenv("PGSSLMODE", "require")
                line = _one_line(_cli(url, "runs", "stats"))
    if not over_tcp:
        pytest.skip("libpq asks no SSL of the Unix socket that PERFPREDICT_TEST_PG_URL names, "
                    "nor PGSSLMODE's where it sets an sslmode")
    assert "server does not support SSL" in line and "URL's sslmode" not in line
    assert line.endswith("; check PGSSLMODE=require in the environment of the process that "
                         "failed (a dask worker's own where a worker failed; the URL sets no "
                         "sslmode; this server offers no SSL: ask its administrator to enable "
                         "it, or set PGSSLMODE=prefer or unset it there on a network you "
                         "trust)")


@pytest.mark.parametrize("answer", [
    'connection to server at "127.0.0.1", port 5432 failed: FATAL:  password '
    'authentication failed for user "loader"',
    'connection to server at "127.0.0.1", port 5432 failed: fe_sendauth: no password '
    "supplied"])
def test_a_refused_password_is_sent_to_the_password_not_the_server(answer: str) -> None:
    """libpq's answers to a wrong or missing password (as a server with password
    authentication gives them; the test server may trust every role) were followed by
    "check ... that the server is running", which had answered."""
    from perfpredict.store.database import _cannot_open

    error = _cannot_open("postgresql+psycopg://loader:S3cr3t@dbhost/center",
                         RuntimeError(answer))
    assert str(error).endswith("; check the role's name and password (percent-encoded in the "
                               "URL, or left out of it and kept in ~/.pgpass, mode 600, or "
                               "PGPASSWORD)")
    assert "S3cr3t" not in str(error) and "server is running" not in str(error)


@pytest.mark.parametrize(("answer", "advice"), [
    ('connection to server at "10.0.0.5", port 5432 failed: FATAL:  no pg_hba.conf entry for '
     'host "10.0.0.9", user "loader", database "center", no encryption',
     "that the server lets this host and role in (its administrator adds a host line for "
     "them to its pg_hba.conf)"),
    ('connection to server at "10.0.0.5", port 5432 failed: FATAL:  pg_hba.conf rejects '
     'connection for host "10.0.0.9", user "loader", database "center", SSL encryption',
     "that the server lets this host and role in (its administrator adds a host line for "
     "them to its pg_hba.conf)"),
    ('connection to server at "10.0.0.5", port 5432 failed: FATAL:  sorry, too many clients '
     "already", "the server's connection limits"),
    ("failed to resolve host 'dbhots': [Errno -2] Name or service not known",
     "the host's name in the URL (after the @: this machine finds no address for it)"),
    ('could not translate host name "dbhots" to address: Name or service not known',
     "the host's name in the URL (after the @: this machine finds no address for it)"),
    ('connection to server at "10.0.0.5", port 5432 failed: FATAL:  remaining connection '
     "slots are reserved for non-replication superuser connections",
     "the server's connection limits"),
])
def test_a_connection_turned_away_or_never_made_is_not_said_to_be_a_server_down(
        answer: str, advice: str) -> None:
    """A center's server that admits only some hosts (pg_hba.conf) or has every connection
    taken answered, and "check ... that the server is running" sent the user to look at
    a server that runs; a misspelt host was sent there too, where no server was asked
    (the test server admits every host and has connections to spare, and a name's
    lookup is the network's, so the drivers' wording is given here)."""
    from perfpredict.store.database import _cannot_open

    error = str(_cannot_open("postgresql+psycopg://loader:S3cr3t@dbhost/center",
                             RuntimeError(answer)))
    assert f"; check {advice}" in error
    assert "S3cr3t" not in error and "server is running" not in error


def _relay(client: socket.socket, server: socket.socket) -> None:
    """Pass the client's start-up and login messages to the server and close both ends
    at its first query ('Q' simple, 'P' extended): the server accepted the connection
    and it is lost, as a restart or a killed backend loses it."""
    def read(n: int) -> bytes:
        got = b""
        while len(got) < n and (chunk := client.recv(n - len(got))):
            got += chunk
        return got

    try:
        while (length := read(4)) and len(length) == 4:  # SSLRequest, then StartupMessage
            body = read(int.from_bytes(length, "big") - 4)
            server.sendall(length + body)
            if body[:4] not in (SSL_REQUEST, GSSENC_REQUEST):
                break
        while (kind := read(1)) not in (b"", b"Q", b"P"):
            length = read(4)
            server.sendall(kind + length + read(int.from_bytes(length, "big") - 4))
    finally:  # shutdown, not close, wakes the other thread's recv on that socket
        for end in (client, server):
            with suppress(OSError):  # the client may have closed its end first
                end.shutdown(socket.SHUT_RDWR)


SSL_REQUEST, GSSENC_REQUEST = (80877103).to_bytes(4, "big"), (80877104).to_bytes(4, "big")


@contextmanager
def _dropping_at_first_query(url: str) -> Iterator[str]:
    """``url``'s server behind a relay on loopback (:func:`_relay`): its URL through the
    relay, without SSL so that the relay reads the messages."""
    given = make_url(url)
    host = str(given.host or given.query.get("host") or "localhost")
    port = int(given.port or given.query.get("port") or 5432)
    listener = socket.create_server(("127.0.0.1", 0))
    threads: list[threading.Thread] = []
    ends: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            server = (socket.socket(socket.AF_UNIX) if host.startswith("/")
                      else socket.create_connection((host, port)))
            if host.startswith("/"):
                server.connect(f"{host}/.s.PGSQL.{port}")
            ends.extend((client, server))
            pump = threading.Thread(target=_pump, args=(server, client), daemon=True)
            pump.start()
            threads.append(pump)
            _relay(client, server)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    through = given.difference_update_query(["host", "port"]).update_query_dict(
        {"sslmode": "disable"}).set(host="127.0.0.1", port=listener.getsockname()[1])
    try:
        yield through.render_as_string(hide_password=False)
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes its accept, which close does not
        acceptor.join()
        for pump in threads:
            pump.join()
        for end in (listener, *ends):
            end.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """The server's answers to the client, until either end is closed."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass


@pytest.mark.postgres
@pytest.mark.parametrize("args", ESTIMATE_INGEST_STATS, ids=lambda a: a[0])
def test_a_connection_lost_while_the_store_opens_is_said_to_be_lost(
        args: tuple[str, ...], tmp_path: Path) -> None:
    """A connection the server accepted and lost while the store was being opened (a
    killed backend, a restart) was "cannot open the store ...: server closed the
    connection unexpectedly; check ... that the server is running", exit 2, where the
    same a moment later is a lost connection to run again (exit 1). A server that
    answers no connection is still told to be checked."""
    for url in _postgres_url():
        with _dropping_at_first_query(url) as through:
            line = _one_line(_run(through, args, tmp_path), exit_code=1)
        assert line.startswith(f"Error: lost the connection to the store at {through} (")
        assert line.endswith("run it again once the server answers (what is already "
                             "stored is not stored twice)")
        rerun = _run(url, ("ingest", "csv", "{csv}"), tmp_path)  # nothing half-made
        assert rerun.exit_code == 0 and "1 stored" in rerun.output
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    refused = _one_line(_run(f"postgresql+psycopg://u@127.0.0.1:{port}/db", args, tmp_path))
    assert "Connection refused" in refused and refused.endswith("that the server is running")


@pytest.mark.postgres
def test_a_role_without_connect_on_the_database_is_sent_to_its_owner() -> None:
    """A center's database whose owner revoked CONNECT from PUBLIC answered 'permission
    denied for database', and the advice was to check that the server is running."""
    for url in _postgres_url():
        database = make_url(url).database
        with _role(url, f'REVOKE CONNECT ON DATABASE "{database}" FROM PUBLIC') as role_url:
            line = _one_line(_cli(role_url, "runs", "stats"))
    assert f'permission denied for database "{database}"' in line
    assert line.endswith("; check that your role may connect to the database (its owner grants "
                         "CONNECT on it to your role)")


@pytest.mark.postgres
def test_a_role_at_its_connection_limit_is_sent_to_the_limits() -> None:
    """Every connection a role may hold taken (its CONNECTION LIMIT, as a center caps a
    loader's parallel ingests) answered 'too many connections for role', and the advice
    was to check that the server is running."""
    for url in _postgres_url():
        with _role(url, "ALTER USER ROLE CONNECTION LIMIT 0") as role_url:
            line = _one_line(_cli(role_url, "runs", "stats"))
    assert "too many connections for role" in line and "server is running" not in line
    assert line.endswith("; check the server's connection limits (every connection it allows "
                         "your role is taken: run fewer commands at once, or ask its "
                         "administrator to raise max_connections or the role's or "
                         "database's CONNECTION LIMIT)")


@pytest.mark.postgres
@pytest.mark.parametrize("args", ESTIMATE_INGEST_STATS, ids=lambda a: a[0])
def test_a_database_of_other_tables_is_said_not_to_be_a_store(args: tuple[str, ...],
                                                              tmp_path: Path) -> None:
    """The server answered, so "check that the server is running" sent a user the wrong
    way; then "relation "systems" does not exist", as if a store had lost a table. A
    database holding other tables is not a perfpredict store, as a SQLite file of other
    tables is not (exit 1, as there being no store at all)."""
    from sqlalchemy import create_engine, text

    for url in _postgres_url():
        engine = create_engine(url)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE inventory (x integer)"))
        engine.dispose()
        line = _one_line(_run(url, args, tmp_path), exit_code=1)
        assert line == (f"Error: {url} holds tables but no perfpredict schema revision, so it "
                        "is not a perfpredict store; name the store meant (a library call its URL, "
                        "a command --db), or for a new store a new file or an empty database")


@contextmanager
def _role(url: str, *grants: str) -> Iterator[str]:
    """The URL of a new role of the database at ``url``, given ``grants`` (SQL with
    ROLE for its name) there; dropped afterwards."""
    from sqlalchemy import create_engine, text

    role = f"role_{uuid.uuid4().hex[:8]}"
    owner = create_engine(url, isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
        for grant in grants:
            conn.execute(text(grant.replace("ROLE", role)))
    scheme, rest = url.split("://", 1)
    try:
        yield f"{scheme}://{role}@{rest.split('@', 1)[-1]}"
    finally:
        with owner.connect() as conn:
            conn.execute(text(f"DROP OWNED BY {role}"))
            conn.execute(text(f"DROP ROLE {role}"))
        owner.dispose()


@pytest.fixture
def postgres_store(tmp_path: Path) -> Iterator[str]:
    """A PostgreSQL store holding a run (every table of a store, none trained)."""
    for url in _postgres_url():
        assert _run(url, ("ingest", "csv", "{csv}"), tmp_path).exit_code == 0
        yield url


ALL_BUT = ("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ROLE",
           "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ROLE")


@pytest.mark.postgres
@pytest.mark.parametrize("table", ["artifacts", "systems"])
@pytest.mark.parametrize("args", ESTIMATE_INGEST_STATS, ids=lambda a: a[0])
def test_a_role_that_may_not_read_a_table_is_told_which_and_the_grant(
        postgres_store: str, tmp_path: Path, table: str, args: tuple[str, ...]) -> None:
    """SELECT revoked on the artifacts failed an estimate as an "internal error" of four
    lines of SQL; on the catalog, an ingest so, while an estimate said the application
    had no trained series."""
    with _role(postgres_store, *ALL_BUT, f"REVOKE SELECT ON {table} FROM ROLE") as url:
        role = url.split("://", 1)[1].split("@", 1)[0]
        line = _one_line(_run(url, args, tmp_path))
    assert line.startswith(f"Error: your role {role} may not read table(s) {table} of the "
                           f"store at {url} (SELECT is not granted); ask the store's owner "
                           f"to run: GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")


@pytest.mark.postgres
@pytest.mark.parametrize("args", [*ESTIMATE_INGEST_STATS, ("db", "status")], ids=lambda a: a[0])
def test_a_loader_granted_writes_but_no_select_is_told_the_grant(
        postgres_store: str, tmp_path: Path, args: tuple[str, ...]) -> None:
    """A loader granted what the guide said a writer needs (INSERT, UPDATE, DELETE and
    the sequences) but no SELECT failed on the schema revision with "cannot open the
    store ...: permission denied for table alembic_version", which named no grant."""
    with _role(postgres_store, "GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public "
               "TO ROLE", ALL_BUT[1]) as url:
        role = url.split("://", 1)[1].split("@", 1)[0]
        line = _one_line(_run(url, args, tmp_path))
    assert line.startswith(f"Error: your role {role} may not read table(s) ")
    assert "alembic_version" in line
    assert line.endswith(f"ask the store's owner to run: GRANT SELECT ON ALL TABLES IN "
                         f"SCHEMA public TO {role}")


@pytest.mark.postgres
def test_a_role_that_may_write_part_of_the_store_reads_it_and_is_told_what_a_write_lacks(
        postgres_store: str, tmp_path: Path) -> None:
    """INSERT on every table but the runs: an ingest failed at its first row, after the
    catalog and its batch were written (rolled back, as an internal error)."""
    with _role(postgres_store, *ALL_BUT, "REVOKE INSERT ON runs FROM ROLE") as url:
        role = url.split("://", 1)[1].split("@", 1)[0]
        assert _run(url, ("runs", "stats"), tmp_path).exit_code == 0
        line = _one_line(_run(url, ("ingest", "csv", "{csv}"), tmp_path))
    assert line == (f"Error: your role {role} may write only part of the store at {url} and "
                    "this command writes to it (it lacks INSERT on runs); ask the store's "
                    f"owner to run: GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "
                    f"public TO {role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")


@pytest.mark.postgres
@pytest.mark.parametrize("args", [("db", "init"), ("ingest", "csv", "{csv}")], ids=" ".join)
def test_a_role_that_may_not_create_tables_is_told_so_in_an_empty_database(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    """It was "cannot open the store ...: ProgrammingError: (psycopg.errors.
    InsufficientPrivilege) permission denied for schema public; check ... that your
    role may use it"."""
    for database in _postgres_url():
        with _role(database, "REVOKE CREATE ON SCHEMA public FROM PUBLIC") as url:
            role = url.split("://", 1)[1].split("@", 1)[0]
            line = _one_line(_run(url, args, tmp_path))
    assert line == (f"Error: the database at {url} holds no perfpredict store and your role "
                    f"{role} may not create its tables (CREATE on schema public is not "
                    "granted); ask the database's owner to create the store ('perfpredict db "
                    "init' as their role) and grant you its tables, or to run: GRANT CREATE "
                    f"ON SCHEMA public TO {role}")


@pytest.mark.postgres
def test_a_loader_that_may_not_create_temporary_tables_is_told_the_grant(
        postgres_store: str, tmp_path: Path) -> None:
    """An ingest stages its rows in a temporary table (COPY, then one INSERT): a loader
    granted every table, in a database whose owner revoked TEMPORARY from PUBLIC (a
    common hardening), is told the grant it lacks, and the file stores nothing."""
    database = make_url(postgres_store).database
    with _role(postgres_store, *ALL_BUT,
               f'REVOKE TEMPORARY ON DATABASE "{database}" FROM PUBLIC') as url:
        role = url.split("://", 1)[1].split("@", 1)[0]
        csv = tmp_path / "more.csv"
        csv.write_text("app,system,nodes,runtime_s\nx,Frontier,4,6\n")
        line = _one_line(_cli(url, "ingest", "csv", str(csv)))
        stats = _cli(url, "runs", "stats", "--format", "json").stdout
    assert json.loads(stats)["n_runs"] == 1  # the store's own run
    assert line == (f"Error: your role {role} may not create the temporary table an ingest "
                    f"stages its rows in (TEMPORARY on database {database} is not granted); "
                    "nothing was stored; ask the database's owner to run: GRANT TEMPORARY ON "
                    f"DATABASE {database} TO {role}")


def test_a_missing_store_named_in_the_config_file_says_where_it_was_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint named --db and PERFPREDICT_DB only, neither of which the user had set."""
    from perfpredict.config import config_path

    monkeypatch.setenv("PERFPREDICT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    missing = tmp_path / "typo.db"
    config_path().parent.mkdir(parents=True)
    config_path().write_text(f'db = "{missing}"\n')
    result = CliRunner().invoke(app, ["runs", "stats"])
    assert result.exit_code == 1 and f"no store at {missing}" in result.stderr
    assert result.stderr.rstrip().endswith(f"the db line of {config_path()}")


@pytest.mark.parametrize("db_line", ["postgresql+psycopg://loader:Top@S3cr3t@dbhost/center",
                                     "mysql://loader@dbhost/center",
                                     "postgresql+psycopg://loader@dbhost:port/center"])
def test_a_bad_url_in_the_config_file_says_where_it_was_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db_line: str) -> None:
    """A URL the config file gave that cannot name a store (a password not
    percent-encoded, another database, a port that is not a number) was refused naming
    only the URL, to a user who had given none: where it came from is said."""
    from perfpredict.config import config_path

    pytest.importorskip("psycopg")
    monkeypatch.setenv("PERFPREDICT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    config_path().parent.mkdir(parents=True)
    config_path().write_text(f'db = "{db_line}"\n')
    line = _one_line(CliRunner().invoke(app, ["runs", "stats"]), exit_code=2)
    assert line.startswith("Error: cannot use database URL ")
    assert f"the db line of {config_path()}" in line and "S3cr3t" not in line


@pytest.mark.parametrize("db_line", ["center.db", "sqlite:///center.db"])
def test_a_relative_store_in_the_config_file_is_beside_it_from_any_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db_line: str) -> None:
    """Read from the working directory, ``db = "center.db"`` named another store in each
    folder: ``train`` elsewhere found none, and ``ingest`` there made a second one."""
    from perfpredict.config import config_path

    monkeypatch.setenv("PERFPREDICT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    config_path().parent.mkdir(parents=True)
    config_path().write_text(f'db = "{db_line}"\n')
    runs = tmp_path / "runs.csv"
    runs.write_text("app,system,nodes,runtime_s\nlulesh,x,1,10\n")
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        assert CliRunner().invoke(app, ["ingest", "csv", str(runs)]).exit_code == 0
    assert sorted(p.name for p in tmp_path.rglob("*.db")) == ["center.db"]
    assert (config_path().parent / "center.db").exists()
    stats = CliRunner().invoke(app, ["runs", "stats", "--format", "json"])
    assert json.loads(stats.stdout)["n_runs"] == 1


@pytest.mark.postgres
@pytest.mark.parametrize(("args", "exit_code"), [(("db", "upgrade"), 2), (("runs", "stats"), 1)],
                         ids=lambda a: " ".join(a) if isinstance(a, tuple) else str(a))
def test_a_loader_of_an_older_store_is_sent_to_the_role_that_owns_it(
        args: tuple[str, ...], exit_code: int) -> None:
    """A loader granted every write was told to run 'db upgrade' itself, which failed
    with "cannot open the store ...: must be owner of table runs; check --db, ..." (only
    a table's owner may alter it); it is told whose upgrade it is, as that role's URL."""
    from sqlalchemy import create_engine, text

    from perfpredict.store import migrations

    for url in _postgres_url():
        engine = create_engine(url)
        migrations.upgrade(engine, "0005_one_key_per_job")
        with engine.connect() as conn:
            owner = conn.execute(text("SELECT current_user")).scalar()
        with _role(url, *ALL_BUT) as loader:
            line = _one_line(_cli(loader, *args), exit_code=exit_code)
        with engine.connect() as conn:
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        engine.dispose()
        as_owner = f"{make_url(url).drivername}://{owner}@{url.rsplit('@', 1)[1]}"
    assert revision == "0005_one_key_per_job"
    assert line.endswith(f"only the role that owns its tables, {owner}, may upgrade it: ask "
                         f"its owner to back it up and run: perfpredict --db '{as_owner}' "
                         "db upgrade")
    assert "must be owner" not in line


@pytest.mark.postgres
def test_the_commands_a_message_gives_run_as_pasted(tmp_path: Path) -> None:
    """"create it with 'perfpredict --db URL db init'" and "back it up, then run:
    perfpredict --db URL db upgrade" gave the URL with ``***`` for its password, which
    failed to authenticate as pasted, and a path with a space unquoted inside quotes: the
    command leaves the password out (the driver reads ~/.pgpass or PGPASSWORD) and is
    one shell word per argument."""
    import shlex

    from sqlalchemy import create_engine

    from perfpredict.store import migrations

    def command(line: str, before: str, after: str = "") -> list[str]:
        return shlex.split(line.split(before, 1)[1].rsplit(after, 1)[0] if after
                           else line.split(before, 1)[1])

    missing = tmp_path / "my store.db"
    line = _one_line(_cli(str(missing), "runs", "stats"), exit_code=1)
    assert command(line, 'create it with "', '" or by') == [
        "perfpredict", "--db", str(missing), "db", "init"]
    for url in _postgres_url():
        given = make_url(url).set(password="S3cr3t").render_as_string(hide_password=False)
        empty = _one_line(_cli(given, "runs", "stats"), exit_code=1)
        engine = create_engine(url)
        migrations.upgrade(engine, "0005_one_key_per_job")
        engine.dispose()
        old = _one_line(_cli(given, "runs", "stats"), exit_code=1)
    assert command(empty, 'create it with "', '" or by') == [
        "perfpredict", "--db", url, "db", "init"]
    assert command(old, "then run: ") == ["perfpredict", "--db", url, "db", "upgrade"]
    assert "S3cr3t" not in empty + old


@pytest.mark.parametrize("args", [("runs", "stats"), ("db", "status")], ids=" ".join)
def test_a_store_named_with_db_sends_no_one_to_a_config_file_there_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    """An unreachable server or a missing file named with --db said "check --db,
    PERFPREDICT_DB and the db line of HOME/config.toml", a file that did not exist."""
    from perfpredict.config import config_path

    monkeypatch.setenv("PERFPREDICT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    for db in (str(tmp_path / "typo.db"), "postgresql+psycopg://alice@127.0.0.1:1/center"):
        if db.startswith("postgresql"):
            pytest.importorskip("psycopg")
        result = _cli(db, *args)
        assert result.exit_code in (1, 2) and f"{db} (from --db)" in result.stderr
        assert "config.toml" not in result.stderr
    assert not config_path().exists()


@pytest.mark.parametrize("origin", ["--db", "$PERFPREDICT_DB", "config"])
def test_a_store_that_cannot_be_opened_says_where_its_url_came_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, origin: str) -> None:
    """"check --db and PERFPREDICT_DB" named both places to whoever had used one, and the
    same words went to a notebook that had passed the URL itself; the command now names
    the URL it tried and the one place that gave it, and the library neither."""
    from perfpredict.config import config_path

    pytest.importorskip("psycopg")
    url = "postgresql+psycopg://alice@127.0.0.1:1/center"
    monkeypatch.setenv("PERFPREDICT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PERFPREDICT_DB", raising=False)
    args = ["runs", "stats"]
    if origin == "--db":
        args = ["--db", url, *args]
    elif origin == "$PERFPREDICT_DB":
        monkeypatch.setenv("PERFPREDICT_DB", url)
    else:
        config_path().parent.mkdir(parents=True)
        config_path().write_text(f'db = "{url}"\n')
        origin = f"the db line of {config_path()}"
    line = _one_line(CliRunner().invoke(app, args))
    assert line.startswith(f"Error: cannot open the store at {url} (from {origin}): "
                           "OperationalError: ")
    assert line.endswith("; check that the server is running")


@contextmanager
def _silent_server() -> Iterator[int]:
    """The port of a server that accepts connections and never answers (a hung one)."""
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


@pytest.mark.parametrize("how", ["default", "url", "environment"])
def test_a_server_that_never_answers_is_one_line_not_a_hang(
        how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """libpq waits forever by default: 'runs stats' on a server that accepted the
    connection and said nothing hung until killed. The user's wait wins over the
    default (made 60 s for them, 2 s on its own, so that the test is quick)."""
    import time

    pytest.importorskip("psycopg")
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    monkeypatch.setattr("perfpredict.store.database.CONNECT_TIMEOUT_S",
                        2 if how == "default" else 60)
    if how == "environment":
        monkeypatch.setenv("PGCONNECT_TIMEOUT", "2")
    with _silent_server() as port:
        url = f"postgresql+psycopg://alice@127.0.0.1:{port}/center"
        if how == "url":
            url += "?connect_timeout=2"
        started = time.monotonic()
        line = _one_line(_cli(url, "runs", "stats"))
        waited_s = time.monotonic() - started
    assert "connection timeout expired" in line and "that the server is running" in line
    assert waited_s < 8
