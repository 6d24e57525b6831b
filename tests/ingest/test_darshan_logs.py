from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from perfpredict.errors import MissingDependencyError
from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.darshan_logs import parse
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.store.io_first import peak_ranks
from perfpredict.store.queries import iter_runs
from tests.conftest import shared_path
from tests.ingest._mutate import check_items, mutants

MPI_IO_TEST = "mpi_io_test_with_dxt__treddy_mpi-io-test_id4373053_6-2-60198-9815401321915095332_1.darshan"


def log(name: str) -> Path:
    pytest.importorskip("darshan", reason="the darshan extra is not installed")
    return shared_path("logs", "darshan", name)


def read(path: Path) -> RunRecord:
    (record,) = list(parse(path, IngestOptions()))
    assert isinstance(record, RunRecord), record
    return record


def details(record: RunRecord) -> dict:  # type: ignore[type-arg]
    assert record.extra is not None
    return record.extra["darshan"]  # type: ignore[no-any-return]


# FORMATS.md §9.2: nprocs, run_time, POSIX bytes read / written per log (None: no POSIX).
TABLE = [
    ("release_logs__mpi-io-test-x86_64-3.0.0.darshan", 4, 1.0, 67_108_864, 67_108_864),
    ("release_logs__mpi-io-test-ppc64-3.1.8.darshan", 4, 2.0, 67_108_864, 67_108_864),
    ("release_logs__mpi-io-test-x86_64-3.5.0.darshan", 4, 0.0513, 67_108_864, 67_108_864),
    (MPI_IO_TEST, 32, 14.0, 2_147_483_648, 2_147_486_208),
    ("skew_io__skew-app.darshan", 65_536, 37_517.0, 0, 43_637_372_528),
    ("imbalanced_io__imbalanced-io.darshan", 496, 1_479.0, 53_791_619_826, 52_938_480_076),
    ("apmpi__darshan-apmpi-2nodes-64mpi.darshan", 128, 592.0, None, None),
    ("ior_pnetcdf_hdf5__shane_ior-HDF5_id438090-438090_11-9-41522-17417065676046418211_1.darshan",
     4, 0.0122, 4_202_504, 4_195_800),
    ("nonmpi_dxt_anonymized__nonmpi_dxt_anonymized.darshan", 1, 30.0, 119_840_385, 120_500_998),
    ("partial_data_stdio__partial_data_stdio.darshan", 1, 15.0, 16_777_216, 16_777_216),
    ("stdio_no_posix__laytonjb_test1_id28730_6-7-43012-2131301613401632697_1.darshan", 1, 1.0, None, None),
    ("empty_log__empty_log.darshan", 4, 0.0383, None, None),
]


@pytest.mark.parametrize(("name", "nprocs", "run_time_s", "posix_read", "posix_written"), TABLE)
def test_every_copied_log_matches_the_formats_table(name: str, nprocs: int, run_time_s: float,
                                                    posix_read: int | None,
                                                    posix_written: int | None) -> None:
    record = read(log(name))
    info = details(record)
    assert record.total_ranks == nprocs
    assert record.runtime_s == pytest.approx(run_time_s, rel=0.01)
    assert info.get("posix_bytes_read") == posix_read
    assert info.get("posix_bytes_written") == posix_written
    assert record.mode == "attach"
    assert record.key == f":{record.job_id}#darshan@{record.start_epoch_s:.0f}"


def test_posix_plus_stdio_never_adds_mpiio() -> None:
    record = read(log(MPI_IO_TEST))
    info = details(record)
    posix = info["posix_bytes_read"] + info["posix_bytes_written"]
    stdio = info["stdio_bytes_read"] + info["stdio_bytes_written"]
    assert record.io_bytes == posix + stdio
    assert info["mpiio_bytes_read"] == 2_147_483_648  # README: 2 GiB each way through MPI-IO
    assert (record.job_id, record.app) == ("4373053", "mpi-io-test")
    assert record.start_epoch_s == 1622673798 and record.end_epoch_s == 1622673811


