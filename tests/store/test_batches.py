"""Listing the files a store was filled from, and deleting what one stored: on both
backends, against real scheduler and Darshan logs where the files share jobs."""

from __future__ import annotations

import getpass
import json
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfpredict.catalog.store_sync import get_system
from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.store import Store
from perfpredict.store.batches import (
    BATCH_COLUMNS,
    DELETED_COLUMNS,
    BatchesDeleted,
    delete_batches,
    list_batches,
    list_deleted_batches,
)
from perfpredict.store.queries import export_runs, iter_runs, run_stats
from perfpredict.store.writer import BatchReport
from tests.conftest import shared_path

MPI_IO_TEST = ("mpi_io_test_with_dxt__treddy_mpi-io-test_id4373053_6-2-60198-"
               "9815401321915095332_1.darshan")
#: The accounting of the job the real mpi-io-test log ran in (job 4373053, theta).
MPI_IO_JOB = ("JobIDRaw|JobName|State|Elapsed|NNodes|Start|End\n"
              "4373053|mpi-io-test|COMPLETED|00:00:20|4|2021-06-02T22:43:10|"
              "2021-06-02T22:43:30\n")


def sacct_file(path: Path, *job_ids: int) -> Path:
    """A ``sacct -P`` dump of the jobs ``job_ids`` (job 5 ran on 5 nodes for 5 minutes)."""
    path.write_text("JobIDRaw|JobName|State|Elapsed|NNodes|Submit\n" + "".join(
        f"{i}|solver|COMPLETED|00:{i:02d}:00|{i}|2024-03-01T{i:02d}:00:00\n" for i in job_ids))
    return path


def exported(store: Store) -> list[dict[str, object]]:
    """The store's runs as ``runs export`` writes them (ids and keys aside)."""
    return [dict(zip(export.columns, row, strict=True)) for export in [export_runs(store)]
            for row in export.rows]


