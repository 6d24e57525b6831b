"""One stored run per scheduler job, whichever logs name it and in whatever order they
arrive: a sacct dump with and without ``Cluster``, the job's Darshan log before or after
its accounting, an export of an older store; and the upgrade (0005) that merges the
runs older perfpredicts stored twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, select, text

from perfpredict.ingest import BatchReport, IngestOptions, ingest_file
from perfpredict.store import open_store
from perfpredict.store.queries import iter_runs
from perfpredict.store.schema import runs
from tests.conftest import shared_path

#: A real Darshan log of job 4373053, which ran 2021-06-02 22:43:18-22:43:31 UTC.
MPI_IO_TEST = "mpi_io_test_with_dxt__treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"
JOB_ID = "4373053"
THETA = IngestOptions(system="theta")


def darshan_log() -> Path:
    pytest.importorskip("darshan", reason="the darshan extra is not installed")
    return shared_path("logs", "darshan", MPI_IO_TEST)


def sacct_dump(tmp_path: Path, cluster: str | None, start: str = "2021-06-02T22:43:10",
               end: str = "2021-06-02T22:43:40", name: str = "jobs") -> Path:
    """The job's accounting as ``sacct -P`` prints it, with or without ``Cluster``."""
    cluster_column, cluster_value = ("|Cluster", f"|{cluster}") if cluster is not None else ("", "")
    path = tmp_path / f"{name}-{cluster}.psv"
    path.write_text(f"JobIDRaw{cluster_column}|JobName|State|Start|End|NNodes|TimelimitRaw\n"
                    f"{JOB_ID}{cluster_value}|mpi-io-test|COMPLETED|{start}|{end}|4|10\n")
    return path


@pytest.mark.parametrize("cluster", [None, "", "theta", "THETA"])
def test_a_darshan_log_stored_first_becomes_its_jobs_io(store, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                         cluster: str | None) -> None:
    """Before, the accounting was dropped as a duplicate of the log (no Cluster) or
    stored as a second run of the job beside it (Cluster named)."""
    log = darshan_log()
    assert ingest_file(store, "darshan", log, THETA).n_stored == 1
    report = ingest_file(store, "sacct", sacct_dump(tmp_path, cluster), THETA)
    assert (report.n_stored, report.n_joined_io, report.n_duplicates) == (1, 1, 0)
    (run,) = iter_runs(store)
    assert (run["job_id"], run["nodes"], run["runtime_s"], run["requested_walltime_s"]) == (
        JOB_ID, 4, 30.0, 600.0)
    assert run["io_bytes"] == 4_294_971_481.0
    assert run["extra"]["darshan"]["log"] == MPI_IO_TEST
    # ... and nothing is stored again by either file.
    assert ingest_file(store, "darshan", log, THETA).already_ingested
    assert len(list(iter_runs(store))) == 1


