"""Slurm's job completion log (jobcomp/filetxt): the real lines quoted in FORMATS.md,
lines written here in the format jobcomp_filetxt.c prints, damaged copies, and the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.records import BadRecord, RunRecord, Skipped
from perfpredict.ingest.registry import sniff_format
from perfpredict.ingest.slurm_jobcomp import KEYS, fields_of, parse, parse_batches
from perfpredict.store.queries import iter_runs
from tests.conftest import shared_path
from tests.ingest._mutate import check_items, survives_mutations


def sample() -> Path:
    return shared_path("logs", "slurm", "jobcomp-filetxt-quoted-lines.log")


def by_line(zone: str = "UTC") -> dict[int, RunRecord]:
    items = list(parse(sample(), IngestOptions(timezone=zone)))
    assert all(isinstance(i, RunRecord) for i in items), items
    return {i.line_no: i for i in items}  # type: ignore[misc]


def line(job_id: int, *, name: str = "lulesh", state: str = "COMPLETED",
         start: str = "2024-03-01T10:00:00", end: str = "2024-03-01T11:00:00",
         extra: str = "") -> str:
    """One record as Slurm 23.02's jobcomp_filetxt.c prints it (trailing blank too)."""
    return (f"JobId={job_id} UserId=ana(1001) GroupId=hpc(100) Name={name} JobState={state} "
            f"Partition=cpu TimeLimit=120 StartTime={start} EndTime={end} "
            f"NodeList=n[001-004] NodeCnt=4 ProcCnt=512 WorkDir=/home/ana/runs "
            f"ReservationName= Tres=cpu=512,mem=1000G,node=4,billing=512 Account=phys "
            f"QOS=normal WcKey=* Cluster=hawk SubmitTime=2024-03-01T09:00:00 "
            f"EligibleTime=2024-03-01T09:00:00{extra} DerivedExitCode=0:0 ExitCode=0:0 \n")


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "slurm_jobcomp.log"
    path.write_text("".join(lines))
    return path


def test_real_lines_of_three_slurm_versions() -> None:
    runs = by_line()
    alex = runs[2]  # Slurm 23+: Tres=, a GPU, a failed job
    assert (alex.key, alex.system, alex.job_id, alex.app) == (":2293679@1736635514", "alex", "2293679",
                                                              "run.sh")
    assert (alex.state, alex.exit_code, alex.censored) == ("FAILED", 2, False)
    assert (alex.nodes, alex.gpus, alex.runtime_s) == (1, 1, 2.0)
    assert alex.requested_walltime_s == 1440 * 60.0  # minutes
    assert (alex.user, alex.account, alex.partition) == ("btr0104h", "btr0", "a100")
    assert alex.extra is not None and (alex.extra["cpus"], alex.extra["qos"]) == (16, "normal")
    brc = runs[1]  # Slurm 18: Gres= (not a TRES list: no GPUs read from it)
    assert (brc.state, brc.nodes, brc.gpus, brc.runtime_s) == ("COMPLETED", 1, None, 7.0)
    assert brc.requested_walltime_s == 2880 * 60.0
    cancelled = runs[3]  # NodeList=(null) NodeCnt=0, TimeLimit=UNLIMITED, EligibleTime=unknown
    assert (cancelled.state, cancelled.nodes, cancelled.requested_walltime_s) == (
        "CANCELLED", None, None)
    edited = runs[4]  # its author cut the tail: no Cluster, ExitCode or SubmitTime
    assert (edited.system, edited.nodes, edited.exit_code, edited.submit_epoch_s) == (
        None, 4, None, None)
    assert edited.runtime_s == 62 * 60 + 27.0


def test_local_times_are_read_in_the_time_zone() -> None:
    """jobcomp writes slurmctld's local time; Berkeley's summer time is UTC-7."""
    utc, pacific = by_line()[1], by_line("America/Los_Angeles")[1]
    assert pacific.start_epoch_s is not None and utc.start_epoch_s is not None
    assert pacific.start_epoch_s - utc.start_epoch_s == 7 * 3600
    assert pacific.runtime_s == utc.runtime_s == 7.0


