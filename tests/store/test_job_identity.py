"""A scheduler job's identity in the store: its system, its id as sacct's JobID shows it
and its submit time. A later job of a reused id is kept beside the earlier one, while the
same job read again (the same file, another export of it with or without a column,
another format) is stored once; and the upgrade (0006) that rekeys an older store."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import create_engine, select, text

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.sacct import XDMOD_COLUMNS
from perfpredict.store import open_store
from perfpredict.store.queries import iter_runs
from perfpredict.store.schema import runs
from tests.conftest import shared_path

UB = IngestOptions(system="ub-hpc")


def xdmod_lines(name: str) -> list[str]:
    return shared_path("logs", "slurm", name).read_text().splitlines(keepends=True)


def write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def stored(store) -> list[tuple[str, str, float]]:  # type: ignore[no-untyped-def]
    return sorted((run["job_id"], run["app"], run["submit_epoch_s"]) for run in iter_runs(store))


def test_a_reused_job_id_keeps_both_jobs_and_reading_again_stores_nothing(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """Job 4107219 of XDMoD's real dump, and a job that got its id again three years later
    (a slurmdbd reset): the later one replaced the earlier in the store, '1 stored'."""
    dump = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    (line,) = [text for text in xdmod_lines(dump.name) if text.startswith("4107219|")]
    reused = write(tmp_path, "2018.psv", line.replace("2015-0", "2018-0")
                   .replace("anonjobname", "lammps"))
    assert ingest_file(store, "sacct", dump).n_stored == 4
    report = ingest_file(store, "sacct", reused)
    assert (report.n_stored, report.n_duplicates) == (1, 0)
    jobs = [run for run in stored(store) if run[0] == "4107219"]
    assert [app for _, app, _ in jobs] == ["anonjobname", "lammps"]
    # the same files again, and copies of them (another sha256, so read anew): nothing twice
    for path in (dump, reused):
        assert ingest_file(store, "sacct", path).already_ingested
        copy = write(tmp_path, f"copy-{path.name}", path.read_text(), "\n")
        assert ingest_file(store, "sacct", copy).n_stored == 0
    assert len(stored(store)) == 5


def test_the_cli_keeps_a_reused_job_id_as_a_run_of_its_own(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    header = "JobID|JobIDRaw|JobName|State|Submit|Start|End|ElapsedRaw|NNodes|Cluster\n"
    first = write(tmp_path, "2022.psv", header, "700|700|wrf|COMPLETED|2022-01-03T09:00:00|"
                  "2022-01-03T09:10:00|2022-01-03T10:10:00|3600|4|c1\n")
    later = write(tmp_path, "2024.psv", header, "700|700|lammps|COMPLETED|2024-05-01T12:00:00|"
                  "2024-05-01T12:05:00|2024-05-01T12:35:00|1800|8|c1\n")
    for path in (first, later, first, later):
        assert cli("ingest", "sacct", str(path)).exit_code == 0
    result = cli("runs", "export", "--format", "csv")
    assert sorted(line.split(",")[1] for line in result.stdout.splitlines()[1:]) == [
        "lammps", "wrf"]


def test_a_job_read_with_and_without_its_submit_time_is_one_run(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """slurm2sql's real dump, and the same jobs exported without the Submit column, in
    either order: keyed with and without the submit time, matched by their start."""
    full = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    rows = [line.rstrip("\n").split("|") for line in full.read_text().splitlines()]
    at = rows[0].index("Submit")
    without = write(tmp_path, "no-submit.psv", *(
        "|".join(row[:at] + row[at + 1:]) + "\n" for row in rows))
    for first, second in ((full, without), (without, full)):
        with store.engine.begin() as conn:
            conn.execute(runs.delete())
            conn.exec_driver_sql("DELETE FROM batch_overlaps")
            conn.exec_driver_sql("DELETE FROM ingest_batches")
        assert ingest_file(store, "sacct", first, UB).n_stored == 2
        report = ingest_file(store, "sacct", second, UB)
        assert (report.n_stored, report.n_duplicates) == (0, 2), (first.name, second.name)


def test_an_array_task_is_one_run_with_and_without_jobidraw(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """XDMoD's real array task 4103947_100 (JobIDRaw 4103947), its export without
    JobIDRaw (keyed by JobIDRaw, it was stored twice), and its jobcomp line without
    ArrayJobId (found by the JobIDRaw the second export gave the run, and its submit
    time): one run."""
    name = "xdmod-sacct-accounting-logs-with-job-arrays.psv"
    raw = shared_path("logs", "slurm", name)
    task = xdmod_lines(name)[0].rstrip("\n").split("|")
    assert task[:2] == ["4103947_100", "4103947"]
    without_raw = write(tmp_path, "no-jobidraw.psv", "|".join(task[:1] + task[2:]) + "\n")
    columns = [c for c in XDMOD_COLUMNS if c != "jobidraw"]
    report = ingest_file(store, "sacct", without_raw, IngestOptions(columns=columns))
    assert report.n_stored == 1
    report = ingest_file(store, "sacct", raw)
    assert (report.n_stored, report.n_duplicates) == (0, 1)
    jobcomp = write(tmp_path, "jobcomp.log",
                    "JobId=4103947 UserId=anon(1) GroupId=anon(1) Name=1AbC-2-3 "
                    "JobState=TIMEOUT Partition=general-compute TimeLimit=4320 "
                    "StartTime=2015-06-28T02:55:50 EndTime=2015-07-01T02:55:50 NodeCnt=32 "
                    "ProcCnt=256 Cluster=ub-hpc SubmitTime=2015-06-26T13:57:00 ExitCode=1:0\n")
    report = ingest_file(store, "jobcomp", jobcomp)
    assert (report.n_stored, report.n_duplicates) == (0, 1)
    (run,) = iter_runs(store)
    assert (run["job_id"], run["nodes"], run["state"]) == ("4103947", 32, "TIMEOUT")
    assert (run["extra"]["array_job_id"], run["extra"]["array_task_id"]) == ("4103947", 100)


def test_a_job_in_sacct_and_in_jobcomp_with_submit_times_is_one_run(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """The real jobcomp line of job 2293679 on alex, and the same job as sacct prints it."""
    jobcomp = shared_path("logs", "slurm", "jobcomp-filetxt-quoted-lines.log")
    sacct = write(tmp_path, "alex.psv", "JobID|JobIDRaw|Cluster|JobName|State|Submit|Start|End|"
                  "NNodes\n2293679|2293679|alex|run.sh|FAILED|2025-01-11T22:45:14|"
                  "2025-01-11T22:45:16|2025-01-11T22:45:18|1\n")
    assert ingest_file(store, "sacct", sacct).n_stored == 1
    report = ingest_file(store, "jobcomp", jobcomp, IngestOptions(system="x"))
    assert (report.n_stored, report.n_duplicates) == (3, 1)
    assert len([run for run in iter_runs(store) if run["job_id"] == "2293679"]) == 1


def test_requeued_incarnations_with_their_submit_times_are_runs_of_their_own(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """Slurm gives a requeued job a new submit time: ``sacct -D`` lists each incarnation
    as a record of its own, and a dump taken again the next day stores nothing twice."""
    header = "JobID|JobIDRaw|JobName|State|Submit|Start|End|NNodes|Cluster\n"
    node_fail = "7|7|wrf|NODE_FAIL|2024-03-02T09:00:00|2024-03-02T10:00:00|2024-03-02T10:05:00|4|c\n"
    completed = "7|7|wrf|COMPLETED|2024-03-02T10:06:00|2024-03-02T10:07:00|2024-03-02T11:37:00|4|c\n"
    assert ingest_file(store, "sacct", write(tmp_path, "d1.psv", header, node_fail)).n_stored == 1
    report = ingest_file(store, "sacct", write(tmp_path, "d2.psv", header, node_fail, completed))
    assert (report.n_stored, report.n_duplicates) == (1, 1)
    assert sorted(run["state"] for run in iter_runs(store)) == ["COMPLETED", "NODE_FAIL"]


def test_two_traces_of_one_machine_keep_their_jobs(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A trace numbers its jobs from 1: the NASA iPSC/860 trace's first jobs, and a
    second trace of the machine starting a year later with the same numbers."""
    lines = shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf").read_text().splitlines(
        keepends=True)[:40]
    first = write(tmp_path, "1993.swf", *lines)
    second = write(tmp_path, "1994.swf", *(line.replace("UnixStartTime: 749458803",
                                                        "UnixStartTime: 780994803")
                                           for line in lines))
    n_jobs = ingest_file(store, "swf", first).n_stored
    assert n_jobs > 0
    report = ingest_file(store, "swf", second)
    assert (report.n_stored, report.n_duplicates) == (n_jobs, 0)
    assert ingest_file(store, "swf", write(tmp_path, "again.swf", *lines, "\n")).n_stored == 0


