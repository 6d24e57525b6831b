from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.errors import BadInputError
from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest._text.lines import WIDE_TEXT_FIX, wide_text
from perfpredict.ingest.fields import FieldError, duration_s, memory_bytes
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.ingest.sacct import XDMOD_COLUMNS, parse
from perfpredict.ingest.sacct import rows as sacct_rows
from perfpredict.store.queries import iter_runs, run_stats
from tests.conftest import on_a_terminal, shared_path
from tests.ingest._mutate import check_items, survives_mutations


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


def runs(path: Path, **options: object) -> list[RunRecord]:
    items = list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]
    assert all(isinstance(i, RunRecord) for i in items), items
    return items  # type: ignore[return-value]


def write(tmp_path: Path, text: str, name: str = "sacct.psv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


# --- the real XDMoD and slurm2sql samples, values checked by hand in the files -----------

def test_xdmod_headerless_dump_uses_the_xdmod_column_order() -> None:
    timeout, cancelled, completed, degenerate = runs(
        shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv"))
    assert (timeout.job_id, timeout.system, timeout.key) == ("4103947", "ub-hpc",
                                                            ":4103947@1435327020")
    assert (timeout.state, timeout.censored, timeout.exit_code) == ("TIMEOUT", True, 1)
    assert (timeout.nodes, timeout.runtime_s, timeout.requested_walltime_s) == (32, 259200.0, 259200.0)
    assert timeout.submit_epoch_s == utc("2015-06-26T13:57:00")
    assert timeout.start_epoch_s == utc("2015-06-28T02:55:50")
    assert timeout.end_epoch_s == utc("2015-07-01T02:55:50")
    assert (timeout.app, timeout.user, timeout.account, timeout.partition) == (
        "1AbC-2-3", "unknown", "anon", "general-compute")
    assert timeout.extra is not None and timeout.extra["cpus"] == 256

    assert (cancelled.state, cancelled.censored, cancelled.nodes) == ("CANCELLED", False, 3)
    assert cancelled.runtime_s == 2 * 86400 + 22 * 3600 + 3 * 60 + 4
    assert cancelled.extra is not None
    assert cancelled.extra["state_detail"] == "CANCELLED by 102216"

    assert (completed.state, completed.nodes, completed.runtime_s) == ("COMPLETED", 4, 50449.0)
    assert completed.requested_walltime_s == 14 * 3600 + 20 * 60

    # 0 nodes and 0 CPUs: never ran; gres/gpu=2 sits in the AllocTRES column (23rd).
    assert (degenerate.nodes, degenerate.runtime_s, degenerate.gpus) == (None, 0.0, 2)
    assert degenerate.requested_walltime_s is None
    assert degenerate.line_no == 4


def test_timezone_option_reads_local_times() -> None:
    (first, *_) = runs(shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv"),
                       timezone="America/New_York")
    assert first.submit_epoch_s == utc("2015-06-26T13:57:00") + 4 * 3600  # EDT
    assert first.extra is not None and first.extra["timezone"] == "America/New_York"


def dst_variant(tmp_path: Path, start: str, end: str, elapsed: str) -> Path:
    """The real XDMoD dump's completed job (line 3) run at other local times."""
    cells = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv").read_text(
        encoding="utf-8").splitlines()[2].split("|")
    cells[XDMOD_COLUMNS.index("start")], cells[XDMOD_COLUMNS.index("end")] = start, end
    cells[XDMOD_COLUMNS.index("elapsed")] = elapsed
    return write(tmp_path, "|".join(cells) + "\n")


def test_a_job_across_the_hour_clocks_go_back_over_is_read(tmp_path: Path) -> None:
    """Started 02:50 summer time (00:50 UTC), ended 02:10 winter time (01:10 UTC): the
    End read as the first 02:10 preceded the Start, and the file was refused."""
    path = dst_variant(tmp_path, "2024-10-27T02:50:00", "2024-10-27T02:10:00", "00:20:00")
    (job,) = runs(path, timezone="Europe/Berlin")
    assert (job.start_epoch_s, job.end_epoch_s) == (utc("2024-10-27T00:50:00"),
                                                    utc("2024-10-27T01:10:00"))
    assert job.runtime_s == 1200.0


def test_a_time_clocks_skipped_says_the_time_zone_is_wrong(tmp_path: Path) -> None:
    """No clock in Berlin showed 02:30 on 2024-03-31: the log is in another zone."""
    path = dst_variant(tmp_path, "2024-03-31T02:30:00", "2024-03-31T03:10:00", "00:40:00")
    (bad,) = list(parse(path, IngestOptions(timezone="Europe/Berlin")))
    assert isinstance(bad, BadRecord) and bad.line_no == 1
    assert bad.reason.startswith("Start '2024-03-31T02:30:00' does not exist in Europe/Berlin")
    assert bad.reason.endswith("with --timezone")
    (job,) = runs(path, timezone="UTC")
    assert job.runtime_s == 2400.0


_BERLIN = ZoneInfo("Europe/Berlin")


@settings(max_examples=300, deadline=None)
@given(start=st.integers(utc("2024-10-26T20:00:00"), utc("2024-10-27T04:00:00")),
       runtime=st.integers(0, 4 * 3600))
def test_local_times_around_a_clock_change_never_refuse_a_job(start: int, runtime: int) -> None:
    """Property: any job written in local time across the autumn change reads with its
    End not before its Start, each time an instant its wall-clock time names (so exactly
    when it names only one)."""
    def wall_clock(epoch: int) -> str:
        return datetime.fromtimestamp(epoch, _BERLIN).strftime("%Y-%m-%dT%H:%M:%S")

    end = start + runtime
    _, start_s, end_s = sacct_rows.times({"start": wall_clock(start), "end": wall_clock(end)},
                                         _BERLIN)
    assert start_s is not None and end_s is not None and end_s >= start_s
    for read, true in ((start_s, start), (end_s, end)):
        assert read in {t for t in (true - 3600, true, true + 3600)
                        if wall_clock(t) == wall_clock(true)}


@settings(max_examples=300, deadline=None)
@given(start=st.integers(utc("2024-10-26T22:00:00"), utc("2024-10-27T02:00:00")),
       runtime=st.integers(0, 3 * 3600))
def test_local_times_around_a_clock_change_with_elapsed_are_the_instants_they_were(
        start: int, runtime: int) -> None:
    """Property: with the job's Elapsed, its Start and End are the instants they were,
    also in the hour met twice: a job from 02:20 summer time to 02:40 winter time that
    ran 80 minutes was read as ending an hour early (the first 02:40). Only a job whose
    Start and End are both in that hour cannot be told from one an hour earlier."""
    def wall_clock(epoch: int) -> str:
        return datetime.fromtimestamp(epoch, _BERLIN).strftime("%Y-%m-%dT%H:%M:%S")

    def met_twice(epoch: int) -> bool:
        return wall_clock(epoch) in (wall_clock(epoch - 3600), wall_clock(epoch + 3600))

    end = start + runtime
    row = {"start": wall_clock(start), "end": wall_clock(end), "elapsedraw": str(runtime)}
    start_s, end_s = sacct_rows.times(row, _BERLIN)[1:]
    assert end_s is not None and start_s is not None and end_s - start_s == runtime
    if not (met_twice(start) and met_twice(end)):
        assert (start_s, end_s) == (start, end)


def test_array_task_kept_and_pending_remainders_skipped_silently() -> None:
    items = list(parse(shared_path("logs", "slurm", "xdmod-sacct-accounting-logs-with-job-arrays.psv"),
                       IngestOptions()))
    (task,) = items
    assert isinstance(task, RunRecord)
    assert task.job_id == "4103947" and task.line_no == 1
    assert task.extra is not None
    assert (task.extra["array_job_id"], task.extra["array_task_id"]) == ("4103947", 100)
    assert task.extra["slurm_job_id"] == "4103947_100"


def test_unfinished_jobs_are_not_runs_and_not_errors() -> None:
    assert list(parse(shared_path("logs", "slurm", "xdmod-sacct-non-ended-job-state.psv"),
                      IngestOptions())) == []


def test_unknown_states_are_bad_records_with_their_lines() -> None:
    items = list(parse(shared_path("logs", "slurm", "xdmod-sacct-unknown-job-state.psv"),
                       IngestOptions()))
    assert [(i.line_no, "unknown job state 'FOO'" in i.reason) for i in items  # type: ignore[union-attr]
            ] == [(1, True), (2, False)]
    assert all(isinstance(i, BadRecord) for i in items)


def test_utf8_job_name() -> None:
    (run,) = runs(shared_path("logs", "slurm", "xdmod-sacct-utf8-multibyte-chars.psv"))
    assert run.app == "aàb"


@pytest.mark.parametrize("name", ["slurm2sql-test-data1.psv", "slurm2sql-test-data2.psv"])
def test_slurm2sql_header_and_steps_fold_into_jobs(name: str) -> None:
    jupyter, interactive = runs(shared_path("logs", "slurm", name))
    assert (jupyter.job_id, jupyter.key, jupyter.system) == ("43974388", ":43974388@1564612153",
                                                            None)
    assert (jupyter.state, jupyter.runtime_s, jupyter.requested_walltime_s) == (
        "CANCELLED", 3 * 3600 + 33 * 60 + 25.0, 5 * 86400.0)
    assert jupyter.max_rss_bytes == 231092 * 1024  # .batch step, larger than .0's 1156K
    assert (jupyter.total_ranks, jupyter.ranks_per_node, jupyter.nodes) == (1, 1.0, 1)
    assert jupyter.io_bytes is None  # no TRESUsage columns: unknown, not 0
    assert interactive.end_epoch_s is None  # End=Unknown
    assert interactive.max_rss_bytes == 1092 * 1024
    assert interactive.line_no == 4 + 1


# --- folding, ids and options on small files written here --------------------------------

STEPS_HEADER = ("JobID|JobIDRaw|JobName|State|Elapsed|Timelimit|NNodes|NCPUS|NTasks|MaxRSS|"
                "AllocTRES|ReqTRES|TRESUsageInTot|TRESUsageOutTot|Comment|")


def test_steps_give_ranks_rss_io_and_alloc_tres_gives_gpus(tmp_path: Path) -> None:
    # -p output (trailing '|') with CRLF line ends.
    text = "\r\n".join([
        STEPS_HEADER,
        "100|100|lmp_run|COMPLETED|01:00:00|02:00:00|4|512|||gres/gpu=8,gres/gpu:a100=8,node=4|"
        "gres/gpu=16|||lammps|",
        "100.batch|100.batch|batch|COMPLETED|01:00:00||1|128|1|2G|||cpu=00:01:00,fs/disk=1048576|"
        "fs/disk=0||",
        "100.extern|100.extern|extern|COMPLETED|01:00:00||4|512|4|1M||||||",
        "100.0|100.0|lmp|COMPLETED|00:59:00||4|512|128|3.5G|||fs/disk=2M,mem=3.5G|fs/disk=1.5M||",
    ]) + "\r\n"
    (run,) = runs(write(tmp_path, text))
    assert (run.total_ranks, run.ranks_per_node, run.nodes) == (128, 32.0, 4)
    assert run.max_rss_bytes == 3.5 * 1024**3
    assert run.io_bytes == 1048576 + 2 * 1024**2 + 1.5 * 1024**2
    assert run.gpus == 8  # AllocTRES, gres/gpu not added to gres/gpu:a100; ReqTRES ignored
    assert (run.runtime_s, run.requested_walltime_s) == (3600.0, 7200.0)


def test_het_job_components_are_separate_runs(tmp_path: Path) -> None:
    text = "\n".join([
        "JobID|JobIDRaw|JobName|State|Elapsed|NNodes|NTasks",
        "176+0|176|het|COMPLETED|00:10:00|2|",
        "176+0.batch|176.batch|batch|COMPLETED|00:10:00|1|1",
        "176+1|177|het|COMPLETED|00:10:00|3|",
        "176+1.0|177.0|solver|COMPLETED|00:09:00|3|96",
    ])
    first, second = runs(write(tmp_path, text))
    # keyed as JobID shows them, which an export without JobIDRaw gives too (key_id)
    assert (first.job_id, first.key, first.total_ranks) == ("176", ":176+0", 1)
    assert (second.job_id, second.key, second.total_ranks, second.ranks_per_node) == (
        "177", ":176+1", 96, 32.0)
    assert second.extra is not None
    assert (second.extra["het_job_id"], second.extra["het_job_offset"]) == ("176", 1)


def test_running_job_steps_and_pending_arrays_vanish_without_errors(tmp_path: Path) -> None:
    text = "\n".join([
        "JobID|JobIDRaw|JobName|State|Elapsed",
        "7|7|sim|RUNNING|01:00:00",
        "7.batch|7.batch|batch|RUNNING|01:00:00",
        "8_[1-3,5%2]|8|sim|PENDING|00:00:00",
        "9|9|sim|COMPLETED|00:00:42",
    ])
    (run,) = runs(write(tmp_path, text))
    assert (run.job_id, run.runtime_s) == ("9", 42.0)


def test_requeued_incarnations_each_become_a_record(tmp_path: Path) -> None:
    # sacct -D repeats the job id, one record per incarnation under one key; the store
    # keeps the later (store.writer.LATER_INCARNATION, held through ingest below).
    text = "JobID|JobIDRaw|State|Elapsed\n5|5|NODE_FAIL|00:01:00\n5|5|COMPLETED|00:30:00\n"
    first, second = runs(write(tmp_path, text))
    assert (first.state, second.state, first.key, second.key) == ("NODE_FAIL", "COMPLETED", ":5", ":5")


def test_pipe_in_a_field_is_rejected_with_its_line_not_mis_shifted(tmp_path: Path) -> None:
    text = "JobID|JobIDRaw|JobName|State|Elapsed\n1|1|a|COMPLETED|00:01\n2|2|a|b|COMPLETED|00:02\n3|3|c|FAILED|00:03\n"
    # Runs wait in the open-job window for their steps, so order by line to compare.
    items = sorted(parse(write(tmp_path, text), IngestOptions()), key=lambda i: i.line_no or 0)
    assert [type(i).__name__ for i in items] == ["RunRecord", "BadRecord", "RunRecord"]
    bad = items[1]
    assert isinstance(bad, BadRecord) and bad.line_no == 3
    assert "expected 5 fields, found 6" in bad.reason and "--delimiter" in bad.reason


def test_custom_delimiter_keeps_pipes_in_names(tmp_path: Path) -> None:
    text = "JobID^|^JobIDRaw^|^JobName^|^State^|^Elapsed\n1^|^1^|^a|b^|^COMPLETED^|^00:01\n"
    (run,) = runs(write(tmp_path, text))
    assert run.app == "a|b"


def test_columns_option_for_headerless_dumps(tmp_path: Path) -> None:
    path = write(tmp_path, "42|lulesh|COMPLETED|1-00:00:00|4\n")
    (run,) = runs(path, columns=["JobIDRaw", "JobName", "State", "Elapsed", "NNodes"])
    assert (run.job_id, run.app, run.runtime_s, run.nodes) == ("42", "lulesh", 86400.0, 4)


def test_columns_given_as_one_text_are_refused_saying_how_to_split_it(tmp_path: Path) -> None:
    """``IngestOptions(columns="JobIDRaw,...")``, the text ``--columns`` takes, was read
    one letter a column and the file refused for lacking the JobID and State it named;
    a number among the names was an AttributeError. Nothing is stored from either."""
    path = write(tmp_path, "42|lulesh|COMPLETED|1-00:00:00|4\n")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    text = "JobIDRaw,JobName,State,Elapsed,NNodes"
    with pytest.raises(BadInputError, match=r"^columns must be a list of the file's field "
                       r"names in its order, as \['JobID', .*\], not the text "
                       r"'JobIDRaw,JobName,State,Elapsed,NNodes'; "
                       r"'JobIDRaw,JobName,State,Elapsed,NNodes'\.split\(','\) makes a "
                       r"list of it$"):
        ingest_file(url, "sacct", path, IngestOptions(columns=text))  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=r"^columns must be a list .*, not the text "
                       r"'JobIDRaw'$"):
        ingest_file(url, "sacct", path, IngestOptions(columns="JobIDRaw"))  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match=r"^columns must be a list of the file's field "
                       r"names in its order, each a text, .*, not \['JobIDRaw', 3\]$"):
        ingest_file(url, "sacct", path, IngestOptions(columns=["JobIDRaw", 3]))  # type: ignore[list-item]
    assert run_stats(url)["n_runs"] == 0
    assert ingest_file(url, "sacct", path, IngestOptions(columns=text.split(","),
                                                          system="box")).n_stored == 1