def test_a_job_across_the_autumn_clock_change_runs_forward(tmp_path: Path) -> None:
    """jobcomp has no Elapsed: its runtime is End - Start, so an End in the repeated hour
    read as its first occurrence made a 20-minute job end before it started (refused)."""
    path = write(tmp_path, line(8, start="2024-10-27T02:50:00", end="2024-10-27T02:10:00"),
                 line(9, start="2024-03-31T02:30:00", end="2024-03-31T03:10:00"))
    run, bad = parse(path, IngestOptions(timezone="Europe/Berlin"))
    assert isinstance(run, RunRecord) and run.runtime_s == 1200.0
    assert isinstance(bad, BadRecord) and bad.line_no == 2
    assert bad.reason.startswith("StartTime '2024-03-31T02:30:00' does not exist in "
                                 "Europe/Berlin")
    assert bad.reason.endswith("with --timezone")  # no sacct export to redo


def test_names_with_blanks_and_equals_signs_stay_whole(tmp_path: Path) -> None:
    (run,) = parse(write(tmp_path, line(7, name="my run a=b c")), IngestOptions())
    assert isinstance(run, RunRecord)
    assert (run.app, run.state, run.nodes) == ("my run a=b c", "COMPLETED", 4)
    assert fields_of(line(7, name="x WorkDir=y"))["Name"] == "x"  # a key Slurm writes splits


def test_array_task_and_het_component_ids(tmp_path: Path) -> None:
    path = write(tmp_path, line(101, extra=" ArrayJobId=100 ArrayTaskId=3"),
                 line(201, extra=" HetJobId=200 HetJobOffset=1"),
                 line(301, extra=" HetJobId=0 HetJobOffset=0"))
    array, het, plain = parse(path, IngestOptions())
    assert isinstance(array, RunRecord) and isinstance(het, RunRecord)
    assert array.extra is not None and het.extra is not None and isinstance(plain, RunRecord)
    assert (array.extra["slurm_job_id"], array.extra["array_task_id"]) == ("100_3", 3)
    assert (het.extra["het_job_id"], het.extra["het_job_offset"]) == ("200", 1)
    assert "slurm_job_id" not in (plain.extra or {})  # HetJobId=0: not a het job
    # keyed as sacct's JobID shows them, and by their SubmitTime
    assert [(r.job_id, r.key) for r in (array, het, plain)] == [
        ("101", ":100_3@1709283600"), ("201", ":200+1@1709283600"), ("301", ":301@1709283600")]


def test_a_requeued_job_is_its_last_line(tmp_path: Path) -> None:
    path = write(tmp_path,
                 line(5, state="NODE_FAIL", end="2024-03-01T10:10:00"),
                 line(6),
                 line(5, start="2024-03-01T12:00:00", end="2024-03-01T12:30:00"))
    items = list(parse_batches(path, IngestOptions()))
    runs = [i for i in items if isinstance(i, RunRecord)]
    assert [(r.job_id, r.state, r.runtime_s, r.line_no) for r in runs] == [
        ("6", "COMPLETED", 3600.0, 2), ("5", "COMPLETED", 1800.0, 3)]
    assert [i.n_unfinished for i in items if isinstance(i, Skipped)] == [1]


def test_a_line_without_the_keys_a_run_needs_is_bad(tmp_path: Path) -> None:
    path = write(tmp_path, line(1), "JobId=2 JobState=COMPLETED NodeCnt=1\n",
                 "2024-03-01 a syslog line\n")
    items = list(parse(path, IngestOptions()))
    assert isinstance(items[0], RunRecord)
    bad = [i for i in items if isinstance(i, BadRecord)]
    assert [b.line_no for b in bad] == [2, 3]
    assert bad[0].reason.startswith("not a Slurm jobcomp/filetxt record (no StartTime= or EndTime=)")
    assert "(no JobId= first)" in bad[1].reason


def test_an_unknown_state_is_bad_not_guessed(tmp_path: Path) -> None:
    (bad,) = parse(write(tmp_path, line(1, state="HALFDONE")), IngestOptions())
    assert isinstance(bad, BadRecord) and "unknown job state 'HALFDONE'" in bad.reason