def test_partial_posix_stores_the_larger_layer_and_says_so() -> None:
    record = read(log("imbalanced_io__imbalanced-io.darshan"))
    info = details(record)
    assert info["posix_partial"] and info["partial_modules"] == ["POSIX"]
    # POSIX read more than MPI-IO (53.8 against 52.9 GB), MPI-IO wrote more (79.5 against
    # 52.9 GB): each direction keeps the larger, not MPI-IO's total alone
    assert info["posix_bytes_read"] + info["stdio_bytes_read"] > info["mpiio_bytes_read"]
    assert record.io_bytes == (info["posix_bytes_read"] + info["stdio_bytes_read"]
                               + info["mpiio_bytes_written"]) == 133_315_470_316
    assert info["io_bytes_source"].startswith("the larger of POSIX + STDIO and MPI-IO each way")


def test_missing_modules_give_unknown_io_not_zero() -> None:
    assert read(log("empty_log__empty_log.darshan")).io_bytes is None
    assert read(log("stdio_no_posix__laytonjb_test1_id28730_6-7-43012-2131301613401632697_1.darshan")).io_bytes == 151
    apmpi = read(log("apmpi__darshan-apmpi-2nodes-64mpi.darshan"))
    assert apmpi.io_bytes == 12_886 + 489_948  # STDIO only
    assert apmpi.app == "su3_rhmd_hisq"
    assert read(log("skew_io__skew-app.darshan")).app == "2075454093"  # obfuscated exe


@pytest.mark.parametrize(("label", "cut"), [("empty", 0), ("header", 20), ("regions", 500)])
def test_damaged_logs_are_one_bad_record(tmp_path: Path, label: str, cut: int) -> None:
    # Cutting at 500 bytes makes libdarshan-util crash the process while closing the log:
    # the isolated reader turns that into a bad record.
    path = tmp_path / f"{label}.darshan"
    path.write_bytes(log(MPI_IO_TEST).read_bytes()[:cut])
    (bad,) = list(parse(path, IngestOptions()))
    assert isinstance(bad, BadRecord) and bad.line_no is None
    assert bad.reason.startswith("not a readable Darshan log")