def test_a_file_of_which_only_rejects_were_kept_is_read_again(cli) -> None:  # type: ignore[no-untyped-def]
    """slurm2sql's dump names no cluster: read with --on-error skip and no --system, its
    jobs are rejects; read again with the --system they asked for, it was 'already
    ingested (2 records); nothing stored', and the jobs were never stored."""
    dump = str(shared_path("logs", "slurm", "slurm2sql-test-data1.psv"))
    skipped = cli("ingest", "sacct", dump, "--on-error", "skip")
    assert "0 stored" in skipped.stdout and "2 rejected" in skipped.stdout
    result = cli("ingest", "sacct", dump, "--system", "aalto")
    assert result.exit_code == 0, result.output
    assert "2 records, 2 stored" in result.stdout
    assert "already ingested" in cli("ingest", "sacct", dump, "--system", "aalto").stdout
    assert "runs: 2," in cli("runs", "stats").stdout
    # the batch records the --system its runs were stored with, as a first read would
    (batch,) = json.loads(cli("runs", "batches", "--format", "json").stdout)
    assert (batch["runs"], batch["rejects"], batch["system"], batch["system_option"]) == (
        2, 0, "aalto", "aalto")


def test_a_file_read_again_for_its_rejects_is_named_with_its_system_for_a_reread(cli) -> None:  # type: ignore[no-untyped-def]
    """Two dumps of the same jobs: the second read first without --system (its jobs all
    rejects), then again with it, meeting the first's runs. Deleting the first named
    'ingest sacct --reread SECOND' without --system, which rejects every record."""
    first, second = (str(shared_path("logs", "slurm", f"slurm2sql-test-data{i}.psv"))
                     for i in (1, 2))
    assert cli("ingest", "sacct", first, "--system", "aalto").exit_code == 0
    assert "2 rejected" in cli("ingest", "sacct", second, "--on-error", "skip").stdout
    assert "2 already in the store" in cli("ingest", "sacct", second, "--system",
                                           "aalto").stdout
    deleted = cli("runs", "delete", "--batch", "1", "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert (f"perfpredict ingest sacct --reread {Path(second).resolve()} --system aalto"
            in deleted.stdout)


