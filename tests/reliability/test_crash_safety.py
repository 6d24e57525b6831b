"""Crash safety (issue 6): ``perfpredict ingest`` killed with SIGKILL at several points
leaves a store that passes ``PRAGMA integrity_check`` and holds the file all or nothing,
and a rerun stores every job exactly once."""

from __future__ import annotations

import functools
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.reliability._data import bulk_csv, cli_env, perfpredict_argv, run_cli

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

N_JOBS = 60_000
#: Seconds after the start at which the ingest is killed (imports, open, mid-insert...).
KILL_AFTER_S = (0.2, 0.5, 1.0, 2.0, 4.0)


def _store_state(db: Path) -> tuple[str, int, int, int]:
    conn = sqlite3.connect(db)
    try:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "runs" not in tables:
            return check, 0, 0, 0
        n_runs, n_keys = conn.execute(
            "SELECT count(*), count(DISTINCT natural_key) FROM runs").fetchone()
        n_batches = conn.execute("SELECT count(*) FROM ingest_batches").fetchone()[0]
        return check, n_runs, n_keys, n_batches
    finally:
        conn.close()


def _kill_when(proc: subprocess.Popen[bytes], ready: float | Path) -> None:
    """SIGKILL ``proc`` after ``ready`` seconds, or once the WAL file ``ready`` has grown
    past a megabyte (certainly inside the insert transaction)."""
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if isinstance(ready, Path):
            if ready.exists() and ready.stat().st_size > 1 << 20:
                break
        elif time.monotonic() - start_of[proc.pid] >= ready:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


start_of: dict[int, float] = {}


@pytest.mark.slow
def test_sigkilled_ingest_leaves_a_sound_store_and_a_rerun_completes(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    url = f"sqlite:///{db}"
    source = bulk_csv(tmp_path / "jobs.csv", N_JOBS)
    killed_mid_write = 0
    for ready in (*KILL_AFTER_S, Path(f"{db}-wal")):
        proc = subprocess.Popen(perfpredict_argv("--db", url, "ingest", "csv", str(source)),
                                env=cli_env(tmp_path), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        start_of[proc.pid] = time.monotonic()
        _kill_when(proc, ready)
        if not db.exists():
            continue  # killed before the store was opened
        check, n_runs, n_keys, n_batches = _store_state(db)
        assert check == "ok", f"killed at {ready}: {check}"
        # One transaction per file: nothing of it, or all of it.
        assert (n_runs, n_batches) in {(0, 0), (N_JOBS, 1)}, f"killed at {ready}"
        assert n_keys == n_runs
        killed_mid_write += isinstance(ready, Path) and n_runs == 0
        if n_runs:
            break  # finished before the kill (a fast machine): nothing left to test
    assert killed_mid_write or _store_state(db)[1] == N_JOBS

    rerun = run_cli(tmp_path, "--db", url, "ingest", "csv", str(source))
    assert rerun.returncode == 0, rerun.stderr
    again = run_cli(tmp_path, "--db", url, "ingest", "csv", str(source))
    assert again.returncode == 0 and "already ingested" in again.stdout
    check, n_runs, n_keys, n_batches = _store_state(db)
    assert check == "ok"
    assert n_runs == n_keys == N_JOBS
    assert n_batches == 1


def _end_other_connections(admin: Engine, _n_records: int) -> None:
    """What a server restart does to an ingest's connection, as a progress callback."""
    from sqlalchemy import text

    with admin.connect() as conn:
        conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                          "datname = current_database() AND pid <> pg_backend_pid()"))


@pytest.mark.postgres
def test_a_server_store_lost_mid_ingest_is_one_line_and_a_rerun_completes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The server ended the ingest's connection (a restart, a killed backend) after its
    first chunk: the ingest said "internal error (OperationalError: ... the connection is
    lost ...); report it", after psycopg's "error ignored terminating <psycopg.Pipeline
    [BAD]>". Its transaction was rolled back, so the fix is to run it again."""
    from sqlalchemy import create_engine, func, select
    from typer.testing import CliRunner

    from perfpredict.cli.app import app
    from perfpredict.errors import PerfPredictError
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store
    from perfpredict.store.schema import runs
    from tests.conftest import _postgres_url

    source = bulk_csv(tmp_path / "jobs.csv", 12_000)
    for url in _postgres_url():
        admin = create_engine(url, isolation_level="AUTOCOMMIT")
        end_the_ingests_connection = functools.partial(_end_other_connections, admin)
        with open_store(url) as store:
            with pytest.raises(PerfPredictError) as lost:
                ingest_file(store, "csv", source, progress=end_the_ingests_connection)
            assert str(lost.value).startswith("lost the connection to the "
                                              f"store at {url} (")
            assert str(lost.value).endswith("run it again once the server answers (what is "
                                            "already stored is not stored twice)")
            assert "\n" not in str(lost.value)
            with store.engine.connect() as conn:
                assert conn.execute(select(func.count()).select_from(runs)).scalar() == 0
        assert "error ignored" not in capsys.readouterr().err
        admin.dispose()
        rerun = CliRunner().invoke(app, ["--db", url, "ingest", "csv", str(source)])
        assert rerun.exit_code == 0, rerun.output
        assert "12000 stored" in rerun.output
