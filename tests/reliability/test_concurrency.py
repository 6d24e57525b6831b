"""Ingest, train and estimate at the same time on one store (issue 6): nobody sees
"database is locked", every process exits 0, and no run is lost or stored twice."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.reliability._data import APPS, NODES, bulk_csv, cli_env, perfpredict_argv

N_BULK = 20_000


def _start(home: Path, url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(perfpredict_argv("--db", url, *args), env=cli_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str], timeout: float = 900) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _assert_clean(name: str, code: int, err: str) -> None:
    assert "locked" not in err.lower(), f"{name}: {err}"
    assert code == 0, f"{name} exited {code}: {err}"


@pytest.mark.slow
def test_ingest_train_estimate_at_once(trained_db: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{trained_db}"
    first = bulk_csv(tmp_path / "first.csv", N_BULK, prefix="a")
    second = bulk_csv(tmp_path / "second.csv", N_BULK, prefix="b")
    writers = {
        "ingest first": _start(tmp_path, url, "ingest", "csv", str(first)),
        "ingest second": _start(tmp_path, url, "ingest", "csv", str(second)),
        # The same file twice at once (two cron jobs): stored once, neither fails.
        "ingest first again": _start(tmp_path, url, "ingest", "csv", str(first)),
        "train": _start(tmp_path, url, "train", "--app", APPS[0], "--app", APPS[1]),
    }
    readers: list[tuple[str, int, str, str]] = []
    deadline = time.monotonic() + 900
    while any(p.poll() is None for p in writers.values()) and time.monotonic() < deadline:
        for args in (("estimate", "--app", APPS[0], "--nodes", "64", "--format", "json"),
                     ("runs", "stats")):
            code, out, err = _finish(_start(tmp_path, url, *args))
            readers.append((args[0], code, out, err))
    results = {name: _finish(proc) for name, proc in writers.items()}
    for name, (code, _out, err) in results.items():
        _assert_clean(name, code, err)
    assert readers, "no reader ran while the writers did"
    for name, code, _out, err in readers:
        _assert_clean(name, code, err)

    conn = sqlite3.connect(trained_db)
    try:
        n_runs, n_keys = conn.execute(
            "SELECT count(*), count(DISTINCT natural_key) FROM runs").fetchone()
        n_batches = conn.execute("SELECT count(*) FROM ingest_batches").fetchone()[0]
    finally:
        conn.close()
    n_training = len(APPS) * len(NODES) * 3
    assert n_runs == n_keys == n_training + 2 * N_BULK
    assert n_batches == 3  # training CSV + first + second; the repeat stored nothing


_OPEN_ON_GO = """
import sys, time
from pathlib import Path
from perfpredict.store import open_store
import perfpredict.store.migrations, alembic.command  # imported before the start line
ready, go = Path(sys.argv[2]), Path(sys.argv[3])
ready.touch()
while not go.exists():
    time.sleep(0.001)
open_store(sys.argv[1]).dispose()
"""


def test_parallel_first_use_of_a_new_store(tmp_path: Path) -> None:
    """Processes opening the same new store at the same instant: it is created once and
    none fails ("table ... already exists" before the migration lock)."""
    url = f"sqlite:///{tmp_path / 'new.db'}"
    go = tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(6)]
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_ON_GO, url, str(flag), str(go)],
                              env=cli_env(tmp_path), stderr=subprocess.PIPE, text=True)
             for flag in ready]
    # every child has imported what it needs before any opens the store
    deadline = time.monotonic() + 600
    while not all(flag.exists() for flag in ready):
        for i, proc in enumerate(procs):
            if proc.poll() is not None:
                _out, err = proc.communicate()
                pytest.fail(f"opener {i} exited {proc.returncode} before the start: {err}")
        assert time.monotonic() < deadline, "the openers never got ready"
        time.sleep(0.01)
    go.touch()
    for i, proc in enumerate(procs):
        _out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"opener {i}: {err}"
    conn = sqlite3.connect(tmp_path / "new.db")
    try:
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1
    finally:
        conn.close()


def _train_inside_an_ingest(url: str, first: Path, later: Path) -> tuple[int, int]:
    """Ingest ``first``, then ``later`` with a train run after its runs are stored and
    before they commit; the runs stored of ``later`` and the runs train read."""
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store
    from perfpredict.train import train

    store = open_store(url)
    try:
        ingest_file(store, "csv", first)
        trained: list[int] = []
        report = ingest_file(store, "csv", later, progress=lambda _n: trained.append(
            train(store, borrow_bundled=False).n_runs))
        (n_read,) = trained
        return report.n_stored, n_read
    finally:
        store.dispose()


@pytest.mark.postgres
def test_runs_stored_by_an_ingest_that_train_could_not_see_are_named_unseen(
        timed_runs_csv: Path, tmp_path: Path) -> None:
    """An ingest under way when 'train' read a server's store commits after it: train
    learned nothing of its runs, yet its batch was stamped when the ingest began, before
    train noted when it read, and estimates never named those runs as unseen (14,640
    runs of RELeARN, ingested beside a train, left out without a word). Here train runs
    inside the ingest's transaction, after its runs are stored and before they commit."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app
    from tests.conftest import _postgres_url

    later = tmp_path / "later.csv"
    later.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,"
                     "runtime_s\nsolver0,Perlmutter-CPU,large,32,128,1,150\n")
    for url in _postgres_url():
        n_stored, n_read = _train_inside_an_ingest(url, timed_runs_csv, later)
        estimate = CliRunner().invoke(app, ["--db", url, "estimate", "--app", "solver0",
                                            "--nodes", "32", "--format", "json"])
    assert (n_stored, n_read) == (1, 60)  # train read the first file's runs alone
    assert estimate.exit_code == 0, estimate.output
    assert [note for note in json.loads(estimate.stdout)["notes"]
            if note.startswith("the store holds 1 run of solver0 ingested since this "
                               "predictor was trained")]