# --- the upgrade ----------------------------------------------------------------------------

def test_the_upgrade_keys_jobs_by_submit_time_and_merges_an_array_task_stored_twice(
        db_url: str, tmp_path: Path) -> None:
    """A store as 0005 left it: job 5 with its submit time, job 6 without, array task
    123_4 stored under JobIDRaw 130 (with its Darshan I/O) and under 123_4, an SWF job
    and a partial execution, a Grid Engine job (keyed ``id@submit`` already), a Darshan
    log alone and a benchmark row. Upgraded, a later job of id 5 is kept beside it and
    none of the jobs read again is stored twice."""
    from perfpredict.store import migrations

    engine = create_engine(db_url)
    try:
        migrations.upgrade(engine, "0005_one_key_per_job")
        with engine.begin() as conn:
            conn.execute(text(
                "INSERT INTO ingest_batches (path, sha256, format, started_epoch_s, "
                "n_records, n_stored, n_duplicates, n_rejected) VALUES "
                "('/logs/1', :sha, 'sacct', 1.0, 1, 1, 0, 0)"), {"sha": "1" * 64})
            task = '"array_job_id": "123", "array_task_id": 4'
            rows = [  # key, job id, submit, start, io_bytes, extra
                ("c|:5", "5", 1000.0, 1100.0, None, None),
                ("c|:6", "6", None, 2100.0, None, None),
                ("c|:130", "130", 3000.0, 3100.0, 5e9,
                 '{"darshan": {"log": "a.darshan"}, "slurm_job_id": "123_4", ' + task + "}"),
                ("c|:123_4", "123_4", 3000.0, 3100.0, None, "{" + task + "}"),
                ("c|77", "77", 4000.0, 4100.0, None, None),
                ("c|77.1", "77", 4000.0, 4050.0, None, None),
                ("c|:9@5000", "9", 5000.0, 5100.0, None, None),
                ("c|:8#darshan@6000", "8", None, 6000.0, 1e9, '{"darshan": {}}'),
                ("c|sha1:ab@cd#1", None, None, None, None, None),
            ]
            for key, job_id, submit, start, io_bytes, extra in rows:
                conn.execute(text(
                    "INSERT INTO runs (natural_key, batch_id, app, system, runtime_s, job_id, "
                    "submit_epoch_s, start_epoch_s, io_bytes, censored, extra) VALUES "
                    "(:key, (SELECT id FROM ingest_batches), 'a', 'c', 60.0, :job, :submit, :start, "
                    ":io, FALSE, :extra)"),
                    {"key": key, "job": job_id, "submit": submit, "start": start,
                     "io": io_bytes, "extra": extra})
    finally:
        engine.dispose()
    store = open_store(db_url, upgrade=True)
    try:
        assert store.upgraded_from == "0005_one_key_per_job"
        with store.engine.connect() as conn:
            keys = dict(conn.execute(select(runs.c.natural_key, runs.c.job_id)).all())
            task_io = conn.execute(select(runs.c.io_bytes).where(
                runs.c.natural_key == "c|:123_4@3000")).scalar_one()
        assert keys == {"c|:5@1000": "5", "c|:6": "6", "c|:123_4@3000": "130",
                        "c|77@4000": "77", "c|77.1@4000": "77", "c|:9@5000": "9",
                        "c|:8#darshan@6000": "8", "c|sha1:ab@cd#1": None}
        assert task_io == 5e9
        header = "JobID|JobIDRaw|JobName|State|Submit|Start|ElapsedRaw|Cluster\n"
        later = write(tmp_path, "later.psv", header,
                      "5|5|b|COMPLETED|1970-01-02T00:00:00|1970-01-02T00:01:00|60|c\n")
        assert ingest_file(store, "sacct", later).n_stored == 1
        again = write(tmp_path, "again.psv", header,
                      "5|5|a|COMPLETED|1970-01-01T00:16:40|1970-01-01T00:18:20|60|c\n"
                      "6|6|a|COMPLETED|1970-01-01T00:30:00|1970-01-01T00:35:00|60|c\n"
                      "123_4|130|a|COMPLETED|1970-01-01T00:50:00|1970-01-01T00:51:40|60|c\n")
        report = ingest_file(store, "sacct", again)
        assert (report.n_stored, report.n_duplicates) == (0, 3)
    finally:
        store.dispose()