def test_ingest_says_which_jobs_took_a_logs_io(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("ingest", "darshan", str(darshan_log()), "--system", "theta").exit_code == 0
    dump = sacct_dump(tmp_path, "theta")
    result = cli("ingest", "sacct", str(dump))
    assert result.exit_code == 0, result.output
    assert (f"{dump}: 1 record, 1 stored (1 with the I/O of Darshan logs stored before "
            "them), 0 already in the store") in result.stdout


def test_a_log_of_a_reused_job_id_stays_its_own_run(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A job that ran a day after the log under the same id is another job."""
    ingest_file(store, "darshan", darshan_log(), THETA)
    later = sacct_dump(tmp_path, "theta", start="2021-06-03T22:43:10", end="2021-06-03T22:50:00")
    report = ingest_file(store, "sacct", later, THETA)
    assert (report.n_stored, report.n_joined_io) == (1, 0)
    by_nodes = {run["nodes"]: run for run in iter_runs(store)}
    assert set(by_nodes) == {None, 4}
    assert by_nodes[4]["io_bytes"] is None and by_nodes[None]["io_bytes"] == 4_294_971_481.0


def test_a_pbs_job_takes_its_logs_io_too(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ingest_file(store, "darshan", darshan_log(), THETA)
    pbs = tmp_path / "20210602"
    pbs.write_text(f"06/02/2021 22:43:40;E;{JOB_ID}.pbs01;user=u queue=q "
                   "jobname=mpi-io-test start=1622673790 end=1622673820 "
                   "Resource_List.nodect=4 Resource_List.walltime=00:10:00 "
                   "resources_used.walltime=00:00:30 Exit_status=0\n")
    report = ingest_file(store, "pbs", pbs, THETA)
    assert (report.n_stored, report.n_joined_io) == (1, 1)
    (run,) = iter_runs(store)
    assert (run["nodes"], run["runtime_s"], run["io_bytes"]) == (4, 30.0, 4_294_971_481.0)


def test_a_dump_with_and_without_cluster_stores_a_job_once(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert ingest_file(store, "sacct", sacct_dump(tmp_path, None), THETA).n_stored == 1
    report = ingest_file(store, "sacct", sacct_dump(tmp_path, "theta"), IngestOptions())
    assert (report.n_stored, report.n_duplicates) == (0, 1)
    assert len(list(iter_runs(store))) == 1


def test_an_export_of_a_store_keyed_by_cluster_ingests_back_once(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``runs export`` of a store before one key per job wrote ``run_key`` as
    ``cluster:id``; read where the job is stored now (``:id``), it is the same job."""
    ingest_file(store, "sacct", sacct_dump(tmp_path, "theta"), IngestOptions())
    export = tmp_path / "export.csv"
    export.write_text("app,system,nodes,runtime_s,job_id,run_key\n"
                      f"mpi-io-test,theta,4,30,{JOB_ID},theta:{JOB_ID}\n"
                      f"mpi-io-test,theta,4,31,999,theta:999\n")
    report = ingest_file(store, "csv", export, IngestOptions())
    assert (report.n_stored, report.n_duplicates) == (1, 1)


def requeued_job(tmp_path: Path, *incarnations: str) -> Path:
    """A ``sacct -D`` dump of the job's incarnations, each ``STATE START END``."""
    path = tmp_path / ("-".join(i.split()[0] for i in incarnations) + ".psv")
    path.write_text("JobIDRaw|JobName|State|Start|End|NNodes\n" + "".join(
        f"{JOB_ID}|mpiio|{state}|{start}|{end}|2\n"
        for state, start, end in map(str.split, incarnations)))
    return path


NODE_FAIL = "NODE_FAIL 2021-06-02T22:43:10 2021-06-02T22:43:30"  # the log ran inside it
COMPLETED = "COMPLETED 2021-06-02T23:30:00 2021-06-02T23:40:00"


def _runs(store) -> list[tuple[str | None, int | None, float | None]]:  # type: ignore[no-untyped-def]
    return sorted(((run["state"], run["nodes"], run["io_bytes"]) for run in iter_runs(store)),
                  key=str)


def test_a_log_of_an_incarnation_the_store_does_not_keep_stays_its_own_run(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """The log ran inside the first incarnation of a requeued job; the store keeps the
    later one, which did not run it. Before, the earlier incarnation's ingest deleted the
    log's run though its job was not stored."""
    log = darshan_log()
    ingest_file(store, "sacct", requeued_job(tmp_path, COMPLETED), THETA)
    ingest_file(store, "darshan", log, THETA)
    report = ingest_file(store, "sacct", requeued_job(tmp_path, NODE_FAIL), THETA)
    assert (report.n_stored, report.n_joined_io, report.n_duplicates) == (0, 0, 1)
    kept = [("COMPLETED", 2, None), (None, None, 4_294_971_481.0)]
    assert _runs(store) == kept


@pytest.mark.parametrize("log_first", [True, False])
def test_a_requeued_job_in_one_dump_gives_one_store_in_either_order(  # type: ignore[no-untyped-def]
        db_url: str, tmp_path: Path, log_first: bool) -> None:
    store = open_store(db_url)
    try:
        dump = requeued_job(tmp_path, NODE_FAIL, COMPLETED)
        files = [("darshan", darshan_log()), ("sacct", dump)]
        for fmt, path in files if log_first else files[::-1]:
            ingest_file(store, fmt, path, THETA)
        assert _runs(store) == [("COMPLETED", 2, None), (None, None, 4_294_971_481.0)]
    finally:
        store.dispose()


def test_a_later_incarnation_from_a_later_file_does_not_keep_the_earlier_ones_io(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """The log ran inside the first incarnation; the second, read later, replaced it and
    kept the log's bytes without its details, on a run the log did not run inside.
    Read again, the log is a run of its own, as when it comes after both."""
    ingest_file(store, "sacct", requeued_job(tmp_path, NODE_FAIL), THETA)
    assert ingest_file(store, "darshan", darshan_log(), THETA).n_attached == 1
    ingest_file(store, "sacct", requeued_job(tmp_path, COMPLETED), THETA)
    assert _runs(store) == [("COMPLETED", 2, None)]
    again = ingest_file(store, "darshan", darshan_log(), IngestOptions(system="theta",
                                                                       reread=True))
    assert (again.n_stored, again.n_attached) == (1, 0)
    assert _runs(store) == [("COMPLETED", 2, None), (None, None, 4_294_971_481.0)]


def test_an_export_read_back_stores_nothing_and_its_logs_still_join_their_jobs(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """Ingested where it came from, an export with a log's run is all in the store
    already (before, the row took the log's run over); in a fresh store the log's row is
    a log's run still, which its job takes over."""
    from perfpredict.report.csv_rows import write_csv
    from perfpredict.store.queries import export_runs

    ingest_file(store, "darshan", darshan_log(), THETA)
    export = tmp_path / "export.csv"
    with export.open("w") as out:
        rows = export_runs(store)
        write_csv(out, rows.columns, rows.rows)
    again = ingest_file(store, "csv", export, IngestOptions())
    assert (again.n_stored, again.n_joined_io, again.n_duplicates) == (0, 0, 1)
    fresh = open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    try:
        assert ingest_file(fresh, "csv", export, IngestOptions()).n_stored == 1
        report = ingest_file(fresh, "sacct", requeued_job(tmp_path, NODE_FAIL), THETA)
        assert (report.n_stored, report.n_joined_io) == (1, 1)
        (run,) = iter_runs(fresh)
        assert (run["state"], run["nodes"], run["io_bytes"]) == ("NODE_FAIL", 2, 4_294_971_481.0)
        assert run["extra"]["darshan"]["log"] == MPI_IO_TEST  # JSON in the export, read back
    finally:
        fresh.dispose()


def _store_log(store, name: str, start_s: float, io_bytes: float,  # type: ignore[no-untyped-def]
               options: IngestOptions = THETA, ranks: int = 64) -> BatchReport:
    """A Darshan log of job 777 as the Darshan reader makes its record (one executable
    of a two-step job), stored through the writer."""
    from perfpredict.ingest.records import RunRecord, darshan_log_key
    from perfpredict.store.writer import write_file

    record = RunRecord(app="step", total_ranks=ranks, io_bytes=io_bytes, runtime_s=600.0,
                       job_id="777", start_epoch_s=start_s, end_epoch_s=start_s + 600,
                       extra={"darshan": {"log": name, "nprocs": ranks,
                                          "start_epoch_s": start_s,
                                          "end_epoch_s": start_s + 600}}, mode="attach",
                       key=darshan_log_key("777", start_s, name))
    return write_file(store, Path(name), "darshan", name.ljust(64, "0"), options, [[record]])


def _job_777(tmp_path: Path) -> Path:
    """Job 777's accounting, 2021-01-01 01:00-02:00 UTC, of two nodes and no ranks."""
    job = tmp_path / "job.psv"
    job.write_text("JobIDRaw|JobName|State|Start|End|NNodes\n"
                   "777|twostep|COMPLETED|2021-01-01T01:00:00|2021-01-01T02:00:00|2\n")
    return job


@pytest.mark.parametrize("log_first", [True, False])
def test_a_job_of_two_logs_holds_both_in_either_order(  # type: ignore[no-untyped-def]
        db_url: str, tmp_path: Path, log_first: bool) -> None:
    """Before, with the logs first the job took one and the other stayed a run beside it;
    with the job first the second log's bytes replaced the first's. The job, whose
    accounting gives no ranks, takes the most its logs ran at once: the first's, as the
    second ran after it (it dropped them, in either order)."""
    job = _job_777(tmp_path)
    store = open_store(db_url)
    try:
        if not log_first:
            ingest_file(store, "sacct", job, THETA)
        _store_log(store, "a.darshan", 1609462900.0, 1e9)
        _store_log(store, "b.darshan", 1609464800.0, 2e9, ranks=8)
        if log_first:
            assert ingest_file(store, "sacct", job, THETA).n_joined_io == 2
        (run,) = iter_runs(store)
        assert (run["nodes"], run["total_ranks"], run["io_bytes"]) == (2, 64, 3e9)
        assert [log["log"] for log in run["extra"]["darshan"]] == ["a.darshan", "b.darshan"]
    finally:
        store.dispose()


def test_a_log_read_again_gives_its_job_the_ranks_it_lacks(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A store upgraded by migration 0005 before it kept a merged log's ranks holds the
    job with the log's I/O and no ranks: reading the log again gives them, and nothing
    else changes; it is counted as filled, among those already in the store."""
    from sqlalchemy import update

    ingest_file(store, "sacct", _job_777(tmp_path), THETA)
    _store_log(store, "a.darshan", 1609462900.0, 1e9)
    with store.engine.begin() as conn:
        conn.execute(update(runs).values(total_ranks=None))
    again = _store_log(store, "a.darshan", 1609462900.0, 1e9,
                       IngestOptions(system="theta", reread=True))
    # the log the job held, given what it lacked: not a log attached anew
    assert (again.n_stored, again.n_attached, again.n_duplicates, again.n_filled) == (0, 0, 1, 1)
    (run,) = iter_runs(store)
    assert (run["total_ranks"], run["io_bytes"]) == (64, 1e9)
    assert _store_log(store, "a.darshan", 1609462900.0, 1e9, IngestOptions(
        system="theta", reread=True)).n_duplicates == 1  # held, ranks and all


def test_an_export_of_a_release_before_one_key_per_job_keeps_the_jobs_accounting(
        store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Such an export keyed a Darshan log stored alone by its job's id, and wrote its
    details as a Python literal: read as it was, the log's row replaced (here) or blocked
    (in a fresh store) the accounting of its job, keyed by that id now."""
    export = tmp_path / "old-export.csv"
    export.write_text(
        "app,system,nodes,total_ranks,runtime_s,job_id,state,start_time,end_time,run_key,darshan\n"
        "milc,kth,2,,1000,526820,COMPLETED,1970-01-01T00:16:40Z,1970-01-01T00:33:20Z,kth:526820,\n"
        "su3_rhmd,kth,,64,980,526820,,1970-01-01T00:16:50Z,1970-01-01T00:33:10Z,:526820,"
        "\"{'log': 'milc.darshan', 'nprocs': 64}\"\n")
    report = ingest_file(store, "csv", export, IngestOptions())
    assert (report.n_stored, report.n_attached) == (1, 1)  # the log row, as a log
    (run,) = iter_runs(store)
    assert (run["app"], run["nodes"], run["state"]) == ("milc", 2, "COMPLETED")
    assert run["extra"]["darshan"] == {"log": "milc.darshan", "nprocs": 64}


# --- the upgrade ----------------------------------------------------------------------------

def _store_at_0004(url: str) -> None:
    """A store as perfpredict at 0004 left it after a center's ingests: job 11 from a
    dump without Cluster and one with it (stored twice, only the second giving its
    ranks), job 12 as a Darshan log alone and from its accounting with Cluster (twice,
    the accounting without ranks, as PBS's and LSF's is), job 13 once with Cluster and
    I/O attached, job 14 from Grid Engine (``id@submit``, with ranks of its own) beside
    its Darshan log, job 15's log alone, job 16's log beside a later job of its id, and
    a benchmark row."""
    from perfpredict.store import migrations

    engine = create_engine(url)
    try:
        migrations.upgrade(engine, "0004_run_variant")
        with engine.begin() as conn:
            for batch_id, fmt in enumerate(["sacct", "sacct", "darshan", "sge", "csv"], 1):
                conn.execute(text(
                    "INSERT INTO ingest_batches (id, path, sha256, format, started_epoch_s, "
                    "n_records, n_stored, n_duplicates, n_rejected) VALUES "
                    "(:id, :path, :sha, :fmt, 1.0, 1, 1, 0, 0)"),
                    {"id": batch_id, "path": f"/logs/{batch_id}", "sha": f"{batch_id:064d}",
                     "fmt": fmt})
            darshan = '{"darshan": {"log": "x.darshan"}}'
            rows = [  # key, batch, job, nodes, ranks, start, end, io_bytes, extra
                ("kth|:11", 1, "11", 2, None, 1000.0, 2000.0, None, '{"timezone": "UTC"}'),
                ("kth|kth:11", 2, "11", 2, 32, 1000.0, 2000.0, None, '{"timezone": "UTC"}'),
                ("kth|:12", 3, "12", None, 64, 3010.0, 3500.0, 5e9, darshan),
                ("kth|kth:12", 2, "12", 8, None, 3000.0, 3600.0, 7.0, '{"timezone": "UTC"}'),
                ("kth|kth:13", 2, "13", 1, None, 4000.0, 4100.0, 3e9, darshan),
                ("kth|:14@900", 4, "14", 1, 8, 5000.0, 5100.0, None, None),
                ("kth|:14", 3, "14", None, 16, 5001.0, 5099.0, 2e9, darshan),
                ("kth|:15", 3, "15", None, 4, 6001.0, 6099.0, 1e9, darshan),
                ("kth|:16", 3, "16", None, 4, 7001.0, 7099.0, 4e9, darshan),
                ("kth|kth:16", 2, "16", 2, None, 90000.0, 90100.0, None, None),
                ("kth|sha1:ab@cd#1", 5, None, 4, None, None, None, None, None),
            ]
            for key, batch_id, job_id, nodes, ranks, start, end, io_bytes, extra in rows:
                conn.execute(text(
                    "INSERT INTO runs (natural_key, batch_id, app, system, nodes, total_ranks, "
                    "runtime_s, job_id, start_epoch_s, end_epoch_s, io_bytes, censored, "
                    "extra) VALUES (:key, :batch, 'a', 'kth', :nodes, :ranks, 1.0, :job, "
                    ":start, :end, :io, FALSE, :extra)"),
                    {"key": key, "batch": batch_id, "nodes": nodes, "ranks": ranks,
                     "job": job_id, "start": start, "end": end, "io": io_bytes,
                     "extra": extra})
    finally:
        engine.dispose()


def test_the_upgrade_merges_the_runs_stored_twice(db_url: str) -> None:
    _store_at_0004(db_url)
    store = open_store(db_url, upgrade=True)
    assert store.upgraded_from == "0004_run_variant"
    with store.engine.connect() as conn:
        stored = {row.natural_key: (row.job_id, row.nodes, row.io_bytes, row.extra)
                  for row in conn.execute(select(runs))}
        ranks = dict(conn.execute(select(runs.c.natural_key, runs.c.total_ranks)).all())
    store.dispose()
    assert sorted(stored) == ["kth|:11", "kth|:12", "kth|:13", "kth|:14@900",
                              "kth|:15#darshan@6001", "kth|:16", "kth|:16#darshan@7001",
                              "kth|sha1:ab@cd#1"]
    # a job without ranks takes those of what merged into it (the log's were dropped)
    assert [ranks[key] for key in ("kth|:11", "kth|:12", "kth|:13", "kth|:14@900")] == [
        32, 64, None, 8]
    assert stored["kth|:12"][1:3] == (8, 5e9)  # the accounting, with the log's I/O
    assert set(stored["kth|:12"][3]) == {"darshan", "timezone"}
    assert stored["kth|:13"][1:3] == (1, 3e9)  # rekeyed, its attached I/O kept
    assert stored["kth|:14@900"][1:3] == (1, 2e9)  # Grid Engine's job took its log
    assert stored["kth|:15#darshan@6001"][1:3] == (None, 1e9)  # a log with no job stays a run
    assert stored["kth|:16"][1:3] == (2, None)  # a later job of the log's id is another
    assert stored["kth|:16#darshan@7001"][1:3] == (None, 4e9)


def test_a_job_an_earlier_release_dropped_is_stored_by_reading_its_dump_again(
        tmp_path: Path) -> None:
    """At 0004 a dump without Cluster read after the job's Darshan log lost the job to
    the log's key: its batch is stored, its one record counted a duplicate. Upgraded,
    ``ingest --reread`` reads the dump again and stores the job, with the log's I/O."""
    import hashlib

    from typer.testing import CliRunner

    from perfpredict.cli.app import app
    from perfpredict.store import migrations

    dump = sacct_dump(tmp_path, None)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = create_engine(url)
    migrations.upgrade(engine, "0004_run_variant")
    with engine.begin() as conn:
        for batch_id, fmt, sha, n_stored in ((1, "darshan", "d" * 64, 1),
                                             (2, "sacct", hashlib.sha256(dump.read_bytes())
                                              .hexdigest(), 0)):
            conn.execute(text(
                "INSERT INTO ingest_batches (id, path, sha256, format, started_epoch_s, "
                "n_records, n_stored, n_duplicates, n_rejected) VALUES "
                "(:id, 'f', :sha, :fmt, 1.0, 1, :n, :dup, 0)"),
                {"id": batch_id, "sha": sha, "fmt": fmt, "n": n_stored, "dup": 1 - n_stored})
        conn.execute(text(
            "INSERT INTO runs (natural_key, batch_id, app, system, total_ranks, runtime_s, "
            "job_id, start_epoch_s, io_bytes, censored, extra) VALUES (:key, 1, "
            "'mpi-io-test', 'theta', 32, 14.0, :job, 1622673798.0, 4294971481.0, FALSE, "
            "'{\"darshan\": {}}')"), {"key": f"theta|:{JOB_ID}", "job": JOB_ID})
    engine.dispose()
    runner = CliRunner()
    assert runner.invoke(app, ["--db", url, "db", "upgrade"]).exit_code == 0
    skipped = runner.invoke(app, ["--db", url, "ingest", "sacct", str(dump), "--system", "theta"])
    assert "already ingested" in skipped.stdout
    result = runner.invoke(app, ["--db", url, "ingest", "sacct", str(dump), "--system",
                                 "theta", "--reread"])
    assert result.exit_code == 0, result.output
    assert "1 record, 1 stored (1 with the I/O of Darshan logs" in result.stdout
    store = open_store(url)
    (run,) = iter_runs(store)
    store.dispose()
    assert (run["nodes"], run["runtime_s"], run["io_bytes"]) == (4, 30.0, 4_294_971_481.0)
    again = runner.invoke(app, ["--db", url, "ingest", "sacct", str(dump), "--system",
                                "theta", "--reread"])
    assert "1 record, 0 stored, 1 already in the store" in again.stdout


def test_a_log_an_earlier_release_stored_without_its_times_gets_them_by_reading_it_again(
        tmp_path: Path) -> None:
    """A release before one key per job kept no start and end times in a log's details
    (``extra``'s ``darshan``), which tell a job's logs that ran one after another from
    those that ran side by side: ``db upgrade`` cannot make them up (a job that took the
    log over holds the job's times, not the log's), and ``ingest darshan --reread``, which
    reads a file again for what the store lacks, left them out (the log was held). Read
    again, its summary counted the log it gave them to as attached to a stored job."""
    import hashlib

    from typer.testing import CliRunner

    from perfpredict.cli.app import app
    from perfpredict.store import migrations

    log = darshan_log()
    url = f"sqlite:///{tmp_path / 'store.db'}"
    engine = create_engine(url)
    migrations.upgrade(engine, "0004_run_variant")
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO ingest_batches (id, path, sha256, format, started_epoch_s, n_records, "
            "n_stored, n_duplicates, n_rejected) VALUES (1, :path, :sha, 'darshan', 1.0, 1, 1, "
            "0, 0)"), {"path": str(log), "sha": hashlib.sha256(log.read_bytes()).hexdigest()})
        conn.execute(text(
            "INSERT INTO runs (natural_key, batch_id, app, system, total_ranks, runtime_s, "
            "job_id, start_epoch_s, end_epoch_s, io_bytes, censored, extra) VALUES (:key, 1, "
            "'mpi-io-test', 'theta', 32, 14.0, :job, 1622673798.0, 1622673811.0, "
            "4294971481.0, FALSE, :extra)"),
            {"key": f"theta|:{JOB_ID}", "job": JOB_ID,
             "extra": f'{{"darshan": {{"log": "{MPI_IO_TEST}", "nprocs": 32}}}}'})
    engine.dispose()
    runner = CliRunner()
    assert runner.invoke(app, ["--db", url, "db", "upgrade"]).exit_code == 0
    reread = ["--db", url, "ingest", "darshan", str(log), "--system", "theta", "--reread"]
    first = runner.invoke(app, reread)
    assert first.exit_code == 0
    # the log the run held, given what it lacked: no job it was attached to anew
    assert ("1 record, 0 stored, 1 already in the store (1 of them given fields they "
            "lacked), 0 attached to stored jobs, 0 rejected.") in first.stdout
    store = open_store(url)
    (run,) = iter_runs(store)
    store.dispose()
    details = run["extra"]["darshan"]
    assert (details["start_epoch_s"], details["end_epoch_s"]) == (1622673798.0, 1622673811.0)
    assert (details["log"], details["nprocs"]) == (MPI_IO_TEST, 32)
    assert (run["total_ranks"], run["io_bytes"]) == (32, 4_294_971_481.0)  # no I/O twice
    again = runner.invoke(app, reread)
    assert "1 record, 0 stored, 1 already in the store, 0 attached" in again.stdout


def test_two_spellings_of_a_system_in_a_file_read_again_store_nothing(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A file naming systems the catalog does not know in two spellings of one key (as
    MLPerf's results do: "...-NVBRIDGE (Dell)", "...-NVBridge (Dell)") made two systems,
    and every later ingest folded both into one: the file read again, or an export read
    into the store it came from, stored those runs a second time."""
    path = tmp_path / "two.csv"
    path.write_text("app,system,nodes,runtime_s\nA,Foo-X,1,10\nA,Foo-X,2,6\nA,foo_x,4,4\n"
                    "A,foo_x,8,3\n")
    assert ingest_file(store, "csv", path, IngestOptions()).n_stored == 4
    again = ingest_file(store, "csv", path, IngestOptions(reread=True))
    assert (again.n_stored, again.n_duplicates) == (0, 4)
    assert sorted({run["system"] for run in iter_runs(store)}) == ["Foo-X", "foo_x"]
