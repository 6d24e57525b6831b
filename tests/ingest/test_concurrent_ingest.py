"""Four ingests of overlapping accounting dumps at once into one store (issue 5): every
job is stored exactly once, and the dump ingested twice at the same moment is reported
as already ingested by one of the two, never as an IntegrityError."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import create_engine, text

from bench.generate_sacct import COLUMNS, job_lines

_INGEST_AT = """
import json, sys, time
from perfpredict.ingest.pipeline import ingest_file
from perfpredict.store import open_store

store = open_store(sys.argv[1])
while time.time() < float(sys.argv[3]):
    time.sleep(0.001)
print(json.dumps(ingest_file(store, "sacct", sys.argv[2]).as_dict()))
"""


def _dump(path: Path, first_job: int, n_jobs: int) -> Path:
    """Jobs ``first_job ..`` as sacct prints them; the same job id gets the same rows in
    every dump (seeded by it), as two overlapping exports of one cluster would."""
    lines = ["|".join(COLUMNS)]
    for job_id in range(first_job, first_job + n_jobs):
        lines += job_lines(job_id, random.Random(job_id))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_four_concurrent_overlapping_ingests_lose_and_duplicate_nothing(
        db_url: str, tmp_path: Path) -> None:
    from perfpredict.store import open_store

    open_store(db_url).dispose()  # created before the race: that race is another test's
    first = _dump(tmp_path / "first.txt", 1_000, 1_500)
    files = [first, _dump(tmp_path / "second.txt", 2_000, 1_500),
             _dump(tmp_path / "third.txt", 3_000, 1_500), first]
    env = {k: v for k, v in os.environ.items() if k != "PERFPREDICT_DB"}
    start_at = str(time.time() + 8)  # after every child has imported and opened the store
    procs = [subprocess.Popen([sys.executable, "-c", _INGEST_AT, db_url, str(f), start_at],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for f in files]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))

    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            n_runs, n_keys, n_jobs = conn.execute(text(
                "SELECT count(*), count(DISTINCT natural_key), count(DISTINCT job_id) "
                "FROM runs")).one()
            n_batches = conn.execute(text("SELECT count(*) FROM ingest_batches")).scalar()
    finally:
        engine.dispose()
    assert n_runs == n_keys == n_jobs == 3_500  # jobs 1000 .. 4499, each once
    assert n_batches == 3
    assert sorted(r["already_ingested"] for r in (reports[0], reports[3])) == [False, True]
    assert sum(r["n_stored"] for r in reports) == 3_500


def _waiting_on_a_lock(db_url: str) -> bool:
    """Whether some connection to the store waits for a lock another holds: on
    PostgreSQL, the server says; a SQLite connection waits in its busy handler, out of
    sight, so a moment is given it instead."""
    if not db_url.startswith("postgresql"):
        time.sleep(0.5)
        return True
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return bool(conn.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()")).scalar())
    finally:
        engine.dispose()


def test_a_system_two_ingests_introduce_at_once_is_new_to_one_of_them(
        db_url: str, tmp_path: Path) -> None:
    """The first ingest holds its transaction open after creating the system; the second
    reads the systems meanwhile and finds it missing too. On PostgreSQL both reported
    "new system racesys"; only the one whose insert stored it does now (on SQLite the
    second waits for the first's commit before it reads, and always saw it)."""
    import threading

    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store

    open_store(db_url).dispose()
    files = []
    for name in ("a", "b"):
        files.append(tmp_path / f"{name}.csv")
        files[-1].write_text(f"app,system,nodes,runtime_s\n{name},racesys,1,10\n")
    holding, release = threading.Event(), threading.Event()

    def hold(_n_records: int) -> None:  # inside the first ingest's transaction
        holding.set()
        assert release.wait(60)

    reports = {}

    def ingest(name: str, path: Path, progress=None) -> None:  # type: ignore[no-untyped-def]
        with open_store(db_url) as store:
            reports[name] = ingest_file(store, "csv", path, progress=progress)

    first = threading.Thread(target=ingest, args=("a", files[0], hold))
    first.start()
    assert holding.wait(60)
    second = threading.Thread(target=ingest, args=("b", files[1]))
    second.start()
    deadline = time.monotonic() + 60
    while not _waiting_on_a_lock(db_url):
        assert time.monotonic() < deadline, "the second ingest never waited for the first"
        time.sleep(0.05)
    release.set()
    for thread in (first, second):
        thread.join(60)
    assert (reports["a"].new_systems, reports["b"].new_systems) == (["racesys"], [])
    assert reports["a"].n_stored == reports["b"].n_stored == 1