def test_a_deleted_file_goes_whole_and_comes_back_the_same(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A file read with the wrong --system: its batch deleted, the store is as before it
    (runs, rejects, the system it named), and the same file read right stores its runs
    as a first ingest would have."""
    first = sacct_file(tmp_path / "first.psv", 1, 2)
    wrong = sacct_file(tmp_path / "march.psv", 3, 4)
    wrong.write_text(wrong.read_text() + "5|solver|COMPLETED|bad|5|2024-03-01T05:00:00\n")
    ingest_file(store, "sacct", first, IngestOptions(system="perlmutter"))
    before = exported(store)
    report = ingest_file(store, "sacct", wrong,
                         IngestOptions(system="perlmuter", on_error="skip"))
    assert (report.n_stored, report.n_rejected) == (2, 1)

    listed = list_batches(store)
    assert [list(row) for row in listed] == [BATCH_COLUMNS] * 2
    # the runs are where the catalog put them (its name for perlmutter), the option apart
    assert [(r["batch"], r["format"], r["system"], r["system_option"], r["runs"],
             r["rejects"], r["records"]) for r in listed] == [
        (1, "sacct", "Perlmutter-GPU", "perlmutter", 2, 0, 2),
        (2, "sacct", "perlmuter", "perlmuter", 2, 1, 2)]
    assert listed[1]["file"] == str(wrong.resolve())
    assert listed[1]["ingested"].endswith("Z")

    deleted = delete_batches(store, [2])
    assert (deleted.n_runs, deleted.n_rejects, deleted.systems) == (2, 1, ["perlmuter"])
    assert exported(store) == before
    stats = run_stats(store)
    assert (stats["n_batches"], stats["n_rejects"]) == (1, 0)
    assert get_system(store, "perlmuter") is None

    again = ingest_file(store, "sacct", wrong, IngestOptions(system="perlmutter",
                                                               on_error="skip"))
    assert (again.already_ingested, again.n_stored) == (False, 2)
    assert {r["job_id"] for r in iter_runs(store)} == {"1", "2", "3", "4"}


def _jobs(store: Store) -> list[tuple[object, ...]]:
    """The stored jobs as ``runs export`` gives them, in job order (ids aside)."""
    return sorted(tuple(run.values()) for run in exported(store))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.sets(st.integers(1, 6), min_size=1), min_size=2, max_size=4,
                      unique_by=frozenset),  # a copy of a file is the file: one batch
       data=st.data())
def test_a_delete_and_its_rereads_leave_the_store_the_other_files_make(
        tmp_path_factory: pytest.TempPathFactory, files: list[set[int]],
        data: st.DataObject) -> None:
    """Dumps that overlap in their jobs, each job the same in every dump: ingested in
    turn, one deleted and the files it names read again, the store holds the jobs of the
    other files as a store of those files alone does, each once."""
    from perfpredict.store import open_store

    folder = tmp_path_factory.mktemp("dumps")
    paths = [sacct_file(folder / f"week{i}.psv", *sorted(jobs)) for i, jobs in enumerate(files)]
    options = IngestOptions(system="perlmutter")
    gone = data.draw(st.integers(0, len(paths) - 1), label="deleted file")
    with open_store(folder / "all.db") as store, open_store(folder / "others.db") as others:
        for path in paths:
            ingest_file(store, "sacct", path, options)
        deleted = delete_batches(store, [gone + 1])
        for reread in deleted.rereads:
            ingest_file(store, reread.format, Path(reread.path),
                        IngestOptions(system=reread.system, reread=True))
        for i, path in enumerate(paths):
            if i != gone:
                ingest_file(others, "sacct", path, options)
        assert _jobs(store) == _jobs(others)


def test_a_dry_run_and_a_refused_delete_change_nothing(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ingest_file(store, "sacct", sacct_file(tmp_path / "a.psv", 1, 2),
                IngestOptions(system="perlmutter"))
    before = exported(store)
    plan = delete_batches(store, [1], dry_run=True)
    assert (plan.dry_run, plan.n_runs, [b["batch"] for b in plan.batches]) == (True, 2, [1])
    with pytest.raises(NotFoundError, match="no ingest batch 7 in this store"):
        delete_batches(store, [1, 7])
    with pytest.raises(BadInputError, match="name the ingest batch"):
        delete_batches(store, [])
    reader = Store(engine=store.engine, url=store.url, read_only=True)
    with pytest.raises(BadInputError, match="read-only"):
        delete_batches(reader, [1])
    assert exported(store) == before
    assert [r["batch"] for r in list_batches(store)] == [1]
    assert list_deleted_batches(store) == []


def test_one_batch_or_file_is_named_alone_and_anything_else_is_refused(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    """A notebook names one batch or one file without a list, as ``app=`` takes one
    name: a batch number alone was a TypeError, a file's path as text was read letter by
    letter ("/: cannot read it"), the text "12" named batches 1 and 2 and was refused as
    "no ingest batch 1, 2" in a store holding both, and True was an SQLAlchemy error."""
    import numpy as np

    paths = [sacct_file(tmp_path / f"{name}.psv", *jobs)
             for name, jobs in (("a", (1, 2)), ("b", (3,)))]
    for path in paths:
        ingest_file(store, "sacct", path, IngestOptions(system="perlmutter"))
    before = exported(store)
    for batch in (2, np.int64(2)):
        assert [b["batch"] for b in delete_batches(store, batch, dry_run=True).batches] == [2]
    for file in (str(paths[0]), paths[0]):
        assert [b["batch"] for b in delete_batches(store, files=file, dry_run=True).batches] == [1]
    for wrong in ("12", ["1"], [True], [1.5], 2.0):
        with pytest.raises(BadInputError, match=r"^batch_ids must be batch numbers, as \[2\] "
                           r"\('perfpredict runs batches' lists them\), got "):
            delete_batches(store, wrong, dry_run=True)
    for wrong_file in (5, [5]):  # a TypeError from inside pathlib
        with pytest.raises(BadInputError, match=r"^a file whose batches to delete is named "
                           r"by its path, a text or a Path, not an int$"):
            delete_batches(store, files=wrong_file, dry_run=True)  # type: ignore[arg-type]
    assert exported(store) == before


def test_a_file_is_deleted_by_its_content(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``files=`` finds the batches that ingested a file as ingest knows it, by its
    content: a copy under another name is the same file; an edited one is not, and the
    refusal names the batch its path was ingested as."""
    options = IngestOptions(system="perlmutter")
    ingest_file(store, "sacct", sacct_file(tmp_path / "feb.psv", 1, 2), options)
    wrong = sacct_file(tmp_path / "march.psv", 3, 4)
    ingest_file(store, "sacct", wrong, options)
    copy = tmp_path / "copy-of-march.psv"
    copy.write_bytes(wrong.read_bytes())

    plan = delete_batches(store, files=[copy], dry_run=True)
    assert [row["batch"] for row in plan.batches] == [2]
    wrong.write_text(wrong.read_text().replace("00:04:00", "00:04:30"))  # edited
    with pytest.raises(NotFoundError, match=r"march.psv: this store never ingested this "
                       r"file's content; its path was ingested as batch 2 when it held "
                       r"something else: delete it with --batch 2"):
        delete_batches(store, [1], files=[wrong])
    with pytest.raises(BadInputError, match="nowhere.psv: cannot read it"):
        delete_batches(store, files=[tmp_path / "nowhere.psv"])
    assert [row["batch"] for row in list_batches(store)] == [1, 2]

    deleted = delete_batches(store, files=[copy, copy])
    assert (deleted.n_runs, [row["batch"] for row in deleted.batches]) == (2, [2])
    assert {r["job_id"] for r in iter_runs(store)} == {"1", "2"}


def test_a_results_file_grown_while_it_is_ingested_is_stored_once(
        store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two ingests of a results CSV a line apart, at once (the nightly cron job, and a
    user after the benchmark script appended a line): the second did not see the first's
    batch to extend and stored every row again, 117,122 runs of a 58,561-line file. It
    waits for the first now, and stores the line added."""
    results = tmp_path / "results.csv"
    results.write_text("app,system,nodes,runtime_s\nlulesh,opal,1,80.0\nlulesh,opal,2,41.5\n")
    reports: list[BatchReport] = []
    threads: list[threading.Thread] = []

    def grow_and_ingest_again(_n_records: int) -> None:
        # the first ingest has read the file and stored its runs, and has not committed
        with results.open("a") as fh:
            fh.write("lulesh,opal,4,22.0\n")
        thread = threading.Thread(target=lambda: reports.append(
            ingest_file(store, "csv", results)))
        thread.start()
        threads.append(thread)
        time.sleep(1.0)

    first = ingest_file(store, "csv", results, progress=grow_and_ingest_again)
    for thread in threads:
        thread.join(timeout=120)
    ((grown,),) = [reports]
    assert (first.n_stored, grown.n_stored, grown.grown_from_batch) == (2, 1, 1)
    assert sorted(r["nodes"] for r in iter_runs(store)) == [1, 2, 4]


def test_a_results_file_grown_by_lines_is_stored_once_and_deleted_whole(
        store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A results CSV a benchmark script appends to, ingested every night: each night
    stores the lines added (the same measurement appended again is one more run), and
    ``files=`` takes every night's batch back out, also once lines were appended since
    the last ingest."""
    results = tmp_path / "results.csv"
    results.write_text("app,system,nodes,runtime_s\nlulesh,opal,1,80.0\nlulesh,opal,2,41.5\n")
    ingest_file(store, "csv", results)
    for row in ("lulesh,opal,4,22.0\n", "lulesh,opal,2,41.5\n"):
        with results.open("a") as fh:
            fh.write(row)
        report = ingest_file(store, "csv", results)
        assert (report.n_stored, report.grown_from_batch) == (1, 1)
    assert sorted(r["nodes"] for r in iter_runs(store)) == [1, 2, 2, 4]
    with results.open("a") as fh:
        fh.write("lulesh,opal,8,12.5\n")  # not ingested yet

    plan = delete_batches(store, files=[results], dry_run=True)
    assert [row["batch"] for row in plan.batches] == [1, 2, 3]
    assert delete_batches(store, files=[results]).n_runs == 4
    assert list(iter_runs(store)) == []


def test_a_deleted_file_is_recorded_and_its_id_never_given_again(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """SQLite gave the next file the id of a deleted newest batch: a script deleting
    ``--batch 2 --yes`` by an id it noted earlier would have deleted another file. The
    store also keeps what left it, and when and by whom."""
    options = IngestOptions(system="perlmutter")
    ingest_file(store, "sacct", sacct_file(tmp_path / "feb.psv", 1, 2), options)
    wrong = sacct_file(tmp_path / "march.psv", 3, 4, 5)
    ingest_file(store, "sacct", wrong, options)
    (listed,) = [row for row in list_batches(store) if row["batch"] == 2]
    delete_batches(store, [2])

    (record,) = list_deleted_batches(store)
    assert list(record) == DELETED_COLUMNS
    assert {k: record[k] for k in ("batch", "file", "format", "runs", "rejects",
                                   "system_option")} == {
        "batch": 2, "file": str(wrong.resolve()), "format": "sacct", "runs": 3, "rejects": 0,
        "system_option": "perlmutter"}
    assert record["ingested"] == listed["ingested"] and record["deleted"] >= record["ingested"]
    assert record["deleted_by"] == getpass.getuser()

    ingest_file(store, "sacct", sacct_file(tmp_path / "april.psv", 6), options)
    assert [row["batch"] for row in list_batches(store)] == [1, 3]


def test_a_file_already_ingested_uses_up_no_batch_id(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Re-ingesting a file already stored drew an id from the batches' sequence all the
    same (its claim was an insert ignored): a nightly re-ingest of a folder left gaps of
    its files' count between the batches it did store."""
    options = IngestOptions(system="perlmutter")
    feb = sacct_file(tmp_path / "feb.psv", 1, 2)
    ingest_file(store, "sacct", feb, options)
    for _ in range(3):
        assert ingest_file(store, "sacct", feb, options).already_ingested
    ingest_file(store, "sacct", sacct_file(tmp_path / "march.psv", 3), options)
    assert [row["batch"] for row in list_batches(store)] == [1, 2]


def test_a_job_two_files_held_is_stored_again_from_the_other(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Job 2 was in both dumps and stored once, from the first: deleting the first names
    the second for ``ingest --reread``, which stores job 2 from it."""
    first = sacct_file(tmp_path / "week1.psv", 1, 2)
    second = sacct_file(tmp_path / "week2.psv", 2, 3)
    options = IngestOptions(system="perlmutter")
    ingest_file(store, "sacct", first, options)
    assert ingest_file(store, "sacct", second, options).n_duplicates == 1

    deleted = delete_batches(store, [1])
    assert deleted.rereads == [("sacct", str(second.resolve()), "perlmutter", 1)]
    assert {r["job_id"] for r in iter_runs(store)} == {"3"}
    reread = ingest_file(store, "sacct", second, IngestOptions(system="perlmutter",
                                                                reread=True))
    assert reread.n_stored == 1
    assert {r["job_id"] for r in iter_runs(store)} == {"2", "3"}


def test_a_delete_beside_an_ingest_that_meets_its_jobs_names_that_file_to_reread(
        store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A delete run while another file's ingest met its jobs (a real sacct dump, and the
    week's dump that repeats its first job) decided before that ingest committed: it
    named no file to reread, and the job both files held was gone from the store without
    a word. It waits for the ingest now, names its file, and the reread stores the job."""
    dump = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    repeat = tmp_path / "repeat.psv"
    repeat.write_text("".join(dump.read_text().splitlines(keepends=True)[:4]))
    options = IngestOptions(system="perlmutter")
    ingest_file(store, "sacct", dump, options)
    deletes: list[BatchesDeleted] = []

    def delete_while_stored(_n_records: int) -> None:
        # the delete starts while the ingest's transaction is open, and is given time to
        # decide before it commits
        thread = threading.Thread(target=lambda: deletes.append(delete_batches(store, [1])))
        thread.start()
        threads.append(thread)
        time.sleep(1.0)

    threads: list[threading.Thread] = []
    met = ingest_file(store, "sacct", repeat, options, progress=delete_while_stored)
    for thread in threads:
        thread.join(timeout=120)
    assert met.n_duplicates == 1
    ((deleted,),) = [deletes]
    assert deleted.rereads == [("sacct", str(repeat.resolve()), "perlmutter", 1)]
    assert not list(iter_runs(store))
    reread = ingest_file(store, "sacct", repeat, IngestOptions(system="perlmutter",
                                                                reread=True))
    assert reread.n_stored == 1
    assert [r["job_id"] for r in iter_runs(store)] == ["43974388"]


@pytest.mark.parametrize("log_first", [False, True])
def test_a_job_and_its_darshan_log_are_deleted_together_or_not_at_all(
        store, tmp_path: Path, log_first: bool) -> None:  # type: ignore[no-untyped-def]
    """The real mpi-io-test log's I/O sits on its job's run, whichever came first:
    either batch alone is refused, naming the other; both together empty the store."""
    pytest.importorskip("darshan", reason="the darshan extra is not installed")
    log = shared_path("logs", "darshan", MPI_IO_TEST)
    jobs = tmp_path / "jobs.psv"
    jobs.write_text(MPI_IO_JOB)
    options = IngestOptions(system="theta")
    steps = [("sacct", jobs), ("darshan", log)]
    for fmt, path in steps[::-1] if log_first else steps:
        ingest_file(store, fmt, path, options)
    (run,) = iter_runs(store)
    assert run["extra"]["darshan"]["log"] == MPI_IO_TEST
    batch_of = {r["format"]: r["batch"] for r in list_batches(store)}

    for alone, other in (("sacct", "darshan"), ("darshan", "sacct")):
        with pytest.raises(BadInputError) as refused:
            delete_batches(store, [batch_of[alone]])
        message = str(refused.value)
        assert f"{batch_of[other]} (" in message and "delete them together" in message
        assert f"--batch {min(batch_of.values())} --batch {max(batch_of.values())}" in message
    assert len(list(iter_runs(store))) == 1

    deleted = delete_batches(store, batch_of.values())
    assert deleted.n_runs == 1
    assert list(iter_runs(store)) == [] and list_batches(store) == []


def test_a_predictor_trained_on_the_runs_is_named(store, timed_runs_csv: Path) -> None:  # type: ignore[no-untyped-def]
    from perfpredict.train import train

    ingest_file(store, "csv", timed_runs_csv, IngestOptions())
    assert delete_batches(store, [1], dry_run=True).trained_since_epoch_s is None
    train(store, borrow_bundled=False)
    deleted = delete_batches(store, [1])
    assert deleted.trained_since_epoch_s is not None
    assert deleted.rereads == []  # benchmark rows are keyed by their own file


def test_a_batch_shows_the_systems_its_runs_are_in_and_the_option_apart(cli) -> None:  # type: ignore[no-untyped-def]
    """The real XDMoD sacct dump names its cluster (ub-hpc) on every line, so --system is
    not used for its runs: 'runs batches' showed the option's 'testc' as the batch's
    system, and a user looked for its runs under a system that held none. A file whose
    jobs were all stored by an earlier one holds no runs, so no system: the dumps overlap,
    and it showed a blank system and nothing else. Its stored_from names the batch that
    stored its jobs, as data (the batch ids), until that batch is deleted."""
    logs = shared_path("logs", "slurm")
    for name in ("xdmod-sacct-accounting-logs-with-job-arrays.psv",
                 "xdmod-sacct-accounting-logs.psv", "xdmod-sacct-utf8-multibyte-chars.psv"):
        assert cli("ingest", "sacct", str(logs / name), "--system", "testc").exit_code == 0
    rows = json.loads(cli("runs", "batches", "--format", "json").stdout)
    assert [(r["runs"], r["system"], r["system_option"], r["stored_from"]) for r in rows] == [
        (1, "ub-hpc", "testc", []), (3, "ub-hpc", "testc", [1]), (0, None, "testc", [1])]
    csv_rows = cli("runs", "batches", "--format", "csv").stdout.splitlines()
    assert [line.rsplit(",", 2)[1:] for line in csv_rows] == [
        ["records", "stored_from"], ["1", "[]"], ["4", "[1]"], ["1", "[1]"]]
    table = cli("runs", "batches").stdout.splitlines()
    last = max(i for i, line in enumerate(table) if "stored" in line)
    assert [[cell.strip() for cell in line.strip("│").split("│")]
            for line in table[last:] if line.startswith("│")] == [
        ["1", "1", ""], ["2", "4", "1"], ["3", "1", "1"]]
    stored = json.loads(cli("runs", "list", "--format", "json").stdout)
    assert {r["system"] for r in stored} == {"ub-hpc"}

    assert cli("runs", "delete", "--batch", "1", "--yes").exit_code == 0
    (record,) = json.loads(cli("runs", "batches", "--deleted", "--format", "json").stdout)
    assert (record["batch"], record["system_option"]) == (1, "testc")
    rows = json.loads(cli("runs", "batches", "--format", "json").stdout)
    assert [(r["batch"], r["stored_from"]) for r in rows] == [(2, []), (3, [])]


def test_the_cli_lists_shows_asks_and_deletes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A user's way through it: the files, what the wrong one stored (and a copy of it),
    a delete declined, then done; and a batch that is not there, one line."""
    right = sacct_file(tmp_path / "feb.psv", 1, 2)
    wrong = sacct_file(tmp_path / "march.psv", 3, 4, 5)
    assert cli("ingest", "sacct", str(right), "--system", "perlmutter").exit_code == 0
    assert cli("ingest", "sacct", str(wrong), "--system", "perlmuter").exit_code == 0
    rows = json.loads(cli("runs", "batches", "--format", "json").stdout)
    assert [(r["batch"], r["file"], r["runs"]) for r in rows] == [
        (1, str(right.resolve()), 2), (2, str(wrong.resolve()), 3)]
    shown = json.loads(cli("runs", "list", "--batch", "2", "--format", "json").stdout)
    assert [(r["job_id"], r["system"]) for r in shown] == [
        ("3", "perlmuter"), ("4", "perlmuter"), ("5", "perlmuter")]
    copy = cli("runs", "export", "--batch", "2")
    assert copy.exit_code == 0 and len(copy.stdout.strip().splitlines()) == 1 + 3

    kept = cli("runs", "delete", "--batch", "2", input="n\n")
    assert kept.exit_code == 1
    assert "would delete batch 2: " in kept.stdout and "3 runs, 0 rejects" in kept.stdout
    assert "would go from the catalog too, as only these runs named them: perlmuter" in kept.stdout
    assert len(json.loads(cli("runs", "export", "--format", "json").stdout)) == 5

    unanswered = cli("runs", "delete", "--batch", "2", input="")  # a script's, or cron's
    assert unanswered.exit_code == 2
    assert unanswered.stderr.strip().splitlines()[-1] == (
        "Error: no answer to 'Delete them?' (the input ended); nothing was deleted; pass "
        "--yes to delete without asking")
    assert len(json.loads(cli("runs", "export", "--format", "json").stdout)) == 5

    gone = cli("runs", "delete", "--batch", "2", input="y\n")
    assert gone.exit_code == 0, gone.output
    assert "deleted batch 2: " in gone.stdout and "the file can be ingested again" in gone.stdout
    (record,) = json.loads(cli("runs", "batches", "--deleted", "--format", "json").stdout)
    assert (record["batch"], record["file"], record["runs"]) == (2, str(wrong.resolve()), 3)
    assert {r["job_id"] for r in json.loads(cli("runs", "export", "--format", "json").stdout)
            } == {"1", "2"}

    again = sacct_file(tmp_path / "april.psv", 6)
    assert cli("ingest", "sacct", str(again), "--system", "perlmutter").exit_code == 0
    by_file = cli("runs", "delete", "--file", str(again), input="y\n")
    assert by_file.exit_code == 0, by_file.output
    assert f"deleted batch 3: {again.resolve()} (sacct" in by_file.stdout
    nothing = cli("runs", "delete")
    assert nothing.exit_code == 2
    assert nothing.stderr.strip().splitlines() == [
        "Error: name the ingest batch to delete (--batch ID, or --file PATH for the file it "
        "was ingested from); 'perfpredict runs batches' lists them"]

    for command in (["runs", "delete", "--batch", "2", "--yes"],
                    ["runs", "list", "--batch", "2"], ["runs", "export", "--batch", "2"]):
        unknown = cli(*command)
        assert unknown.exit_code == 1, command
        assert unknown.stderr.strip().splitlines() == [
            "Error: no ingest batch 2 in this store; 'perfpredict runs batches' lists them"]


def test_a_delete_names_a_few_of_many_systems(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The bundled MLPerf Training file deleted named its 400 systems in one line."""
    table = tmp_path / "many.csv"
    table.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"solver,machine{i:02d},1,10\n" for i in range(10)))
    assert cli("ingest", "csv", str(table)).exit_code == 0
    gone = cli("runs", "delete", "--batch", "1", "--yes")
    assert gone.exit_code == 0, gone.output
    assert ("gone from the catalog too, as only these runs named them: machine00, machine01, "
            "machine02, machine03, machine04 and 5 more (10 in all)\n") in gone.stdout


def test_the_upgrade_keeps_the_batches_and_gives_no_id_twice(db_url: str, tmp_path: Path) -> None:
    """A store at 0007 holding batches 1 and 2 (3, the newest, deleted): upgraded, it
    holds its batches and runs as they were and still checks the runs' batches, and a
    batch deleted from then on is never given to another file. (SQLite kept no record
    of the ids deleted before the upgrade, so its next file may be 3 again.)"""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import IntegrityError

    from perfpredict.store import migrations, open_store

    engine = create_engine(db_url)
    try:
        migrations.upgrade(engine, "0007_runs_of_batch")
        with engine.begin() as conn:
            for batch_id in (1, 2, 3):
                conn.execute(text(
                    "INSERT INTO ingest_batches (path, sha256, format, started_epoch_s, "
                    "n_records, n_stored, n_duplicates, n_rejected) VALUES "
                    "(:path, :sha, 'csv', 1.0, 1, 1, 0, 0)"),
                    {"path": f"/runs/{batch_id}.csv", "sha": str(batch_id) * 64})
                conn.execute(text(
                    "INSERT INTO runs (natural_key, batch_id, app, system, nodes, runtime_s, "
                    "censored) VALUES (:key, (SELECT id FROM ingest_batches WHERE sha256 = "
                    ":sha), 'solver', 'perlmutter', 1, 60.0, FALSE)"),
                    {"key": f"run{batch_id}", "sha": str(batch_id) * 64})
            conn.execute(text("DELETE FROM runs WHERE natural_key = 'run3'"))
            conn.execute(text("DELETE FROM ingest_batches WHERE sha256 = :sha"), {"sha": "3" * 64})
    finally:
        engine.dispose()
    store = open_store(db_url, upgrade=True)
    try:
        assert [(r["batch"], r["file"], r["runs"]) for r in list_batches(store)] == [
            (1, "/runs/1.csv", 1), (2, "/runs/2.csv", 1)]
        with pytest.raises(IntegrityError), store.engine.begin() as conn:
            conn.execute(text("INSERT INTO runs (natural_key, batch_id, app, system, censored) "
                              "VALUES ('orphan', 99, 'solver', 'perlmutter', FALSE)"))
        ingest_file(store, "sacct", sacct_file(tmp_path / "feb.psv", 1),
                    IngestOptions(system="perlmutter"))
        newest = list_batches(store)[-1]["batch"]
        delete_batches(store, [newest])
        ingest_file(store, "sacct", sacct_file(tmp_path / "march.psv", 2),
                    IngestOptions(system="perlmutter"))
        assert list_batches(store)[-1]["batch"] == newest + 1
    finally:
        store.dispose()


def test_an_upgrade_that_would_leave_a_run_without_its_batch_changes_nothing(sqlite_url: str) -> None:
    """SQLite's checks of the runs' batches are off while 0008 rebuilds the table they
    name, and every key is checked before the upgrade commits: a store holding a run of
    a batch it lacks (written past the checks) is refused, naming the row, and left at
    its revision."""
    import sqlite3

    from sqlalchemy import create_engine

    from perfpredict.errors import PerfPredictError
    from perfpredict.store import migrations, open_store
    from perfpredict.store.database import stored_revision

    engine = create_engine(sqlite_url)
    try:
        migrations.upgrade(engine, "0007_runs_of_batch")
    finally:
        engine.dispose()
    path = sqlite_url.split(":///", 1)[1]
    with sqlite3.connect(path) as conn:  # foreign keys are off unless turned on
        conn.execute("INSERT INTO runs (natural_key, batch_id, app, system, censored) "
                     "VALUES ('orphan', 9, 'solver', 'perlmutter', 0)")
    with pytest.raises(PerfPredictError, match="row 1 of its table runs names a row of "
                       "ingest_batches that it does not hold; nothing was changed"):
        open_store(sqlite_url, upgrade=True)
    engine = create_engine(sqlite_url)
    try:
        assert stored_revision(engine) == "0007_runs_of_batch"
    finally:
        engine.dispose()


def swf_jobs(path: Path, first: int, last: int) -> Path:
    """Jobs ``first`` to ``last`` (1-based) of the real NASA iPSC/860 trace, with its
    header: two slices that overlap hold the same jobs, as two dumps of one machine do."""
    lines = shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf").read_text().splitlines()
    jobs = [line for line in lines if line.strip() and not line.startswith(";")]
    path.write_text("\n".join([*(line for line in lines if line.startswith(";")),
                               *jobs[first - 1:last]]) + "\n")
    return path


def test_a_delete_names_only_the_files_that_met_its_runs(cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Real logs, as the tester's store held them: slurm2sql's dump (1) and its second
    dump of the same two jobs (5), a PBS log that repeats one of its own records (2),
    two overlapping slices of the NASA trace (3, 4), and the apmpi Darshan log alone
    (6). Deleting the first dump names the second dump alone (not the PBS log, which
    met only itself, nor the trace, which met only its other slice); deleting a slice
    names the other; deleting the Darshan log names none. Read again as told, the store
    holds each job of the files left once, as those files alone make it."""
    pytest.importorskip("darshan", reason="the darshan extra is not installed")
    dump1 = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    dump2 = shared_path("logs", "slurm", "slurm2sql-test-data2.psv")
    pbs = shared_path("logs", "pbs", "xdmod-accounting-logs.log")
    apmpi = shared_path("logs", "darshan", "apmpi__darshan-apmpi-2nodes-64mpi.darshan")
    slices = [swf_jobs(tmp_path / "nasa1.swf", 1, 50), swf_jobs(tmp_path / "nasa2.swf", 41, 80)]
    for args in (("sacct", dump1, "--system", "alpha"), ("pbs", pbs, "--system", "alpha"),
                 ("swf", slices[0]), ("swf", slices[1]),
                 ("sacct", dump2, "--system", "alpha"), ("darshan", apmpi, "--system", "beta")):
        assert cli("ingest", *map(str, args)).exit_code == 0
    held = {r["batch"]: r["records"] - r["runs"]
            for r in json.loads(cli("runs", "batches", "--format", "json").stdout)}
    assert held == {1: 0, 2: 1, 3: 0, 4: 10, 5: 2, 6: 0}  # each met records stored already

    gone = cli("runs", "delete", "--batch", "1", "--yes")
    assert gone.exit_code == 0, gone.output
    assert ("  1 file held 2 records of runs only the deleted file stored (a job two files "
            "hold is stored once, from the first); to store them from there: perfpredict "
            f"ingest sacct --reread {dump2.resolve()} --system alpha\n") in gone.stdout
    assert "pbs" not in gone.stdout and "nasa" not in gone.stdout
    gone = cli("runs", "delete", "--batch", "3", "--yes")
    assert f"to store them from there: perfpredict ingest swf --reread {slices[1]}\n" in gone.stdout
    assert "sacct" not in gone.stdout and "pbs" not in gone.stdout
    gone = cli("runs", "delete", "--batch", "6", "--yes")
    assert gone.exit_code == 0 and "--reread" not in gone.stdout

    for args in (("sacct", dump2, "--system", "alpha"), ("swf", slices[1])):
        assert cli("ingest", args[0], "--reread", *map(str, args[1:])).exit_code == 0
    from perfpredict.store import open_store

    def jobs(store: Store) -> list[tuple[object, ...]]:
        return sorted((r["system"], r["job_id"], r["submit_epoch_s"], r["runtime_s"])
                      for r in iter_runs(store))

    with open_store(db_url) as store, open_store(tmp_path / "others.db") as others:
        for fmt, path, system in (("pbs", pbs, "alpha"), ("swf", slices[1], None),
                                  ("sacct", dump2, "alpha")):
            ingest_file(others, fmt, path, IngestOptions(system=system))
        assert jobs(store) == jobs(others)
        assert len(jobs(store)) == 8 + 40 + 2


def test_a_file_read_before_the_store_recorded_what_it_met_is_named_by_its_rule(
        cli, db_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A file ingested before revision 0009 (its batch_overlaps one row naming no batch,
    as the upgrade leaves it) is named when it came after the deleted file and met runs
    already stored, and the message says that is why; read again, what it met is
    recorded and a later delete tells exactly. 'runs batches' does not know which batch
    stored its jobs (stored_from null), where it knows of the first file that it met none."""
    from sqlalchemy import create_engine, text

    dump1 = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    dump2 = shared_path("logs", "slurm", "slurm2sql-test-data2.psv")
    for dump in (dump1, dump2):
        assert cli("ingest", "sacct", str(dump), "--system", "alpha").exit_code == 0
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE batch_overlaps SET met_batch_id = NULL"))
    finally:
        engine.dispose()
    assert [row["stored_from"] for row in json.loads(
        cli("runs", "batches", "--format", "json").stdout)] == [[], None]
    gone = cli("runs", "delete", "--batch", "1", "--yes")
    assert ("  1 file ingested after the deleted file met runs already stored, which may be "
            "the deleted ones: named as it was ingested before the store recorded whose runs "
            "a file met; to store them from there: perfpredict ingest sacct --reread "
            f"{dump2.resolve()} --system alpha\n") in gone.stdout
    again = cli("ingest", "sacct", str(dump2), "--system", "alpha")
    assert again.exit_code == 0
    assert again.stderr.startswith(f"Warning: {dump2}: up to 2 records of it met jobs that "
                                   "only a file deleted since had stored")


def test_a_file_whose_jobs_went_with_another_says_so_when_ingested_again(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """slurm2sql's two real dumps hold the same jobs, stored from the first. Deleted,
    the second ingested again (a nightly job) said only "already ingested" while the
    store held none of its jobs: it warns on stderr, in one line, with the --reread
    that stores them (exit 0: the ingest did what it was asked), which brings them back
    once, and then it warns no more."""
    dump1 = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    dump2 = shared_path("logs", "slurm", "slurm2sql-test-data2.psv")
    for dump in (dump1, dump2):
        assert cli("ingest", "sacct", str(dump), "--system", "alpha").exit_code == 0
    assert cli("runs", "delete", "--batch", "1", "--yes").exit_code == 0
    assert json.loads(cli("runs", "export", "--format", "json").stdout) == []

    nightly = cli("ingest", "sacct", str(dump2), "--system", "alpha")
    assert nightly.exit_code == 0
    assert nightly.stdout == f"{dump2}: already ingested (2 records); nothing stored.\n"
    warning = ("2 records of it met jobs that only a file deleted since had stored, so the "
               f"store lacks them; perfpredict ingest sacct --reread {dump2} --system alpha "
               "stores them")
    assert nightly.stderr.strip().splitlines() == [f"Warning: {dump2}: {warning}"]
    # a script reading --format json gets the command too, not only the count
    report, = json.loads(cli("ingest", "sacct", str(dump2), "--system", "alpha",
                             "--format", "json").stdout)
    assert (report["already_ingested"], report["n_met_deleted"]) == (True, 2)
    assert report["warnings"] == [warning]

    reread = cli("ingest", "sacct", "--reread", str(dump2), "--system", "alpha")
    assert reread.exit_code == 0 and "2 stored" in reread.stdout
    assert sorted(r["job_id"] for r in json.loads(
        cli("runs", "export", "--format", "json").stdout)) == ["43974388", "43977780"]
    quiet = cli("ingest", "sacct", str(dump2), "--system", "alpha")
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_the_upgrade_keeps_what_each_file_met_as_not_recorded(db_url: str) -> None:
    """A store at 0008: a file that met runs stored already gets one batch_overlaps row
    naming no batch, holding its n_duplicates; one that met none gets none."""
    from sqlalchemy import create_engine, text

    from perfpredict.store import migrations

    engine = create_engine(db_url)
    try:
        migrations.upgrade(engine, "0008_batch_deletions")
        with engine.begin() as conn:
            for batch_id, n_duplicates in ((1, 0), (2, 3)):
                conn.execute(text(
                    "INSERT INTO ingest_batches (path, sha256, format, started_epoch_s, "
                    "n_records, n_stored, n_duplicates, n_rejected) VALUES "
                    "(:path, :sha, 'sacct', 1.0, 3, 3, :dup, 0)"),
                    {"path": f"/runs/{batch_id}.psv", "sha": str(batch_id) * 64,
                     "dup": n_duplicates})
        migrations.upgrade(engine, "0009_batch_overlaps")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT batch_id, met_batch_id, n_records FROM "
                                     "batch_overlaps")).all() == [(2, None, 3)]
    finally:
        engine.dispose()


def test_runs_list_is_in_the_order_stored_not_the_jobs_time(cli) -> None:  # type: ignore[no-untyped-def]
    """Its help said 'oldest first': a center filling a store with this year's sacct JSON
    and then 2015's dump saw the 2024 jobs first. It lists them as stored, and says so."""
    logs = shared_path("logs", "slurm")
    for name in ("sarc-sacct-json-slurm_22_5_9.json", "xdmod-sacct-accounting-logs.psv"):
        fmt = "sacct-json" if name.endswith(".json") else "sacct"
        assert cli("ingest", fmt, str(logs / name)).exit_code == 0
    listed = json.loads(cli("runs", "list", "--format", "json").stdout)
    assert [r["job_id"] for r in listed] == ["20247445", "4103947", "4107166", "4107219",
                                             "5692623"]
    assert "in the order they were stored" in " ".join(cli("runs", "list", "--help").stdout.split())
