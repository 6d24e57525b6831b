"""The schema gate (issue 6): a store at an older revision is refused with the exact
upgrade command, ``perfpredict db upgrade`` migrates it without losing a row, and a store
from a newer perfpredict is refused with the advice to upgrade perfpredict instead."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from perfpredict.cli.app import app
from perfpredict.store.revision import SCHEMA_REVISION, SCHEMA_REVISIONS

OLD_REVISION = "0001_initial"
#: (name, job id, runtime) of the golden store's runs.
GOLDEN_RUNS = [("lulesh", "101", 120.5), ("lulesh", "102", 64.0), ("o'brien; DROP TABLE runs", "103", 33.3)]

COMMANDS = [
    ("runs", "stats"),
    ("runs", "list"),
    ("ingest", "csv", "{csv}"),
    ("train",),
    ("estimate", "--app", "lulesh", "--nodes", "8"),
    ("systems", "list"),
]


def build_golden_store(path: Path, revision: str = OLD_REVISION) -> str:
    """A store as perfpredict at ``revision`` left it, with a batch, a system, runs, a reject."""
    from perfpredict.store import migrations

    url = f"sqlite:///{path}"
    engine = create_engine(url)
    try:
        migrations.upgrade(engine, revision)
        with engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO systems (name, cores_per_node, origin) VALUES ('opal', 36, 'ingest')"))
            conn.execute(text(
                "INSERT INTO ingest_batches (id, path, sha256, format, started_epoch_s, n_records,"
                " n_stored, n_duplicates, n_rejected) VALUES (1, '/old/runs.csv', :sha, 'csv',"
                " 1700000000, 3, 3, 0, 1)"), {"sha": "ab" * 32})
            for i, (name, job_id, runtime) in enumerate(GOLDEN_RUNS):
                conn.execute(text(
                    "INSERT INTO runs (natural_key, batch_id, source_line, app, system, nodes,"
                    " runtime_s, job_id, censored, extra) VALUES (:key, 1, :line, :app, 'opal',"
                    " :nodes, :runtime, :job, 0, :extra)"),
                    {"key": f"opal|{job_id}", "line": i + 2, "app": name, "nodes": 2 ** i,
                     "runtime": runtime, "job": job_id, "extra": '{"note": "kept"}'})
            conn.execute(text("INSERT INTO rejects (batch_id, line_no, raw, reason) VALUES "
                              "(1, 5, 'x,y', 'runtime_s is empty')"))
    finally:
        engine.dispose()
    return url


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                for table in ("systems", "ingest_batches", "runs", "rejects")}
    finally:
        conn.close()


def _revision(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    finally:
        conn.close()


def test_known_revisions_match_the_shipped_migrations() -> None:
    from alembic.script import ScriptDirectory

    from perfpredict.store.migrations import MIGRATIONS_DIR

    script = ScriptDirectory(str(MIGRATIONS_DIR))
    shipped = [rev.revision for rev in reversed(list(script.walk_revisions()))]
    assert list(SCHEMA_REVISIONS) == shipped
    assert script.get_current_head() == SCHEMA_REVISION


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_every_command_refuses_an_old_store_with_the_upgrade_command(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    path = tmp_path / "old store.db"
    url = build_golden_store(path)
    before = _rows(path)
    csv = tmp_path / "runs.csv"
    csv.write_text("app,system,nodes,runtime_s\nx,opal,1,5\n")
    args = [part.format(csv=csv) for part in command]
    result = CliRunner().invoke(app, ["--db", url, *args])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"perfpredict --db '{url}' db upgrade" in lines[0]
    assert repr(OLD_REVISION) in lines[0]
    assert "Traceback" not in result.output
    assert _rows(path) == before  # refused before writing anything
    assert _revision(path) == OLD_REVISION


@pytest.mark.parametrize("command", [("runs", "stats"), ("estimate", "--app", "lulesh",
                                                       "--nodes", "8")],
                         ids=lambda c: " ".join(c[:2]))
def test_a_reader_of_an_old_store_is_sent_to_its_owner(tmp_path: Path,
                                                       command: tuple[str, ...]) -> None:
    """A store the user may not write (a center's, shared read-only) was answered "back it
    up, then run: ... db upgrade", which they cannot."""
    path = tmp_path / "shared.db"
    url = build_golden_store(path)
    path.chmod(0o444)  # read-only by its mode, which perfpredict reads even as root
    result = CliRunner().invoke(app, ["--db", url, *command])
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith(f"it is read-only to you: ask its owner to back it up and run: "
                         f"perfpredict --db '{url}' db upgrade")


def test_db_upgrade_migrates_the_golden_store_without_losing_a_row(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    url = build_golden_store(path)
    before = _rows(path)
    result = CliRunner().invoke(app, ["--db", url, "db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith(f"upgraded from schema revision {OLD_REVISION} "
                                          f"to {SCHEMA_REVISION}.")
    assert _revision(path) == SCHEMA_REVISION
    # 0004 gives every run a variant, unknown (NULL) for the runs stored before it
    upgraded = {**before, "runs": [(*run, None) for run in before["runs"]]}
    assert _rows(path) == upgraded
    # ... and the store is usable afterwards, its runs counted.
    stats = CliRunner().invoke(app, ["--db", url, "runs", "stats", "--format", "json"])
    assert stats.exit_code == 0, stats.output
    assert '"n_runs": 3' in stats.stdout
    again = CliRunner().invoke(app, ["--db", url, "db", "upgrade"])
    assert again.exit_code == 0 and _rows(path) == upgraded
    assert again.stdout.strip().endswith(f"is at the current schema ({SCHEMA_REVISION}); "
                                         "nothing to upgrade.")


def _store_predictor_as_0003_did(url: str, trained: dict[str, Any]) -> None:
    """The predictor as perfpredict at 0003 stored it: the document with a digest of each
    application's entries, and one row per entry (keys without a variant)."""
    import hashlib
    import json

    from perfpredict import artifact

    texts: dict[str, list[tuple[str, str]]] = {}
    for entry in artifact.series_entries(trained):
        del entry["key"][3]  # the key as trained before variants: app, system, size, layout
        text = json.dumps(entry, sort_keys=True, separators=(",", ":"), allow_nan=False)
        texts.setdefault(entry["key"][0].casefold(), []).append((entry["key"][0], text))
    body = {k: v for k, v in trained.items()
            if k not in (artifact.SERIES, artifact.SERIES_TEXTS, "sha256")}
    body["series_sha256_by_app"] = {
        app: hashlib.sha256("\n".join(t for _, t in rows).encode()).hexdigest()
        for app, rows in texts.items()}
    doc = artifact.seal(body)
    conn = sqlite3.connect(url.split(":///", 1)[1])
    with conn:
        conn.execute("INSERT INTO artifacts (id, kind, created_epoch_s, format_version, sha256, "
                     "document) VALUES (1, ?, 1.0, ?, ?, ?)",
                     (doc["kind"], doc["format_version"], doc["sha256"], artifact.to_text(doc)))
        conn.executemany("INSERT INTO artifact_series (artifact_id, app, app_folded, entry) "
                         "VALUES (1, ?, ?, ?)", [(name, folded, text)
                                                 for folded, rows in texts.items()
                                                 for name, text in rows])
    conn.close()


def test_a_db_upgrade_that_lost_the_race_to_another_says_nothing_to_upgrade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ``db upgrade`` at once (two administrators, or a cron job and one): both read
    the old revision, the second took the lock after the first had upgraded and changed
    nothing, yet both printed "upgraded from schema revision 0004_run_variant". The
    revision read before the lock is the old one here, as the second one read it."""
    from perfpredict.store import database

    path = tmp_path / "store.db"
    url = build_golden_store(path)
    first = CliRunner().invoke(app, ["--db", url, "db", "upgrade"])
    assert first.exit_code == 0 and f"from schema revision {OLD_REVISION}" in first.stdout
    before = _rows(path)
    monkeypatch.setattr(database, "_readable_revision", lambda engine, url: OLD_REVISION)
    second = CliRunner().invoke(app, ["--db", url, "db", "upgrade"])
    assert second.exit_code == 0, second.output
    assert second.stdout.strip().endswith(f"is at the current schema ({SCHEMA_REVISION}); "
                                          "nothing to upgrade.")
    assert _rows(path) == before and _revision(path) == SCHEMA_REVISION


def test_an_upgrade_to_variants_keeps_the_runs_and_asks_to_retrain_the_predictor(
        tmp_path: Path) -> None:
    """A predictor trained before 0004 keys its series without a variant: an estimate
    refuses it with the command that replaces it, rather than misreading its keys."""
    from perfpredict import artifact
    from perfpredict.estimate import bundled_artifact_path

    path = tmp_path / "store.db"
    url = build_golden_store(path, "0003_artifact_series")
    _store_predictor_as_0003_did(url, artifact.read_file(bundled_artifact_path()))
    assert CliRunner().invoke(app, ["--db", url, "db", "upgrade"]).exit_code == 0
    export = CliRunner().invoke(app, ["--db", url, "runs", "export", "--format", "csv"])
    assert export.exit_code == 0, export.output
    header, first = export.stdout.splitlines()[:2]
    assert header.startswith("job_id,app,system,problem_size,variant,nodes,")
    assert first.startswith("101,lulesh,opal,,,1,")  # no problem size, no variant
    result = CliRunner().invoke(app, ["--db", url, "estimate", "--app", "bert", "--nodes", "8"])
    assert result.exit_code == 1, result.output
    assert "retrain with 'perfpredict train'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _newer_store(path: Path) -> str:
    from perfpredict.store import open_store

    url = f"sqlite:///{path}"
    open_store(url).dispose()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099_from_the_future'")
    conn.close()
    return url


@pytest.mark.parametrize("command", [*COMMANDS, ("db", "upgrade")], ids=lambda c: " ".join(c[:2]))
def test_a_newer_store_asks_to_upgrade_perfpredict(tmp_path: Path, command: tuple[str, ...]) -> None:
    path = tmp_path / "store.db"
    url = _newer_store(path)
    csv = tmp_path / "runs.csv"
    csv.write_text("app,system,nodes,runtime_s\nx,opal,1,5\n")
    result = CliRunner().invoke(app, ["--db", url, *[p.format(csv=csv) for p in command]])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "upgrade perfpredict" in lines[0]
    assert "db upgrade" not in lines[0]  # it cannot downgrade
    assert _revision(path) == "0099_from_the_future"


def test_estimate_fast_path_checks_the_revision(tmp_path: Path) -> None:
    """The stdlib-sqlite3 read of the latest artifact gates on the revision too."""
    from perfpredict.errors import SchemaOutOfDateError
    from perfpredict.store.artifacts import load_latest_artifact

    old = tmp_path / "old.db"
    with pytest.raises(SchemaOutOfDateError, match="db upgrade"):
        load_latest_artifact(build_golden_store(old))
    with pytest.raises(SchemaOutOfDateError, match="upgrade perfpredict"):
        load_latest_artifact(_newer_store(tmp_path / "new.db"))
    current = tmp_path / "current.db"
    from perfpredict.store import open_store

    open_store(f"sqlite:///{current}").dispose()
    assert load_latest_artifact(f"sqlite:///{current}") is None


def test_a_foreign_database_is_not_taken_for_a_store(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE notes (x TEXT)")
    conn.close()
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "runs", "stats"])
    assert result.exit_code == 1
    assert "not a perfpredict store" in result.stderr