def test_cli_refuses_a_header_that_names_a_field_twice(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Which of two Submit columns holds the submit time is anyone's guess (the column
    and the record readers guessed differently): the file is refused at its header."""
    path = write(tmp_path, "Submit|JobIDRaw|State|Elapsed|submit\n"
                           "7|7|COMPLETED|00:01|2019-07-31T22:29:13\n")
    result = cli("ingest", "sacct", str(path))
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: the header names submit more than once")
    assert "export each field once" in line
    assert "Traceback" not in result.output
    headerless = write(tmp_path, "7|COMPLETED|00:01|2\n", "headerless.psv")
    (bad,) = list(parse(headerless, IngestOptions(
        columns=["JobIDRaw", "State", "Elapsed", "jobidraw"])))
    assert isinstance(bad, BadRecord) and bad.line_no == 1
    assert bad.reason.startswith("--columns names jobidraw more than once")


def test_dumps_joined_with_their_headers_are_read_as_each_alone(tmp_path: Path) -> None:
    """`sacct -P ... >> month.psv` every night (or `cat day*.psv`) repeats the header
    line: it was refused as a job whose id 'JobIDRaw' is not a Slurm job id, and the
    month stored nothing. A header repeated as the first is skipped."""
    day1 = shared_path("logs", "slurm", "slurm2sql-test-data1.psv").read_text()
    day2 = day1.replace("43974388", "53974388").replace("43977780", "53977780")
    header = day1.splitlines()[0]  # as typed in --format: again in other letter case
    joined = write(tmp_path, day1 + day2 + header.upper() + "\n")
    alone = runs(write(tmp_path, day1, "day1.psv"), system="triton") + runs(
        write(tmp_path, day2, "day2.psv"), system="triton")
    assert len(alone) == 4
    read = runs(joined, system="triton")
    assert [(r.job_id, r.app, r.runtime_s, r.ranks_per_node, r.max_rss_bytes) for r in read] == [
        (r.job_id, r.app, r.runtime_s, r.ranks_per_node, r.max_rss_bytes) for r in alone]


def test_cli_refuses_dumps_of_other_fields_joined_in_one_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """slurm2sql's two real dumps were made with different --format lists (51 and 50
    fields): joined, the second's lines read by the first's columns would be refused one
    by one or, of as many fields, read into the wrong ones. The file is refused at the
    second header, under skip too, storing nothing."""
    first = shared_path("logs", "slurm", "slurm2sql-test-data1.psv").read_text()
    second = shared_path("logs", "slurm", "slurm2sql-test-data2.psv").read_text()
    path = write(tmp_path, first + second.replace("4397", "5397"))
    line_no = len(first.splitlines()) + 1
    result = cli("ingest", "sacct", str(path), "--system", "triton")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: {path}:{line_no}: a header line unlike the first one: the file joins "
        "dumps of different sacct --format lists (or of -p and -P); ingest each dump as a "
        "file of its own; nothing from this file was stored; --on-error skip goes on with "
        "the other files and keeps this one as a reject"]
    skipped = cli("ingest", "sacct", str(path), "--system", "triton", "--on-error", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert "0 stored, 0 already in the store, 0 attached to stored jobs, 1 rejected" in (
        skipped.stdout)
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 0
    # sacct -p (a '|' ending every line) after -P: the header names the same fields
    trailing = "".join(line + "|\n" for line in first.splitlines())
    mixed = write(tmp_path, first + trailing.replace("4397", "5397"), "mixed.psv")
    result = cli("ingest", "sacct", str(mixed), "--system", "triton")
    assert result.exit_code == 2
    assert f"{mixed}:{line_no}: a header line unlike the first one" in result.stderr


def test_orphan_step_is_a_bad_record(tmp_path: Path) -> None:
    text = "JobID|JobIDRaw|State|Elapsed\n9.0|9.0|COMPLETED|00:01\n"
    (bad,) = list(parse(write(tmp_path, text), IngestOptions()))
    assert isinstance(bad, BadRecord) and bad.line_no == 2 and "no job row 9" in bad.reason


@pytest.mark.parametrize(("app_from", "expected"), [
    ("jobname", "lmp_in.rhodo_n4"), ("comment", "LAMMPS"), ("regex:^(\\w+?)_", "lmp"),
    ("regex:^nomatch(x)", "lmp_in.rhodo_n4"),
])
def test_app_from(tmp_path: Path, app_from: str, expected: str) -> None:
    text = "JobIDRaw|JobName|Comment|State|Elapsed\n1|lmp_in.rhodo_n4|LAMMPS|COMPLETED|00:01\n"
    (run,) = runs(write(tmp_path, text), app_from=app_from)
    assert run.app == expected


@pytest.mark.parametrize("options", [{"timezone": "Mars/Olympus"}, {"app_from": "regex:("},
                                     {"app_from": "exe"}])
def test_bad_options_are_usage_errors(tmp_path: Path, options: dict[str, str]) -> None:
    path = write(tmp_path, "JobIDRaw|State\n1|COMPLETED\n")
    with pytest.raises(BadInputError):
        list(parse(path, IngestOptions(**options)))  # type: ignore[arg-type]


@pytest.mark.parametrize(("row", "reason"), [
    ("1|COMPLETED|25:61:00|2024-01-01T00:00:00|0:0", "out of range"),
    ("1|COMPLETED|00:01|2024-13-01T00:00:00|0:0", "not a valid calendar date"),
    ("1|COMPLETED|00:01|yesterday|0:0", "is not a time like"),
    ("1|COMPLETED|00:01|2024-01-01T00:00:00|zero", "ExitCode"),
    ("x1|COMPLETED|00:01|2024-01-01T00:00:00|0:0", "not a Slurm job id"),
    ("1|COMPLETED|-00:01|2024-01-01T00:00:00|0:0", "not a duration"),
    ("1|COMPLETED|00:01|2024-01-01T00:00:00|0:0|-1", "NCPUS '-1' is negative; a count is zero"),
])
def test_bad_values_name_the_field(tmp_path: Path, row: str, reason: str) -> None:
    header = "JobIDRaw|State|Elapsed|Submit|ExitCode" + ("|NCPUS" if row.count("|") == 5 else "")
    path = write(tmp_path, header + "\n" + row + "\n")
    (bad,) = list(parse(path, IngestOptions()))
    assert isinstance(bad, BadRecord) and bad.line_no == 2 and reason in bad.reason


# --- properties and mutations -------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(days=st.integers(0, 400), hours=st.integers(0, 23), minutes=st.integers(0, 59),
       seconds=st.integers(0, 59), millis=st.integers(0, 999))
def test_durations_round_trip(days: int, hours: int, minutes: int, seconds: int, millis: int) -> None:
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    assert duration_s("Elapsed", f"{days}-{hours:02d}:{minutes:02d}:{seconds:02d}") == total
    if days == 0:
        assert duration_s("Elapsed", f"{hours:02d}:{minutes:02d}:{seconds:02d}") == total
    if days == hours == 0:
        assert duration_s("TotalCPU", f"{minutes:02d}:{seconds:02d}.{millis:03d}") == pytest.approx(
            minutes * 60 + seconds + millis / 1000)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20))
def test_field_readers_raise_only_field_errors(text: str) -> None:
    for reader in (duration_s, memory_bytes):
        try:
            value = reader("f", text)
        except FieldError:
            continue
        assert value is None or value >= 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                               blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                        max_size=25), min_size=1, max_size=30))
def test_random_xdmod_lines_never_raise(tmp_path_factory: pytest.TempPathFactory,
                                        cells: list[str]) -> None:
    path = tmp_path_factory.mktemp("h") / "fuzz.psv"
    path.write_text("|".join(cells) + "\n", encoding="utf-8")
    try:
        items = list(parse(path, IngestOptions()))
    except BadInputError as exc:  # NUL, "|", NUL, newline: the bytes of UTF-16 text
        assert str(exc).endswith(WIDE_TEXT_FIX) and wide_text(path.read_bytes()[:4]), exc
        return
    check_items(items, 1)
    assert len(XDMOD_COLUMNS) == 26


@pytest.mark.parametrize("name", [
    "xdmod-sacct-accounting-logs.psv", "xdmod-sacct-accounting-logs-with-job-arrays.psv",
    "slurm2sql-test-data1.psv", "xdmod-sacct-non-ended-job-state.psv",
])
def test_mutated_real_logs_never_raise(tmp_path: Path, name: str) -> None:
    assert survives_mutations(parse, shared_path("logs", "slurm", name), tmp_path,
                              seed=len(name), count=150) == 150


# --- through the pipeline and the CLI -----------------------------------------------------

def test_ingest_is_idempotent_across_files(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    xdmod = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    report = ingest_file(store, "sacct", xdmod)
    assert (report.n_records, report.n_stored, report.new_systems) == (4, 4, ["ub-hpc"])
    assert ingest_file(store, "sacct", xdmod).already_ingested
    # The same job (ub-hpc|:4103947) in another file is recognised by its natural key.
    again = ingest_file(store, "sacct", shared_path("logs", "slurm", "xdmod-sacct-utf8-multibyte-chars.psv"))
    assert (again.n_records, again.n_stored, again.n_duplicates) == (1, 0, 1)

    options = IngestOptions(system="triton")
    first = ingest_file(store, "sacct", shared_path("logs", "slurm", "slurm2sql-test-data1.psv"), options)
    second = ingest_file(store, "sacct", shared_path("logs", "slurm", "slurm2sql-test-data2.psv"), options)
    assert (first.n_stored, second.n_stored, second.n_duplicates) == (2, 0, 2)
    stored = {r["job_id"]: r for r in iter_runs(store)}
    assert stored["4103947"]["censored"] and stored["4103947"]["runtime_s"] == 259200.0
    assert stored["43974388"]["system"] == "triton"
    assert stored["43974388"]["max_rss_bytes"] == 231092 * 1024
    assert run_stats(store)["n_runs"] == 6


def mangled_copy(tmp_path: Path) -> Path:
    lines = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv").read_text().splitlines()
    lines[2] = lines[2].replace("anonjobname", "anon|jobname")
    path = tmp_path / "mangled.psv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_refuses_a_mangled_file_with_file_and_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = mangled_copy(tmp_path)
    result = cli("ingest", "sacct", str(path))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"Error: {path}:3: expected 26 fields, found 27")
    assert "Traceback" not in result.output
    assert cli("runs", "stats", "--format", "json").exit_code == 0


def test_cli_skip_mode_stores_the_good_jobs(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("ingest", "sacct", str(mangled_copy(tmp_path)), "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert "3 stored" in result.stdout and "rejected line 3" in result.stdout


def test_a_later_incarnation_replaces_the_stored_one_in_any_store(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The replacing upsert on SQLite and PostgreSQL alike: a requeued job's later run
    replaces the earlier one, an earlier one met later does not, and I/O bytes a Darshan
    log attached stay with the run it ran inside: not with a later incarnation, but with
    the same run met again when it has ended."""
    header = "JobID|JobIDRaw|JobName|State|ElapsedRaw|Start|End|NNodes|Cluster\n"
    first, later = (tmp_path / "first.psv", tmp_path / "later.psv")
    first.write_text(header + "7|7|wrf|NODE_FAIL|300|2024-03-02T10:00:00|2024-03-02T10:05:00|4|c\n")
    later.write_text(header + "7|7|wrf|COMPLETED|5400|2024-03-02T10:06:00|2024-03-02T11:36:00|4|c\n")
    ingest_file(store, "sacct", first)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE runs SET io_bytes = 1e9")
    report = ingest_file(store, "sacct", later)
    assert (report.n_stored, report.n_duplicates) == (1, 0)
    (run,) = iter_runs(store)
    assert (run["state"], run["runtime_s"], run["io_bytes"]) == ("COMPLETED", 5400.0, None)
    running, ended = (tmp_path / "running.psv", tmp_path / "ended.psv")
    running.write_text(header + "9|9|wrf|RUNNING|60|2024-03-02T10:00:00|Unknown|4|c\n")
    ended.write_text(header + "9|9|wrf|COMPLETED|600|2024-03-02T10:00:00|2024-03-02T10:10:00|4|c\n")
    ingest_file(store, "sacct", running, IngestOptions(require_runtime=False))
    with store.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE runs SET io_bytes = 2e9 WHERE job_id = '9'")
    ingest_file(store, "sacct", ended)
    assert {r["job_id"]: r["io_bytes"] for r in iter_runs(store)}["9"] == 2e9
    undated = tmp_path / "undated.psv"  # without Start: the file's later line
    undated.write_text("JobID|JobIDRaw|State|Elapsed|Cluster\n8|8|NODE_FAIL|00:01:00|c\n"
                       "8|8|COMPLETED|00:30:00|c\n")
    ingest_file(store, "sacct", undated)
    assert {r["job_id"]: r["state"] for r in iter_runs(store)}["8"] == "COMPLETED"
    older = tmp_path / "older.psv"  # the first dump again, as another file
    older.write_text(first.read_text() + "\n")
    assert ingest_file(store, "sacct", older).n_duplicates == 1
    assert {r["job_id"]: r["state"] for r in iter_runs(store)}["7"] == "COMPLETED"