def test_damaged_copies_never_crash(tmp_path: Path) -> None:
    assert survives_mutations(parse, sample(), tmp_path, seed=11, count=300) == 300


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=20), max_size=10))
def test_random_fields_never_raise(tmp_path_factory: pytest.TempPathFactory,
                                   values: dict[str, str]) -> None:
    text = "JobId=9 " + " ".join(f"{k}={v}" for k, v in values.items() if k != "JobId")
    path = tmp_path_factory.mktemp("jobcomp") / "log"
    path.write_text(text + "\n")
    check_items(list(parse(path, IngestOptions())), 1)


def test_a_job_in_sacct_and_in_jobcomp_is_stored_once(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sacct = tmp_path / "sacct.psv"
    sacct.write_text("JobID|JobIDRaw|Cluster|JobName|State|ElapsedRaw|NNodes|Start|End\n"
                     "5|5|hawk|lulesh|COMPLETED|3600|4|2024-03-01T10:00:00|2024-03-01T11:00:00\n")
    ingest_file(store, "sacct", sacct)
    report = ingest_file(store, "jobcomp", write(tmp_path, line(5), line(6)))
    assert (report.n_stored, report.n_duplicates) == (1, 1)
    assert sorted(r["job_id"] for r in iter_runs(store)) == ["5", "6"]


def test_the_format_is_told_from_the_first_line(tmp_path: Path) -> None:
    assert sniff_format(write(tmp_path, line(1))) == "jobcomp"


def test_cli_ingests_and_sacct_points_to_jobcomp(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, line(5, state="NODE_FAIL"), line(5), line(6, state="TIMEOUT",
                                                                     end="2024-03-01T12:00:00"))
    wrong = cli("ingest", "sacct", str(path))
    assert wrong.exit_code == 2
    assert wrong.output.strip().startswith(
        f"Error: {path}:1: this is Slurm's job completion log (jobcomp/filetxt), not sacct "
        "output; read it with 'perfpredict ingest jobcomp'")
    result = cli("ingest", "jobcomp", str(path), "--timezone", "Europe/Berlin")
    assert result.exit_code == 0, result.output
    assert "2 records, 2 stored" in result.stdout and "1 non-terminal job skipped" in result.stdout
    timeout = cli("runs", "export", "--format", "csv").stdout.splitlines()[-1]
    assert timeout.startswith("6,lulesh,hawk,") and ",TIMEOUT," in timeout
    assert ",2024-03-01T09:00:00Z,2024-03-01T11:00:00Z," in timeout  # CET is UTC+1


def test_a_store_of_jobcomp_jobs_exports_and_ingests_back(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A job cancelled before it started has no runtime in the log, and none stored: its
    export still ingests into another store, unchanged."""
    path = write(tmp_path, line(1), line(2, state="CANCELLED", start="Unknown"))
    assert cli("ingest", "jobcomp", str(path)).exit_code == 0
    first = cli("runs", "export", "--format", "csv").stdout
    export = tmp_path / "export.csv"
    export.write_text(first)
    copy = f"sqlite:///{tmp_path / 'copy.db'}"
    from perfpredict.cli.app import app

    runner = CliRunner()
    again = runner.invoke(app, ["--db", copy, "ingest", "csv", str(export)])
    assert again.exit_code == 0, again.output
    assert "2 records, 2 stored" in again.stdout
    assert runner.invoke(app, ["--db", copy, "runs", "export", "--format", "csv"]
                         ).stdout == first


def test_messages_name_the_keys_of_the_file(tmp_path: Path) -> None:
    (bad,) = parse(write(tmp_path, line(1).replace("TimeLimit=120", "TimeLimit=xx")
                         .replace("NodeCnt=4", "NodeCnt=-3")), IngestOptions())
    assert isinstance(bad, BadRecord)
    assert "NodeCnt" in bad.reason or "TimeLimit" in bad.reason
    assert "NNodes" not in bad.reason and "TimelimitRaw" not in bad.reason
