"""Grid Engine accounting: the real SGE and UGE records of FORMATS.md §6, records written
here in accounting(5)'s layout (parallel jobs under tight integration, array tasks,
h_rt kills), damaged copies, and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.ingest import IngestOptions
from perfpredict.ingest.grid_engine import parse, split_record
from perfpredict.ingest.records import BadRecord, RunRecord
from tests.conftest import shared_path
from tests.ingest._mutate import check_items, survives_mutations


def sample(flavour: str) -> Path:
    return shared_path("logs", flavour, "xdmod-accounting-logs.log")


def runs(path: Path) -> list[RunRecord]:
    items = list(parse(path, IngestOptions()))
    assert all(isinstance(i, RunRecord) for i in items), items
    return items  # type: ignore[return-value]


def record(job: int, *, host: str = "n01", pe: str = "NONE", slots: int = 1, task: int = 0,
           pe_taskid: str = "NONE", failed: int = 0, exit_status: int = 0,
           wallclock: float = 600, category: str = "-l h_rt=3600,mem_free=2G",
           name: str = "lammps") -> str:
    """One record in SGE 8.1's accounting(5) layout, times in epoch seconds."""
    start = 1_700_000_000
    rusage = ":".join(["0"] * 14)  # ru_ixrss .. ru_nivcsw
    return (f"all.q:{host}:hpc:ana:{name}:{job}:sge:0:{start - 60}:{start}:"
            f"{start + int(wallclock)}:{failed}:{exit_status}:{wallclock}:1.0:0.5:2048:"
            f"{rusage}:proj1:defaultdepartment:{pe}:{slots}:{task}:590.0:12.5:0.01:"
            f"{category}:0.000000:{pe_taskid}:1073741824.000000:0:0\n")


def write(tmp_path: Path, *records: str) -> Path:
    path = tmp_path / "accounting"
    path.write_text("# Version: 8.1.9\n# a comment line, as Grid Engine writes them\n"
                    + "".join(records))
    return path


def test_real_sge_records() -> None:
    first, again = runs(sample("sge"))
    assert (first.app, first.job_id, first.partition, first.user) == (
        "mpi-mem-test", "22947", "myqueue", "jdoe")
    assert (first.runtime_s, first.requested_walltime_s) == (60.0, 36000.0)  # -l h_rt=36000
    assert (first.state, first.exit_code, first.censored) == ("COMPLETED", 0, False)
    assert (first.nodes, first.total_ranks) == (1, 1)  # one slot of a PE: one host
    assert first.max_rss_bytes == 104188 * 1024  # ru_maxrss in KB
    assert (first.start_epoch_s, first.end_epoch_s) == (1311095354, 1311095414)
    assert first.account is None  # "sge", Grid Engine's default account, and no project
    assert again.key == first.key  # the same job logged twice is stored once


def test_real_uge_records_in_milliseconds() -> None:
    same_job, gpu = runs(sample("uge"))
    sge = runs(sample("sge"))[0]
    assert (same_job.key, same_job.start_epoch_s) == (sge.key, sge.start_epoch_s)
    assert gpu.runtime_s == 12837.318 and gpu.start_epoch_s == 1652111622.875
    assert (gpu.gpus, gpu.total_ranks, gpu.nodes) == (1, 16, None)  # -pe threads 16, one record
    assert gpu.requested_walltime_s is None  # no h_rt asked for
    assert gpu.extra is not None and gpu.extra["maxvmem_bytes"] == 9323855872


def test_a_tightly_integrated_job_counts_the_hosts_of_its_tasks(tmp_path: Path) -> None:
    path = write(tmp_path, *(record(7, host=f"n0{i}", pe="mpi", slots=48,
                                    pe_taskid=f"1.n0{i}") for i in (1, 2, 3)),
                 record(8),  # another job ends in between
                 record(7, host="n01", pe="mpi", slots=48))
    other, job = runs(path)
    assert (other.job_id, other.nodes, other.total_ranks) == ("8", 1, 1)
    assert (job.job_id, job.nodes, job.total_ranks, job.ranks_per_node) == ("7", 3, 48, 16.0)
    assert job.line_no == 7  # the master's record


