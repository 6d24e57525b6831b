"""The runs of an ingest batch: its ``n_stored`` counts them (migration 0007 recounts what
0006 left overstated), and an index finds them, so that an ingest into a large store
does not scan every run to count its file's."""

from __future__ import annotations

from sqlalchemy import create_engine, inspect, select, text

from perfpredict.store import open_store
from perfpredict.store.schema import ingest_batches


def _batch_indexes(engine) -> list[str]:  # type: ignore[no-untyped-def]
    return [index["name"] for index in inspect(engine).get_indexes("runs")
            if index["column_names"] == ["batch_id"]]


def test_a_file_s_runs_are_counted_by_an_index(store) -> None:  # type: ignore[no-untyped-def]
    """The count every ingest makes of its file's runs (``writer._count_runs``) scanned
    all of ``runs``: 26 ms for a file of three jobs in a store of 250,000 runs."""
    assert _batch_indexes(store.engine) == ["ix_runs_batch"]
    if store.engine.dialect.name == "sqlite":
        with store.engine.connect() as conn:
            plan = " ".join(str(row[-1]) for row in conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT count(*) FROM runs WHERE batch_id = 1"))
        assert "USING COVERING INDEX ix_runs_batch" in plan, plan


def test_the_upgrade_recounts_the_runs_of_batches_whose_jobs_0006_merged(db_url: str) -> None:
    """A store at 0005 holding array task 123_4 twice: under 123_4 from a dump without
    JobIDRaw (with job 5, two runs stored), and under its JobIDRaw 130 from another dump
    (one run). 0006 keeps the run with the JobIDRaw and deletes the other; the first
    dump's batch still said 2 stored, 0 duplicates, where the store holds one of its
    runs and the other record as the second dump's run."""
    from perfpredict.store import migrations

    engine = create_engine(db_url)
    try:
        migrations.upgrade(engine, "0005_one_key_per_job")
        with engine.begin() as conn:
            for sha, n_stored in (("1", 2), ("2", 1)):
                conn.execute(text(
                    "INSERT INTO ingest_batches (path, sha256, format, started_epoch_s, "
                    "n_records, n_stored, n_duplicates, n_rejected) VALUES "
                    "(:path, :sha, 'sacct', 1.0, :n, :n, 0, 0)"),
                    {"path": f"/logs/{sha}", "sha": sha * 64, "n": n_stored})
            task = '{"array_job_id": "123", "array_task_id": 4}'
            for key, job_id, sha, extra in (("c|:5", "5", "1", None),
                                            ("c|:123_4", "123_4", "1", task),
                                            ("c|:130", "130", "2", task)):
                conn.execute(text(
                    "INSERT INTO runs (natural_key, batch_id, app, system, runtime_s, job_id, "
                    "submit_epoch_s, start_epoch_s, censored, extra) VALUES (:key, (SELECT id "
                    "FROM ingest_batches WHERE sha256 = :sha), 'a', 'c', 60.0, :job, 3000.0, "
                    "3100.0, FALSE, :extra)"),
                    {"key": key, "job": job_id, "sha": sha * 64, "extra": extra})
    finally:
        engine.dispose()
    store = open_store(db_url, upgrade=True)
    try:
        with store.engine.connect() as conn:
            counts = conn.execute(select(
                ingest_batches.c.path, ingest_batches.c.n_records, ingest_batches.c.n_stored,
                ingest_batches.c.n_duplicates).order_by(ingest_batches.c.path)).all()
        assert [tuple(row) for row in counts] == [("/logs/1", 2, 1, 1), ("/logs/2", 1, 1, 0)]
        assert _batch_indexes(store.engine) == ["ix_runs_batch"]
    finally:
        store.dispose()