def slurm2sql_copy(tmp_path: Path, line_no: int, damage: str) -> Path:
    """slurm2sql's real dump with its line ``line_no`` (1-based) damaged: ``cut`` short,
    or its MaxRSS made unreadable (``rss``)."""
    lines = shared_path("logs", "slurm", "slurm2sql-test-data1.psv").read_text().splitlines()
    header = lines[0].split("|")
    if damage == "cut":
        lines[line_no - 1] = lines[line_no - 1][:60]
    else:
        cells = lines[line_no - 1].split("|")
        cells[header.index("MaxRSS")] = "12QQ"
        lines[line_no - 1] = "|".join(cells)
    path = tmp_path / f"slurm2sql-{damage}-{line_no}.psv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("line_no", "damage", "reason"), [
    (4, "rss", "MaxRSS '12QQ' is not a size"),
    (3, "cut", "expected 51 fields, found 9"),
])
def test_a_job_with_a_bad_step_line_is_left_out_whole_and_named(
        cli, tmp_path: Path, line_no: int, damage: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    """A step line that cannot be read leaves its job's ranks, memory and I/O unknown:
    the job (allocation row on line 2) is not stored from its other lines, and the
    reject says which step, which job and which line."""
    path = slurm2sql_copy(tmp_path, line_no, damage)
    result = cli("ingest", "sacct", str(path), "--system", "x", "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert f"{path}: 1 record, 1 stored" in result.stdout and "1 rejected" in result.stdout
    (rejected,) = [line for line in result.stdout.splitlines() if "rejected line" in line]
    assert rejected.startswith(f"  rejected line {line_no}: {reason}")
    assert "its job 43974388, line 2, is left out with it" in rejected
    listed = cli("runs", "export", "--format", "json")
    assert [run["job_id"] for run in json.loads(listed.stdout)] == ["43977780"]


def test_a_bad_job_row_takes_its_steps_without_a_reject_each(tmp_path: Path) -> None:
    """A job row cut short is one reject: its steps belong to no run, and are not each
    reported as a step without a job row (as if the dump were reordered)."""
    path = slurm2sql_copy(tmp_path, 2, "cut")
    bad, interactive = parse(path, IngestOptions())
    assert isinstance(bad, BadRecord) and bad.line_no == 2
    assert bad.reason.startswith("expected 51 fields, found 7")
    assert isinstance(interactive, RunRecord) and interactive.job_id == "43977780"


def test_jobs_rejected_for_want_of_a_system_are_not_also_already_stored(cli) -> None:  # type: ignore[no-untyped-def]
    """slurm2sql's dump has no Cluster column: without --system, under --on-error skip,
    its two jobs are rejected. The summary said '2 already in the store' as well, of a
    store that held nothing."""
    path = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    result = cli("ingest", "sacct", str(path), "--on-error", "skip")
    assert result.exit_code == 0, result.output
    assert (f"{path}: 0 records, 0 stored, 0 already in the store, 0 attached to stored "
            "jobs, 2 rejected.") in result.stdout
    stats = json.loads(cli("runs", "stats", "--format", "json").stdout)
    assert (stats["n_runs"], stats["n_rejects"]) == (0, 2)


def test_json_summary_names_the_files_stored_before_a_refused_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Each file is stored in its own transaction, so when the second is refused the
    first stays stored: the text summary said so, --format json printed nothing."""
    good = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    bad = slurm2sql_copy(tmp_path, 4, "rss")
    result = cli("ingest", "sacct", str(good), str(bad), "--system", "x", "--format", "json")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {bad}:4: MaxRSS '12QQ'")
    (stored,) = json.loads(result.stdout)
    assert (stored["path"], stored["n_stored"]) == (str(good), 2)
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 2


def test_a_system_stored_under_a_catalog_entry_of_another_name_is_said(cli) -> None:  # type: ignore[no-untyped-def]
    """NERSC's sacct names the cluster 'perlmutter', which the catalog keeps as
    Perlmutter-GPU: the summary said nothing, and the runs were not where the name the
    admin gave said. A spelling of the same name (FRONTIER) is not worth a line."""
    dump = str(shared_path("logs", "slurm", "slurm2sql-test-data1.psv"))
    result = cli("ingest", "sacct", dump, "--system", "perlmutter")
    assert result.exit_code == 0, result.output
    assert ("  stored under the catalog's names for them: perlmutter as Perlmutter-GPU "
            "('perfpredict systems show NAME' says what each is)") in result.stdout.splitlines()
    again = cli("ingest", "sacct", str(shared_path("logs", "slurm", "slurm2sql-test-data2.psv")),
                "--system", "FRONTIER", "--format", "json")
    assert json.loads(again.stdout)[0]["catalog_names"] == {}
    assert {r["system"] for r in json.loads(
        cli("runs", "export", "--batch", "1", "--format", "json").stdout)} == {"Perlmutter-GPU"}


def test_on_a_terminal_each_summary_starts_its_own_line_not_the_spinners(tmp_path: Path) -> None:
    """The spinner shows on a terminal only; ``typer.echo`` writes past rich's redirection of
    stdout, so a summary printed under it started on the spinner's line and kept its frame
    on screen ("⠼ 0 records 0:00:01FILE: 4 records, ...")."""
    import sys

    dump = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    shown = on_a_terminal(
        [sys.executable, "-c", "from perfpredict.cli.app import main; main()",
         "--db", f"sqlite:///{tmp_path / 'store.db'}", "ingest", "sacct", str(dump), str(dump)],
        {"PERFPREDICT_HOME": str(tmp_path / "home")})
    erase_line = b"\x1b[2K"
    for summary in (f"{dump}: 4 records, 4 stored".encode(), f"{dump}: already ingested".encode()):
        before = shown[:shown.index(summary)]
        assert before.endswith(erase_line), shown
