"""Grid Engine accounting: the real SGE and UGE records of FORMATS.md §6, records written
here in accounting(5)'s layout (parallel jobs under tight integration, array tasks,
h_rt kills), damaged copies, and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.grid_engine import parse, split_record
from perfpredict.ingest.pipeline import LAST_LINE_LEFT
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.store import open_store
from perfpredict.store.queries import export_runs
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


def stored(folder: Path, text: str) -> tuple[list[str], list[dict[str, object]]]:
    """The warnings of ``text`` ingested as a Grid Engine log (a file of the same name
    in each ``folder``), and the runs a fresh store then holds."""
    folder.mkdir()
    log = folder / "accounting"
    log.write_text(text, encoding="utf-8")
    with open_store(folder / "store.db") as store:
        report = ingest_file(store, "sge", log, IngestOptions(system="site"))
        export = export_runs(store)
        return report.warnings, [dict(zip(export.columns, row, strict=True))
                                 for row in export.rows]


def cut_inside(data: st.DataObject, line: str) -> int:
    """A byte of ``line`` past its first, drawn as a field and a place in it, so that
    each of a record's 45 to 74 fields is as likely as the others (the first ones, whose
    loss shifts the rest, are few of its bytes)."""
    starts = [0, *(at + 1 for at, char in enumerate(line) if char == ":")]
    field = data.draw(st.integers(0, len(starts) - 1), label="field")
    end = starts[field + 1] if field + 1 < len(starts) else len(line)
    return max(1, data.draw(st.integers(starts[field], end - 1), label="cut at"))


@settings(max_examples=60, deadline=None)
@given(flavour=st.sampled_from(["sge", "uge"]), head=st.booleans(), data=st.data())
def test_a_log_cut_inside_its_first_or_last_record_is_read_as_a_rotation_or_a_live_log(
        tmp_path_factory: pytest.TempPathFactory, flavour: str, head: bool,
        data: st.DataObject) -> None:
    """The real logs cut at any byte of their first record, as logrotate's copytruncate
    leaves the log (the record's rest its line 1), or of their last, as a log still being
    written ends. A rest that lacked the record's first fields read as one with its
    fields shifted (a task record of job "sge", dropped without a word), or was refused
    with the whole log: it is left with the warning the other schedulers' logs give, and
    the log stores what its line 2 on does. A cut inside the queue's name leaves every
    field in its place, so that rest reads as its record with the name's rest."""
    text = sample(flavour).read_text(encoding="utf-8")
    folder = tmp_path_factory.mktemp("cut")
    if not head:  # the last line has no newline yet: left for the next ingest
        start = text.rindex("\n", 0, len(text) - 1) + 1
        cut = start + cut_inside(data, text[start:-1])
        assert stored(folder / "cut", text[:cut]) == (
            [LAST_LINE_LEFT], stored(folder / "before", text[:start])[1])
        return
    line_end = text.index("\n")
    cut = cut_inside(data, text[:line_end])
    warnings, runs_stored = stored(folder / "cut", text[cut:])
    qname = text[:text.index(":")]
    if cut > len(qname):
        assert warnings == [
            "line 1 is not a record of Grid Engine, where line 2 and those after it are: it "
            "is the rest of a record the rotated file holds (logrotate's copytruncate emptied "
            "the log while that record was written), left unread"]
        assert runs_stored == stored(folder / "after", text[line_end + 1:])[1]
        return
    assert warnings == []
    whole = stored(folder / "whole", text)[1]
    first_job = split_record(text[:line_end])["job_number"]
    for run in whole:
        if run["job_id"] == first_job:
            run["partition"] = qname[cut:] or None
    assert runs_stored == whole


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