def test_a_log_cut_in_a_module_it_does_not_read_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # The first 30% of the APMPI log still holds its job, STDIO and name regions, so
    # libdarshan-util reads it without complaint; only the APMPI region is cut.
    whole = log("apmpi__darshan-apmpi-2nodes-64mpi.darshan").read_bytes()
    path = tmp_path / "apmpi-partial-copy.darshan"
    path.write_bytes(whole[: len(whole) * 3 // 10])
    result = cli("ingest", "darshan", str(path), "--system", "theta")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {path}: not a readable Darshan log: the log is truncated")
    assert "nothing from this file was stored" in line
    assert cli("runs", "export", "--format", "csv").stdout.strip().count("\n") == 0


@pytest.mark.parametrize(("version", "fix"), [(b"2.06", "Darshan 2's own darshan-parser"),
                                              (b"9.99", "pip install -U darshan")])
def test_a_log_of_another_format_says_which(cli, tmp_path: Path, version: bytes, fix: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "other-format.darshan"
    path.write_bytes(version + log("release_logs__mpi-io-test-x86_64-3.5.0.darshan").read_bytes()[4:])
    result = cli("ingest", "darshan", str(path), "--system", "theta")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert f"its header says log format {version.decode()}, which the installed darshan" in line
    assert fix in line and "re-copy" not in line and "Error: incompatible" not in line


def test_flipped_bytes_never_raise(tmp_path: Path) -> None:
    original = log("release_logs__mpi-io-test-x86_64-3.1.8.darshan")
    for i, (_label, data) in enumerate(mutants(original.read_bytes(), seed=5, count=6)):
        path = tmp_path / f"m{i}.darshan"
        path.write_bytes(data)
        check_items(list(parse(path, IngestOptions())), 1)


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "darshan", None)  # import darshan -> ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'perfpredict\[darshan\]'"):
        list(parse(tmp_path / "any.darshan", IngestOptions()))


@pytest.mark.parametrize("cluster", ["", "theta"])
def test_log_attaches_io_to_the_scheduler_job(store, tmp_path: Path, cluster: str) -> None:  # type: ignore[no-untyped-def]
    darshan_log = log(MPI_IO_TEST)
    sacct = tmp_path / "jobs.psv"
    sacct.write_text("JobIDRaw|Cluster|JobName|State|Elapsed|NNodes|TRESUsageInTot\n"
                     f"4373053|{cluster}|mpi-io-test|COMPLETED|00:00:15|4|\n"
                     f"4373053.0|{cluster}|mpi-io-test|COMPLETED|00:00:14|4|fs/disk=7\n")
    options = IngestOptions(system="theta")
    assert ingest_file(store, "sacct", sacct, options).n_stored == 1
    report = ingest_file(store, "darshan", darshan_log, options)
    assert (report.n_records, report.n_attached, report.n_stored) == (1, 1, 0)
    (run,) = iter_runs(store)
    assert run["io_bytes"] == read(darshan_log).io_bytes  # replaces sacct's fs/disk
    assert run["runtime_s"] == 15.0 and run["nodes"] == 4  # the scheduler's own fields stay
    assert run["extra"]["timezone"] == "UTC"  # merged, not replaced
    assert run["extra"]["darshan"]["log"] == darshan_log.name
    assert ingest_file(store, "darshan", darshan_log, options).already_ingested


def test_log_without_a_stored_job_is_a_run_of_its_own(store) -> None:  # type: ignore[no-untyped-def]
    report = ingest_file(store, "darshan", log(MPI_IO_TEST), IngestOptions(system="theta"))
    assert (report.n_attached, report.n_stored) == (0, 1)
    (run,) = iter_runs(store)
    assert (run["app"], run["job_id"], run["total_ranks"]) == ("mpi-io-test", "4373053", 32)


def test_cli_names_the_unreadable_log(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log(MPI_IO_TEST)  # skip without the darshan extra
    path = tmp_path / "garbage.darshan"
    path.write_bytes(b"not a darshan log" * 20)
    result = cli("ingest", "darshan", str(path), "--system", "theta")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {path}: not a readable Darshan log")


def test_a_skipped_log_is_reported_without_a_line_number(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A Darshan log is one record with no line: skipped, it is 'rejected', not
    'rejected line None'."""
    log(MPI_IO_TEST)  # skip without the darshan extra
    path = tmp_path / "garbage.darshan"
    path.write_bytes(b"not a darshan log" * 20)
    result = cli("ingest", "darshan", str(path), "--system", "theta", "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert "  rejected: not a readable Darshan log" in result.stdout
    assert "None" not in result.stdout


def two_logs_of_one_job(tmp_path: Path) -> list[Path]:
    """The real mpi-io-test log (32 ranks) as two logs of job 4373053 that ran side by
    side: a copy under another name, with four bytes appended (libdarshan-util reads
    past them) so that its checksum differs and it is not 'already ingested'."""
    first, second = tmp_path / "srun-a.darshan", tmp_path / "srun-b.darshan"
    first.write_bytes(log(MPI_IO_TEST).read_bytes())
    second.write_bytes(first.read_bytes() + b"\0\0\0\0")
    return [first, second]


# the job's accounting without tasks (as PBS and LSF give none), around the log's times
JOB_WITHOUT_RANKS = ("JobIDRaw|JobName|State|Elapsed|NNodes|Start|End\n"
                     "4373053|mpi-io-test|COMPLETED|00:00:20|4|2021-06-02T22:43:10|"
                     "2021-06-02T22:43:30\n")


@pytest.mark.parametrize("job_first", [True, False])
def test_a_jobs_logs_side_by_side_add_their_ranks_and_bytes(
        cli, tmp_path: Path, job_first: bool) -> None:  # type: ignore[no-untyped-def]
    """Two logs of one job that ran at once: 64 ranks, not the first log's 32, and the
    bytes of both, whether the job's accounting comes before the logs or after."""
    logs = [str(path) for path in two_logs_of_one_job(tmp_path)]
    sacct = tmp_path / "jobs.psv"
    sacct.write_text(JOB_WITHOUT_RANKS)
    steps = [["sacct", str(sacct)], ["darshan", *logs]]
    for fmt, *paths in steps if job_first else steps[::-1]:
        result = cli("ingest", fmt, *paths, "--system", "theta")
        assert result.exit_code == 0, result.output
    (run,) = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert (run["job_id"], run["total_ranks"], run["nodes"]) == ("4373053", 64, 4)
    assert run["io_bytes"] == 2 * read(log(MPI_IO_TEST)).io_bytes  # type: ignore[operator]


def test_the_accountings_ranks_stay_with_several_logs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Ranks the accounting gives (a step of 16 tasks) count every task: the logs' own
    do not replace them, one log or two."""
    sacct = tmp_path / "jobs.psv"
    sacct.write_text(JOB_WITHOUT_RANKS.replace("|End\n", "|End|NTasks\n").rstrip("\n")
                     + "|\n4373053.0|mpi-io-test|COMPLETED|00:00:20|4|2021-06-02T22:43:10|"
                     "2021-06-02T22:43:30|16\n")
    assert cli("ingest", "sacct", str(sacct), "--system", "theta").exit_code == 0
    for path in two_logs_of_one_job(tmp_path):
        assert cli("ingest", "darshan", str(path), "--system", "theta").exit_code == 0
    (run,) = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert run["total_ranks"] == 16


def _log(nprocs: int, start: float | None, end: float | None) -> dict[str, object]:
    return {"log": f"{nprocs}@{start}", "nprocs": nprocs, "start_epoch_s": start,
            "end_epoch_s": end}


@pytest.mark.parametrize(("logs", "expected"), [
    ([_log(32, 0, 10), _log(64, 20, 30)], 64),  # one srun after the other: the largest
    ([_log(32, 0, 10), _log(64, 5, 30)], 96),  # side by side for a while: their sum
    ([_log(32, 0, 10), _log(64, 10, 30)], 64),  # one ends the second the other starts
    ([_log(1, 7, 7), _log(1, 7, 7), _log(1, 7, 9)], 3),  # sub-second logs at one instant
    ([_log(32, 0, 10), _log(64, None, None), _log(16, 5, 8)], 64),  # no times: alone
    ([], None),
])
def test_peak_ranks_counts_the_logs_running_at_once(
        logs: list[dict[str, object]], expected: int | None) -> None:
    assert peak_ranks(logs) == expected


SKEW_APP = "skew_io__skew-app.darshan"  # 65,536 processes


def test_a_log_of_more_processes_than_the_machine_has_threads_is_warned_of(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """A log names no machine (no hostname; its mount points and file-system types are
    in no catalog entry), so ``--system`` says which: a log of more processes than that
    machine has hardware threads (nodes x cores x 8, the most threads any core runs)
    cannot be of it, and is stored with a warning saying so. A log that fits, or a
    machine whose entry gives no cores per node, is stored without one."""
    (tmp_path / "tiny.toml").write_text(
        '[[systems]]\nname = "tiny"\nnodes = 4\ncores_per_node = 16\n'
        '[systems.sources]\nnodes = "the lab wiki"\ncores_per_node = "the lab wiki"\n'
        '[[systems]]\nname = "sizeless"\nnodes = 4\n[systems.sources]\nnodes = "wiki"\n')
    assert cli("systems", "add", str(tmp_path / "tiny.toml")).exit_code == 0
    result = cli("ingest", "darshan", str(log(SKEW_APP)), "--system", "tiny")
    assert result.exit_code == 0, result.output
    assert (f"Warning: {log(SKEW_APP)}: a record of this file ran 65,536 processes, more "
            "than tiny has hardware threads (512: its catalog entry's nodes x cores per "
            "node x 8): it cannot have run on tiny; check that --system names the machine "
            "it ran on ('perfpredict systems show tiny')") in result.stderr
    assert "1 stored" in result.stdout
    fits = cli("ingest", "darshan", str(log(MPI_IO_TEST)), "--system", "tiny")
    assert fits.exit_code == 0 and "Warning" not in fits.stderr, fits.output
    # another file (four bytes appended, which libdarshan-util reads past)
    (tmp_path / "copy.darshan").write_bytes(log(SKEW_APP).read_bytes() + b"\0\0\0\0")
    unsized = cli("ingest", "darshan", str(tmp_path / "copy.darshan"), "--system", "sizeless")
    assert unsized.exit_code == 0 and "Warning" not in unsized.stderr, unsized.output