def test_task_records_after_their_master_still_count(tmp_path: Path) -> None:
    """Records are written as processes end, which concurrent jobs interleave: a task
    ending after its master's record is still one of the job's hosts."""
    path = write(tmp_path, record(7, host="n01", pe="mpi", slots=48),
                 *(record(7, host=f"n0{i}", pe="mpi", slots=48, pe_taskid=f"1.n0{i}")
                   for i in (1, 2, 3)))
    (job,) = runs(path)
    assert (job.nodes, job.total_ranks, job.line_no) == (3, 48, 3)


def test_limits_that_set_none_and_escaped_colons(tmp_path: Path) -> None:
    """h_rt=INFINITY and h_rt=0 set no limit; Grid Engine escapes a category's colons."""
    path = write(tmp_path, record(1, category="-l h_rt=INFINITY"),
                 record(2, category="-l h_rt=0"),
                 record(3, category="-l h_rt=01\\:30\\:00,mem_free=2G"))
    unlimited, zero, escaped = runs(path)
    assert unlimited.requested_walltime_s is None and zero.requested_walltime_s is None
    assert escaped.requested_walltime_s == 5400.0


def test_array_tasks_and_h_rt_kills(tmp_path: Path) -> None:
    path = write(tmp_path, record(100, task=5),
                 record(101, failed=100, exit_status=137, wallclock=3601),
                 record(102, failed=0, exit_status=1, wallclock=10))
    task, killed, failed = runs(path)
    assert (task.job_id, task.extra) == ("100.5", {"array_task_id": 5, "cpu_time_s": 590.0,
                                                   "maxvmem_bytes": 1073741824.0})
    assert (killed.state, killed.censored, killed.exit_code) == ("TIMEOUT", True, 137)
    assert (failed.state, failed.censored, failed.exit_code) == ("FAILED", False, 1)
    assert task.key != killed.key and task.account == "proj1"


def test_a_category_with_colons_is_one_field(tmp_path: Path) -> None:
    text = record(9, category="-l h_rt=01:30:00,mem_free=2G -pe mpi 4")
    values = split_record(text.rstrip("\n"))
    assert values is not None and values["category"] == "-l h_rt=01:30:00,mem_free=2G -pe mpi 4"
    assert values["maxvmem"] == "1073741824.000000"
    (run,) = runs(write(tmp_path, text))
    assert run.requested_walltime_s == 5400.0


def test_a_line_that_is_no_record_is_bad(tmp_path: Path) -> None:
    path = write(tmp_path, record(1), "all.q:n01:hpc:ana:cut-short\n")
    # a master record waits for late task records: told after the bad line
    bad, good = parse(path, IngestOptions())
    assert isinstance(good, RunRecord) and isinstance(bad, BadRecord)
    assert bad.line_no == 4
    assert bad.reason.startswith("not a Grid Engine accounting record: 5 ':'-separated fields")


@pytest.mark.parametrize("flavour", ["sge", "uge"])
def test_damaged_copies_never_crash(tmp_path: Path, flavour: str) -> None:
    assert survives_mutations(parse, sample(flavour), tmp_path, seed=5, count=300) == 300


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 47), st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12), max_size=6))
def test_random_fields_never_raise(tmp_path_factory: pytest.TempPathFactory,
                                   replaced: dict[int, str]) -> None:
    """A good record with some of its fields replaced by anything."""
    cells = record(1, pe="mpi", slots=8).rstrip("\n").split(":")
    for index, text in replaced.items():
        if index < len(cells):
            cells[index] = text
    path = tmp_path_factory.mktemp("sge") / "accounting"
    path.write_text(":".join(cells) + "\n")
    check_items(list(parse(path, IngestOptions())), 1)


@settings(max_examples=100, deadline=None)
@given(job=st.integers(1, 10**9), slots=st.integers(1, 10**5),
       wallclock=st.floats(0, 10**7, allow_nan=False),
       words=st.lists(st.text(alphabet=st.characters(
           blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters=":#"),
           min_size=1, max_size=12), min_size=4, max_size=4))
def test_any_record_is_told_as_grid_engine_accounting(
        tmp_path_factory: pytest.TempPathFactory, job: int, slots: int, wallclock: float,
        words: list[str]) -> None:
    """``advise walltime`` tells an accounting file from its first record, past the
    ``#`` header, whatever its host, job name, parallel environment and category."""
    from perfpredict.ingest.registry import sniff_format

    host, name, pe, category = words
    path = write(tmp_path_factory.mktemp("sge"), record(
        job, host=host, name=name, pe=pe, slots=slots, wallclock=wallclock,
        category=category))
    assert sniff_format(path) == "sge"
