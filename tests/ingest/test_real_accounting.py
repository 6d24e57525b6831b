"""Real accounting through the CLI (issue 14, items 1-6): sacct outputs laid out as
reportseff and jobstats ask for them, repeated benchmark rows, the export round trip for
every format, and what a user is told about what was not stored."""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import json
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.conftest import shared_path

REPORTSEFF = Path(__file__).parent / "data" / "reportseff"
#: reportseff's `sacct --format` (tests/test_reportseff.py), and with Timelimit.
REPORTSEFF_COLUMNS = "AdminComment,AllocCPUS,Elapsed,JobID,JobIDRaw,MaxRSS,NNodes,NTasks,REQMEM,State,TotalCPU"
REPORTSEFF_TIMELIMIT_COLUMNS = REPORTSEFF_COLUMNS.replace("TotalCPU", "Timelimit,TotalCPU")

#: jobstats' layout (`sacct -P -X -o jobidraw,start,end,cluster,...` with
#: SLURM_TIME_FORMAT=%s, PrincetonUniversity/jobstats tests/test_jobstats.py). jobstats is
#: GPL-2.0, so these rows are written here in its layout, not copied; their Start and End
#: differences are the `total_time` its tests expect (36322 s, 50944 s).
JOBSTATS = """\
JobIDRaw|Start|End|Cluster|AllocTRES|AdminComment|User|Account|State|NNodes|NCPUS|ReqMem|QOS|Partition|TimelimitRaw|JobName
1001|1700000000|Unknown|tiger2|billing=40,cpu=40,mem=10G,node=1|JS1:Short|alice|physics|RUNNING|1|40|10G|tiger-short|serial|1440|myjob
1002|1700000100|1700036422|della|billing=15,cpu=15,mem=1G,node=1|JS1:Short|bob|chem|TIMEOUT|1|15|1G|short|cpu|600|scf.cmd
1003|1700001000|1700051944|della|billing=10485,cpu=12,gres/gpu=1,mem=128G,node=1||carol|cs|COMPLETED|1|12|128G|gpu-short|gpu-shared|990|emb
1004|1700002000|1700013540|della|billing=20480,cpu=1,gres/gpu=1,mem=250G,node=1||dave|ee|CANCELLED by 223988|1|1|250G|gpu-short|gpu|840|run_main_1.cmd
"""

Cli = Callable[..., Result]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    from perfpredict.cli.app import app

    runner = CliRunner()  # Click >= 8.2: stdout and stderr apart, output both

    def invoke(*args: str, db: str = "store.db", input: bytes | None = None) -> Result:
        return runner.invoke(app, ["--db", f"sqlite:///{tmp_path / db}", *args], input=input)

    return invoke


def exported(cli: Cli, db: str = "store.db") -> list[dict[str, str]]:
    result = cli("runs", "export", "--format", "csv", db=db)
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))


def exported_whole(cli: Cli, tmp_path: Path, fmt: str, text: str) -> list[dict[str, str]]:
    """The export of a fresh store (whole.db) that ingested ``text`` as one whole log:
    what a log read in parts, as it grew, must end up holding."""
    whole = tmp_path / "whole"
    whole.write_text(text, encoding="utf-8")
    assert cli("ingest", fmt, str(whole), "--system", "site", db="whole.db").exit_code == 0
    return exported(cli, db="whole.db")


def by_job(rows: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {row["job_id"]: row for row in rows}


# --- 1. one field-count rule for -p and -P ----------------------------------------------

@pytest.mark.parametrize("trailing", ["|", ""], ids=["sacct -p", "sacct -P"])
def test_a_short_row_is_refused_with_and_without_the_trailing_delimiter(
        cli: Cli, tmp_path: Path, trailing: str) -> None:
    """reportseff's array job 24221219 printed with 11 fields under a 12-column header:
    under -p its trailing '|' once passed for the 12th field, and TotalCPU 09:28.052
    was stored as the time limit."""
    header = REPORTSEFF_TIMELIMIT_COLUMNS.replace(",", "|") + trailing
    lines = [line.replace("^|^", "|") + trailing
             for line in (REPORTSEFF / "console-jobs.psv").read_text().splitlines()
             if "24221219" in line]
    path = tmp_path / "short.psv"
    path.write_text("\n".join([header, *lines]) + "\n")
    result = cli("ingest", "sacct", str(path), "--system", "della")
    assert result.exit_code == 2
    assert f"{path}:2: expected 12 fields, found 11" in result.output
    assert exported(cli) == []


def test_a_p_dump_with_the_right_count_is_read(cli: Cli, tmp_path: Path) -> None:
    header = REPORTSEFF_TIMELIMIT_COLUMNS.replace(",", "|") + "|"
    lines = [line.replace("^|^", "|") + "|"
             for line in (REPORTSEFF / "timelimit-jobs.psv").read_text().splitlines()]
    path = tmp_path / "p.psv"
    path.write_text("\n".join([header, *lines]) + "\n")
    assert cli("ingest", "sacct", str(path), "--system", "della").exit_code == 0
    job = by_job(exported(cli))["24418435"]
    assert (job["runtime_s"], job["requested_walltime_s"]) == ("5262.0", "10800.0")


# --- acceptance: reportseff's fixtures, with the values its tests expect -----------------

def test_reportseff_fixtures_ingest_with_reportseffs_values(cli: Cli) -> None:
    result = cli("ingest", "sacct", str(REPORTSEFF / "timelimit-jobs.psv"), "--system",
                 "della", "--columns", REPORTSEFF_TIMELIMIT_COLUMNS)
    assert result.exit_code == 0, result.output
    result = cli("ingest", "sacct", str(REPORTSEFF / "console-jobs.psv"), "--system", "della",
                 "--columns", REPORTSEFF_COLUMNS)
    assert result.exit_code == 0, result.output
    # 24418435 is in both files: stored once
    assert "5 records, 4 stored, 1 already in the store" in result.stdout
    assert "1 non-terminal job skipped" in result.stdout  # 24221220 is PENDING
    jobs = by_job(exported(cli))
    assert "24221220" not in jobs
    # reportseff: 24418435 COMPLETED 01:27:42, 25569410 COMPLETED 21:14:48,
    # 23000233 CANCELLED 00:00:00
    assert (jobs["24418435"]["state"], jobs["24418435"]["runtime_s"]) == ("COMPLETED", "5262.0")
    assert float(jobs["24418435"]["max_rss_bytes"]) == 499092 * 1024
    assert jobs["24418435"]["requested_walltime_s"] == "10800.0"
    assert (jobs["25569410"]["state"], jobs["25569410"]["runtime_s"]) == ("COMPLETED", "76488.0")
    assert float(jobs["25569410"]["max_rss_bytes"]) == 62328 * 1024
    assert (jobs["23000233"]["state"], jobs["23000233"]["runtime_s"]) == ("CANCELLED", "0.0")
    assert jobs["23000233"]["state_detail"] == "CANCELLED by 129319"
    assert jobs["23000233"]["requested_walltime_s"] == str(6 * 86400.0)
    # an array task: JobIDRaw is the job, JobID its array name; TotalCPU is no time limit
    array_task = jobs["24221219"]
    assert (array_task["runtime_s"], array_task["requested_walltime_s"]) == ("574.0", "")
    assert (array_task["array_job_id"], array_task["array_task_id"]) == ("24220929", "421")
    assert (jobs["23000381"]["state"], jobs["23000381"]["runtime_s"]) == ("FAILED", "12.0")


def test_a_headerless_export_without_columns_asks_for_them(cli: Cli) -> None:
    """reportseff's export (no header line, 11 columns) read without --columns: the lines
    were taken for Open XDMoD's 26 columns, and the refusal says so and how to name them,
    not "the line is cut short"."""
    path = REPORTSEFF / "console-jobs.psv"
    result = cli("ingest", "sacct", str(path), "--system", "della")
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: expected 26 fields in Open XDMoD's order (the "
                           "file has no header line and no --columns), found 11; name the "
                           "columns with --columns as in sacct's --format"), line

# --- 2, 3. jobstats' layout: epoch seconds, runtime from End - Start ------------------------


def test_jobstats_layout_gives_runtimes_from_epoch_start_and_end(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "jobstats.psv"
    path.write_text(JOBSTATS)
    result = cli("ingest", "sacct", str(path), "--timezone", "America/New_York")
    assert result.exit_code == 0, result.output
    assert "3 records, 3 stored" in result.stdout
    assert "1 non-terminal job skipped" in result.stdout  # RUNNING
    assert not result.stderr
    jobs = by_job(exported(cli))
    timeout, completed, cancelled = jobs["1002"], jobs["1003"], jobs["1004"]
    assert (timeout["runtime_s"], timeout["requested_walltime_s"]) == ("36322.0", "36000.0")
    assert (timeout["state"], timeout["censored"]) == ("TIMEOUT", "True")
    # epoch seconds are UTC whatever --timezone says
    assert timeout["start_time"] == "2023-11-14T22:15:00Z"
    assert (completed["runtime_s"], completed["gpus"], completed["system"]) == (
        "50944.0", "1", "della")
    assert (cancelled["runtime_s"], cancelled["state_detail"]) == ("11540.0", "CANCELLED by 223988")


@pytest.mark.parametrize(("option", "said"), [
    (("--timezone", "Mars/Olympus"), "Error: unknown time zone 'Mars/Olympus'; pass an IANA "
                                     "name such as UTC or Europe/Berlin with --timezone"),
    (("--app-from", "jobnme"), "Error: --app-from 'jobnme' is not one of jobname, comment, "
                               "regex:PATTERN"),
])
def test_a_mistyped_option_is_refused_on_a_file_already_ingested(
        cli: Cli, option: tuple[str, str], said: str) -> None:
    """Only the parser checked these, and a file already ingested is not parsed: the
    nightly re-ingest with a typo said "already ingested" and exited 0."""
    path = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    assert cli("ingest", "sacct", str(path)).exit_code == 0
    before = exported(cli)
    result = cli("ingest", "sacct", str(path), *option)
    assert result.exit_code == 2
    assert result.output.strip() == said
    assert exported(cli) == before


def test_a_dump_without_any_runtime_is_warned_about(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "no-times.psv"
    path.write_text("JobIDRaw|State|NNodes|JobName\n7|COMPLETED|2|a\n8|FAILED|4|b\n")
    result = cli("ingest", "sacct", str(path), "--system", "della")
    assert result.exit_code == 0
    assert "none of the 2 records has a runtime" in result.stderr


# --- 4. repeated benchmark measurements ----------------------------------------------------

def test_repeats_in_a_later_file_are_kept_and_the_same_file_stays_idempotent(
        cli: Cli, tmp_path: Path) -> None:
    row = "lulesh,frontier,s100,8,8,7,812.5\n"
    header = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
    first, second = tmp_path / "monday.csv", tmp_path / "tuesday.csv"
    first.write_text(header + row + row)
    second.write_text(header + row + "\n")  # the same measurement, repeated a day later
    assert "2 records, 2 stored" in cli("ingest", "csv", str(first)).stdout
    assert "1 record, 1 stored, 0 already" in cli("ingest", "csv", str(second)).stdout
    again = cli("ingest", "csv", str(first), str(second))
    assert again.stdout.count("already ingested") == 2
    assert len(exported(cli)) == 3


def test_a_results_file_appended_to_stores_only_the_lines_added(cli: Cli, tmp_path: Path) -> None:
    header = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
    results = tmp_path / "results.csv"
    results.write_text(header + "lulesh,frontier,s100,8,8,7,812.5\n")
    assert "1 record, 1 stored" in cli("ingest", "csv", str(results)).stdout
    with results.open("a") as fh:  # the same measurement again, and a larger run
        fh.write("lulesh,frontier,s100,8,8,7,812.5\nlulesh,frontier,s100,16,8,7,455.0")
    grown = cli("ingest", "csv", str(results), "--format", "json")
    (report,) = json.loads(grown.stdout)
    assert (report["n_records"], report["n_stored"], report["grown_from_batch"]) == (3, 2, 1)
    with results.open("a") as fh:  # the last line had no line break
        fh.write("\nlulesh,frontier,s100,32,8,7,260.0\n")
    assert "4 records, 1 stored, 3 already" in cli("ingest", "csv", str(results)).stdout
    assert sorted(int(run["nodes"]) for run in exported(cli)) == [8, 8, 16, 32]
    results.write_text(header + "lulesh,frontier,s100,32,8,7,260.0\n")  # rewritten
    assert "1 record, 1 stored" in cli("ingest", "csv", str(results)).stdout


def _appended_after_its_checksum(monkeypatch: pytest.MonkeyPatch, path: Path, text: str) -> None:
    """The next ingest of ``path`` takes its checksum, then ``text`` is written to it (a
    benchmark script appending a result while the nightly ingest reads the file)."""
    from perfpredict.ingest import pipeline

    checksum = pipeline.file_sha256

    def then_appended(of: Path) -> str:
        sha256 = checksum(of)
        if of == path:
            monkeypatch.setattr(pipeline, "file_sha256", checksum)
            with path.open("a") as fh:
                fh.write(text)
        return sha256

    monkeypatch.setattr(pipeline, "file_sha256", then_appended)


def test_a_results_file_appended_to_while_it_is_read_stores_each_run_once(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its checksum was of the file with a line half written, its runs of the file with
    the line finished and another after it: the next ingest found no earlier version of
    the file at a line break, took it for an edited one and stored every run again."""
    header = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
    results = tmp_path / "results.csv"
    results.write_text(header + "lulesh,frontier,s100,8,8,7,812.5\nlulesh,frontier,s100,16,8,7,45")
    _appended_after_its_checksum(monkeypatch, results, "5.0\nlulesh,frontier,s100,32,8,7,260.0\n")
    first = cli("ingest", "csv", str(results))
    assert first.exit_code == 0, first.output
    assert "3 records, 3 stored" in first.stdout
    assert "changed while it was read" in first.stderr
    again = cli("ingest", "csv", str(results))
    assert "already ingested" in again.stdout and again.stderr == ""
    assert sorted((int(run["nodes"]), float(run["runtime_s"])) for run in exported(cli)) == [
        (8, 812.5), (16, 455.0), (32, 260.0)]


@pytest.mark.parametrize("written", ["lulesh,frontier,s100,16,8,7,45", "lulesh,fron"],
                         ids=["a number cut short", "too few fields"])
def test_a_line_half_written_when_the_file_is_read_is_left_to_its_next_ingest(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str) -> None:
    """Read while it changed, the file is ingested from a copy up to its last line break:
    a line still being written is no run of 45 s where 455.0 s was being written, nor a
    bad line that refused the whole file."""
    header = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
    results = tmp_path / "results.csv"
    results.write_text(header + "lulesh,frontier,s100,8,8,7,812.5\n")
    _appended_after_its_checksum(monkeypatch, results, written)
    first = cli("ingest", "csv", str(results))
    assert first.exit_code == 0, first.output
    assert "1 record, 1 stored" in first.stdout and "changed while" in first.stderr
    with results.open("a") as fh:
        fh.write("lulesh,frontier,s100,16,8,7,455.0\n"[len(written):])
    grown = cli("ingest", "csv", str(results))
    assert "2 records, 1 stored, 1 already" in grown.stdout, grown.output
    assert sorted(float(run["runtime_s"]) for run in exported(cli)) == [455.0, 812.5]


def test_a_results_file_edited_since_its_ingest_says_its_rows_are_stored_again(
        cli: Cli, tmp_path: Path) -> None:
    """Castro's real wdmerger table, one runtime corrected and ingested again from the same
    path: every row is stored again (an edited file is a new file), the uncorrected ones
    beside their first copies, which went without a word; the warning names the batch to
    delete, and deleting it leaves the corrected table alone."""
    lines = shared_path("datasets", "castro_scaling", "runs.csv").read_text().splitlines()
    results = tmp_path / "results.csv"
    results.write_text("\n".join(lines[:5]) + "\n")
    first = cli("ingest", "csv", str(results))
    assert "4 records, 4 stored" in first.stdout and first.stderr == ""
    fields = lines[4].split(",")
    fields[8] = "60.0"  # runtime_s corrected
    results.write_text("\n".join([*lines[:4], ",".join(fields)]) + "\n")
    edited = cli("ingest", "csv", str(results))
    assert "4 records, 4 stored" in edited.stdout
    assert edited.stderr == (
        f"Warning: {results}: it was ingested before from this path with other content "
        "(batch 1), not grown by lines appended, so its rows without a job id are stored "
        "again beside those, as repeated measurements; if this file replaces it, "
        "'perfpredict runs delete --batch 1' takes the earlier runs out\n")
    assert cli("runs", "delete", "--batch", "1", "--yes").exit_code == 0
    assert sorted(float(run["runtime_s"]) for run in exported(cli)) == sorted(
        float(line.split(",")[8]) for line in [*lines[1:4], ",".join(fields)])


# --- 5. runs export, then ingest csv, for every format ------------------------------------

def _kth_excerpt(tmp_path: Path) -> Path:
    with gzip.open(shared_path("logs", "swf", "KTH-SP2-1996-2.1-cln.swf.gz"), "rt") as fh:
        lines = [next(fh) for _ in range(400)]
    path = tmp_path / "kth.swf"
    path.write_text("".join(lines))
    return path


ROUND_TRIPS = {
    "sacct": lambda tmp: shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv"),
    "sacct-json": lambda tmp: shared_path("logs", "slurm", "clockwork-sacct_1.json"),
    "jobcomp": lambda tmp: shared_path("logs", "slurm", "jobcomp-filetxt-quoted-lines.log"),
    "swf": _kth_excerpt,  # SWF jobs have no application name: "unknown"
    "swf-nasa": lambda tmp: shared_path("logs", "swf", "NASA-iPSC-1993-3.1-cln.swf"),
    "pbs": lambda tmp: shared_path("logs", "pbs", "xdmod-accounting-logs.log"),
    "lsf": lambda tmp: shared_path("logs", "lsf", "xdmod-accounting-logs.log"),
    "sge": lambda tmp: shared_path("logs", "uge", "xdmod-accounting-logs.log"),
    "darshan": lambda tmp: shared_path(
        "logs", "darshan", "release_logs__mpi-io-test-x86_64-3.5.0.darshan"),
}


@pytest.mark.parametrize("source", sorted(ROUND_TRIPS))
def test_export_ingests_back_unchanged(cli: Cli, tmp_path: Path, source: str) -> None:
    if source == "darshan":
        pytest.importorskip("darshan")
    fmt = source.split("-nasa")[0]
    result = cli("ingest", fmt, str(ROUND_TRIPS[source](tmp_path)), "--system", "site")
    assert result.exit_code == 0, result.output
    first = cli("runs", "export", "--format", "csv").stdout
    assert len(first.splitlines()) > 1
    export = tmp_path / "export.csv"
    export.write_text(first)
    result = cli("ingest", "csv", str(export), db="copy.db")
    assert result.exit_code == 0, result.output
    assert cli("runs", "export", "--format", "csv", db="copy.db").stdout == first


UTF8_BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("source", sorted(set(ROUND_TRIPS) - {"darshan"}))
def test_a_log_saved_with_a_byte_order_mark_gives_the_same_runs(
        cli: Cli, tmp_path: Path, source: str) -> None:
    """A log that went through an editor or PowerShell (``Out-File -Encoding utf8``)
    starts with a UTF-8 byte-order mark. Only the CSV header and sacct's JSON skipped
    it: a PBS, LSF, SWF or jobcomp log was refused at line 1 as not being one, a
    Grid Engine log stored its first job's queue as '\\ufeffmyqueue' and a headerless
    sacct dump its first job's id as '\\ufeff4103947'."""
    fmt = source.split("-nasa")[0]
    log = ROUND_TRIPS[source](tmp_path)
    marked = tmp_path / f"marked-{log.name}"
    marked.write_bytes(UTF8_BOM + log.read_bytes())
    assert cli("ingest", fmt, str(log), "--system", "site").exit_code == 0
    result = cli("ingest", fmt, str(marked), "--system", "site", db="marked.db")
    assert result.exit_code == 0, result.output
    assert exported(cli, db="marked.db") == exported(cli)


def test_a_json_export_has_the_fields_of_the_csv_export(cli: Cli) -> None:
    """``runs export --format json`` lacked the CSV's run_key (each run's identity in the
    store), and each row held only the extra fields it had."""
    log = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs-with-job-arrays.psv")
    assert cli("ingest", "sacct", str(log)).exit_code == 0
    as_csv = exported(cli)
    as_json = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert [list(row) for row in as_json] == [list(row) for row in as_csv]
    assert [row["run_key"] for row in as_json] == [row["run_key"] for row in as_csv]
    assert all(row["run_key"] for row in as_json)


# --- 6. what was not stored is said ---------------------------------------------------------

def test_unfinished_jobs_are_counted(cli: Cli) -> None:
    result = cli("ingest", "sacct", str(shared_path(
        "logs", "slurm", "xdmod-sacct-non-ended-job-state.psv")))
    assert result.exit_code == 0, result.output
    assert "0 records" in result.stdout and "2 non-terminal jobs skipped" in result.stdout


def test_unfinished_jobs_of_sacct_json_are_counted(cli: Cli) -> None:
    result = cli("ingest", "sacct-json", str(shared_path(
        "logs", "slurm", "sarc-generated-sacct-json-v0.0.43-mila_1714003200.json")))
    assert result.exit_code == 0, result.output
    assert "5 records, 5 stored" in result.stdout
    assert "3 non-terminal jobs skipped" in result.stdout


def test_an_empty_file_is_warned_about(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "empty.psv"
    path.write_text("")
    result = cli("ingest", "sacct", str(path), "--system", "della")
    assert result.exit_code == 0
    assert f"Warning: {path}: the file holds no records" in result.stderr


def test_a_directory_is_named_as_such(cli: Cli, tmp_path: Path) -> None:
    result = cli("ingest", "csv", str(tmp_path))
    assert result.exit_code == 2
    assert "is a directory, not a file" in result.output


#: (format, log, its line to damage, the time in it, the damaged time, --timezone): a
#: wall-clock time at the calendar's end, which read in a zone off UTC falls outside it.
EDGE_TIMES = [
    ("sacct", ("slurm", "xdmod-sacct-accounting-logs.psv"), 1, "2015-06-28T02:55:50",
     "9999-12-31T23:59:00", "America/New_York"),
    # a job name that is not ASCII: read by the per-row rules, not the column readers
    ("sacct", ("slurm", "xdmod-sacct-utf8-multibyte-chars.psv"), 1, "2015-06-28T02:55:50",
     "0001-01-01T00:00:00", "Europe/Berlin"),
    ("jobcomp", ("slurm", "jobcomp-filetxt-quoted-lines.log"), 2, "2025-01-11T22:45:16",
     "0001-01-01T00:00:00", "Europe/Berlin"),
]


@pytest.mark.parametrize(("fmt", "log", "line_no", "time", "edge", "zone"), EDGE_TIMES,
                         ids=[f"{e[0]}-{e[4][:4]}" for e in EDGE_TIMES])
def test_a_time_at_the_calendars_end_is_bad_input_not_an_internal_error(
        cli: Cli, tmp_path: Path, fmt: str, log: tuple[str, str], line_no: int, time: str,
        edge: str, zone: str) -> None:
    """A damaged Start of year 9999 read in New York is in year 10000 in UTC, one of year
    1 read in Berlin in year 0: "internal error (OverflowError: date value out of
    range)", exit 1, from the per-row rules, and a NotImplementedError from pandas in the
    column readers. It is the line's bad time, exit 2."""
    lines = shared_path("logs", *log).read_text(encoding="utf-8").splitlines()
    assert time in lines[line_no - 1]
    lines[line_no - 1] = lines[line_no - 1].replace(time, edge, 1)
    path = tmp_path / "damaged.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("ingest", fmt, str(path), "--timezone", zone, "--system", "site")
    assert result.exit_code == 2, result.output
    (said,) = result.stderr.strip().splitlines()
    assert said.startswith(f"Error: {path}:{line_no}: Start")
    assert f"{edge!r} is not a time between 1970 and 2100" in said


def _zip(data: bytes) -> bytes:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("log", data)
    return buffer.getvalue()


def _zstd(data: bytes) -> bytes:
    """A zstd frame's magic number before the bytes (the stdlib has no zstd writer;
    the magic is what tells the file)."""
    return b"\x28\xb5\x2f\xfd" + data


#: (format, log, compression, what compresses it, the command that decompresses it)
COMPRESSED_LOGS = [
    ("pbs", ("pbs", "xdmod-accounting-logs.log"), "xz", lzma.compress, "xz -d"),
    ("jobcomp", ("slurm", "jobcomp-filetxt-quoted-lines.log"), "bzip2", bz2.compress,
     "bunzip2"),
    ("swf", ("swf", "NASA-iPSC-1993-3.1-cln.swf"), "zstd", _zstd, "zstd -d"),
    ("sacct-json", ("slurm", "clockwork-sacct_1.json"), "zip", _zip, "unzip"),
    ("sacct", ("slurm", "xdmod-sacct-accounting-logs.psv"), "xz", lzma.compress, "xz -d"),
]


@pytest.mark.parametrize(("fmt", "log", "kind", "compress", "command"), COMPRESSED_LOGS,
                         ids=[f"{c[0]}-{c[2]}" for c in COMPRESSED_LOGS])
def test_a_log_compressed_otherwise_than_with_gzip_says_so(
        cli: Cli, tmp_path: Path, fmt: str, log: tuple[str, str], kind: str,
        compress: Callable[[bytes], bytes], command: str) -> None:
    """A log rotated with xz, bzip2 or zstd (logrotate's compresscmd), or zipped to be
    sent: only the CSV and sacct readers said the file was binary; PBS, jobcomp, SWF and
    sacct-json refused it as "not a PBS accounting record", "not valid JSON" at line 1,
    whose fix is not the one. It is named with the command that decompresses it."""
    path = tmp_path / f"{log[1]}.{kind}"
    path.write_bytes(compress(shared_path("logs", *log).read_bytes()))
    result = cli("ingest", fmt, str(path), "--system", "site")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: {path}: the file is {kind}-compressed; decompress it first ({command} "
        f"{path.name}), or compress it with gzip, which is read as it is")
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_batches"] == 0


@pytest.mark.parametrize(("fmt", "log"), [
    ("pbs", ("pbs", "xdmod-accounting-logs.log")),
    ("lsf", ("lsf", "xdmod-accounting-logs.log")),
    ("sge", ("sge", "xdmod-accounting-logs.log")),
    ("darshan", ("darshan", "skew_io__skew-app.darshan")),
])
def test_a_log_that_cannot_name_its_machine_asks_for_system(
        cli: Cli, fmt: str, log: tuple[str, str]) -> None:
    """PBS, LSF and Darshan logs never name the machine: the file is refused once, before
    it is read, with the one fix that works (not "add a 'system' column", and not a reject
    per record under --on-error skip), and the store is untouched."""
    path = shared_path("logs", *log)
    for args in ((), ("--on-error", "skip")):
        result = cli("ingest", fmt, str(path), *args)
        assert result.exit_code == 2
        assert result.output.strip() == (
            f"Error: {path}: {fmt} logs do not name the machine their jobs ran on; pass "
            "--system NAME (nothing from this file was stored)")
    stats = cli("runs", "stats", "--format", "json").stdout
    assert '"n_runs": 0' in stats and '"n_batches": 0' in stats


def test_a_file_read_again_says_what_it_rejected_then(cli: Cli) -> None:
    """Alea's SWF names no machine: under --on-error skip the whole file is kept as a
    reject, and with the --system it asks for it is read (nothing of it was stored), two
    lines of negative run times rejected. Read once more, it was skipped as "already
    ingested (17898 records); nothing stored", not a word of the rejects or of --reread."""
    alea = str(shared_path("logs", "swf", "alea-wagap-2013-extended.swf"))
    args = ("ingest", "swf", alea, "--swf-allow-extra-fields", "--on-error", "skip")
    assert "1 rejected" in cli(*args).stdout
    stored = cli(*args, "--system", "alea")
    assert "17898 stored" in stored.stdout and "2 rejected" in stored.stdout, stored.output
    skipped = cli(*args, "--system", "alea")
    assert skipped.exit_code == 0, skipped.output
    assert skipped.stdout.startswith(
        f"{alea}: already ingested (17898 records, 2 rejected then); nothing stored; "
        "--reread reads it again")


def test_application_names_that_differ_only_in_case_are_warned_about(
        cli: Cli, tmp_path: Path) -> None:
    """Training keeps "FlowSim" and "flowsim" apart, and a command finds either only by
    its exact name: one code's runs would split without a word."""
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("app,system,nodes,runtime_s\nflowsim,x,1,10\n")
    second.write_text("app,system,nodes,runtime_s\nFlowSim,x,2,6\nother,x,1,1\n")
    assert "Warning" not in cli("ingest", "csv", str(first)).stderr
    result = cli("ingest", "csv", str(second))
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"Warning: {second}: applications 'FlowSim', 'flowsim' differ only in letter case: "
        "training keeps them apart and a command finds either only by its exact name; "
        "make the names match"]
    assert "2 records, 2 stored" in result.stdout


# --- a job met again: its latest incarnation, never a second copy ----------------------------

REQUEUED = """\
JobID|JobIDRaw|JobName|User|Account|State|Timelimit|Elapsed|Submit|Start|End|NNodes|Cluster
600|600|wrf|bob|acct|NODE_FAIL|02:00:00|00:05:00|2024-03-02T10:00:00|2024-03-02T10:00:05|2024-03-02T10:05:05|4|clA
600|600|wrf|bob|acct|COMPLETED|02:00:00|01:30:00|2024-03-02T10:00:00|2024-03-02T10:06:00|2024-03-02T11:36:00|4|clA
601|601|wrf|bob|acct|TIMEOUT|02:00:00|02:00:00|2024-03-02T10:00:00|2024-03-02T10:06:00|2024-03-02T12:06:00|4|clA
601|601|wrf|bob|acct|PREEMPTED|02:00:00|00:05:00|2024-03-02T10:00:00|2024-03-02T10:00:05|2024-03-02T10:05:05|4|clA
"""


def test_a_requeued_job_keeps_its_latest_incarnation(cli: Cli, tmp_path: Path) -> None:
    """sacct -D lists each incarnation of a requeued job under one id: the run that
    counted is the one that started last, whatever order the lines come in."""
    path = tmp_path / "requeued.psv"
    path.write_text(REQUEUED)
    assert cli("ingest", "sacct", str(path)).exit_code == 0
    runs = by_job(exported(cli))
    assert (runs["600"]["state"], runs["600"]["runtime_s"]) == ("COMPLETED", "5400.0")
    assert (runs["601"]["state"], runs["601"]["censored"]) == ("TIMEOUT", "True")


def test_a_job_seen_running_then_ended_is_its_ended_record(cli: Cli) -> None:
    """Two sacct --json dumps of Cedar: job 10 without an end in the first, with it in
    the second. The second is the job's record, stored in its place."""
    for name in ("clockwork-sacct_1.json", "clockwork-sacct_2.json"):
        assert cli("ingest", "sacct-json", str(shared_path("logs", "slurm", name))).exit_code == 0
    (run,) = exported(cli)
    assert (run["job_id"], run["end_time"]) == ("10", "2023-03-31T06:28:23Z")


def test_a_dump_with_the_steps_fills_in_what_an_allocations_dump_lacked(
        cli: Cli, tmp_path: Path) -> None:
    """``sacct -X`` lists the allocation lines alone, so ranks per node and MaxRSS (read
    from the steps) are empty. The same jobs' full dump, ingested after, gives them: the
    store ends as if the full dump alone had been read, and says how many runs it
    completed. A record of the run that is stored never overwrites a field it has."""
    full = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    lines = full.read_text().splitlines(keepends=True)
    job_id = lines[0].split("|").index("JobID")
    allocations = tmp_path / "allocations.psv"
    allocations.write_text("".join(
        [lines[0]] + [line for line in lines[1:] if "." not in line.split("|")[job_id]]))
    assert "2 records, 2 stored" in cli("ingest", "sacct", str(allocations), "--system",
                                        "s").stdout
    assert all(run["ranks_per_node"] == run["max_rss_bytes"] == "" for run in exported(cli))
    result = cli("ingest", "sacct", str(full), "--system", "s")
    assert ("2 records, 0 stored, 2 already in the store (2 of them given fields they "
            "lacked)") in result.stdout, result.output
    assert cli("ingest", "sacct", str(full), "--system", "s", db="full.db").exit_code == 0
    assert exported(cli) == exported(cli, db="full.db")
    again = cli("ingest", "sacct", str(full), "--system", "s", "--reread")
    assert "2 already in the store, " in again.stdout, again.output

    edited = tmp_path / "edited.psv"  # the same jobs with another time limit and MaxRSS
    edited.write_text(full.read_text().replace("5-00:00:00", "6-00:00:00")
                      .replace("231092K", "999999K"))
    result = cli("ingest", "sacct", str(edited), "--system", "s")
    assert "2 already in the store, " in result.stdout, result.output
    assert exported(cli) == exported(cli, db="full.db")


def test_an_export_ingested_where_its_runs_are_stores_nothing_twice(
        cli: Cli, tmp_path: Path) -> None:
    """A restored backup, a merge of stores, or the log an export came from: the export's
    run_key names each run's identity, benchmark rows' and scheduler jobs' alike."""
    log = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    benchmarks = tmp_path / "bench.csv"
    benchmarks.write_text("app,system,nodes,runtime_s\nlulesh,x,1,10\nlulesh,x,1,10\n")
    for fmt, path in (("sacct", log), ("csv", benchmarks)):
        assert cli("ingest", fmt, str(path)).exit_code == 0
    export = tmp_path / "export.csv"
    export.write_text(cli("runs", "export", "--format", "csv").stdout)
    again = cli("ingest", "csv", str(export))
    assert "6 records, 0 stored, 6 already in the store" in again.stdout, again.output
    assert cli("ingest", "csv", str(export), db="copy.db").exit_code == 0
    from_log = cli("ingest", "sacct", str(log), db="copy.db")
    assert "4 records, 0 stored, 4 already in the store" in from_log.stdout, from_log.output
    assert len(exported(cli, db="copy.db")) == 6


def test_several_files_say_what_each_stored_before_a_bad_one(cli: Cli, tmp_path: Path) -> None:
    """A mistyped path stores nothing of any file; a bad file after good ones leaves them
    stored, and their summary lines printed before the error says so."""
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text("app,system,nodes,runtime_s\nlulesh,x,1,10\n")
    bad.write_text("app,system,nodes,runtime_s\nlulesh,x,1,-3\n")
    missing = cli("ingest", "csv", str(good), str(tmp_path / "typo.csv"))
    assert missing.exit_code == 2 and "typo.csv: no such file" in missing.output
    assert '"n_runs": 0' in cli("runs", "stats", "--format", "json").stdout
    result = cli("ingest", "csv", str(good), str(bad))
    assert result.exit_code == 2
    assert result.stdout.startswith(f"{good}: 1 record, 1 stored")
    assert result.stderr.startswith(f"Error: {bad}:2:")
    assert '"n_runs": 1' in cli("runs", "stats", "--format", "json").stdout


def test_files_of_another_kind_are_named_as_such(cli: Cli, tmp_path: Path) -> None:
    """A binary file is not echoed as column names; a sacct dump whose '|' became
    commas is told so; a sacct run without a cluster is told the field sacct exports."""
    darshan = shared_path("logs", "darshan", "skew_io__skew-app.darshan")
    for fmt in ("csv", "sacct"):
        result = cli("ingest", fmt, str(darshan))
        assert result.exit_code == 2
        assert result.output.startswith(f"Error: {darshan}:1: the file is binary, not text: "
                                        "for a Darshan log use 'perfpredict ingest darshan'")
    psv = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    commas = tmp_path / "commas.psv"
    commas.write_text(psv.read_text().replace("|", ","))
    result = cli("ingest", "sacct", str(commas))
    assert result.exit_code == 2 and "the fields are not separated by '|'" in result.output
    no_cluster = tmp_path / "no-cluster.psv"
    no_cluster.write_text("JobID|JobIDRaw|State|Elapsed\n5|5|COMPLETED|00:01:00\n")
    result = cli("ingest", "sacct", str(no_cluster))
    assert result.exit_code == 2 and ("no system for this run; export with the Cluster field "
                                      "(sacct --format ...,Cluster) or pass --system NAME"
                                      ) in result.output
    assert '"n_runs": 0' in cli("runs", "stats", "--format", "json").stdout


@pytest.mark.parametrize(("fmt", "log", "says"), [
    ("pbs", "sge", "the file looks like Grid Engine (sge), not pbs; read it with "
     "'perfpredict ingest sge'"),
    ("lsf", "pbs", "the file looks like PBS / Torque / PBS Pro accounting logs (pbs), not lsf; "
     "read it with 'perfpredict ingest pbs'"),
    ("sge", "lsf", "the file looks like IBM LSF lsb.acct accounting (lsf), not sge; read it "
     "with 'perfpredict ingest lsf'"),
    # SWF's own fix (an extended variant's extra fields) is not for a PBS log's 23 words
    ("swf", "pbs", "the file looks like PBS / Torque / PBS Pro accounting logs (pbs), not swf; "
     "read it with 'perfpredict ingest pbs'; nothing from this file was stored; --on-error "
     "skip goes on with the other files"),
    ("jobcomp", "uge", "the file looks like Grid Engine (sge), not jobcomp; read it with "
     "'perfpredict ingest sge'"),
    ("pbs", "swf", "the file looks like Standard Workload Format (swf), not pbs; read it with "
     "'perfpredict ingest swf'"),
])
def test_a_scheduler_log_read_as_another_names_its_format(cli: Cli, fmt: str, log: str,
                                                          says: str) -> None:
    """A Grid Engine file given to 'ingest pbs' was 'not a PBS accounting record ...
    (fix the line, or pass --on-error skip ...)': no line of it is to fix. Its first
    record names its format, and the command that reads it; under --on-error skip too,
    where it was a reject per line, each with a PBS line's fix; and without --system,
    which a PBS log needs but would not make this file readable (at the same line: it
    had named none there)."""
    folder = shared_path("logs", log)
    path = next(folder.glob("*.swf")) if log == "swf" else folder / "xdmod-accounting-logs.log"
    result = cli("ingest", fmt, str(path), "--system", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}:1: {says}")
    looks_like = says.split("; nothing")[0]
    skipped = cli("ingest", fmt, str(path), "--system", "x", "--on-error", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert f"Warning: {path}: every record was rejected: {looks_like}\n" in skipped.stderr
    unnamed = cli("ingest", fmt, str(path), "--reread")
    assert unnamed.exit_code == 2
    assert unnamed.stderr.startswith(f"Error: {path}:1: {looks_like}")  # the line, as above
    assert "--system" not in unnamed.stderr
    assert '"n_runs": 0' in cli("runs", "stats", "--format", "json").stdout


def test_a_log_read_as_its_format_drops_the_rejects_of_its_misreading(cli: Cli) -> None:
    """Under --on-error skip a PBS log given to 'ingest sge' kept a reject per line and
    the warning named 'ingest pbs'; read so, the log was stored whole while 'runs stats'
    still counted 9 rejects and 'runs batches' listed the sge reading beside it."""
    path = shared_path("logs", "pbs", "xdmod-accounting-logs.log")
    assert cli("ingest", "sge", str(path), "--system", "x", "--on-error", "skip"
               ).exit_code == 0
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_rejects"] == 9
    result = cli("ingest", "pbs", str(path), "--system", "x")
    assert result.exit_code == 0, result.output
    stats = json.loads(cli("runs", "stats", "--format", "json").stdout)
    assert (stats["n_runs"], stats["n_rejects"]) == (8, 0)
    batches = json.loads(cli("runs", "batches", "--format", "json").stdout)
    assert [(b["format"], b["runs"], b["rejects"]) for b in batches] == [("pbs", 8, 0)]
    assert cli("runs", "rejects", "--format", "csv").stdout.splitlines()[1:] == []


@pytest.mark.parametrize("fmt", ["swf", "pbs", "lsf"])
def test_benchmark_results_named_csv_read_as_a_log_name_ingest_csv(cli: Cli, tmp_path: Path,
                                                                   fmt: str) -> None:
    """'ingest swf runs.csv' said "expected 18 whitespace-separated SWF fields, found 1;
    the line is truncated or not SWF": where the name and the commas both say CSV, the
    command that reads it is named; commas alone do not say so (other logs have them)."""
    rows = "app,system,nodes,runtime_s\nsolver,x,1,100\nsolver,x,2,55\n"
    named = tmp_path / "runs.csv"
    named.write_text(rows)
    result = cli("ingest", fmt, str(named), "--system", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: {named}:1: the file looks like benchmark results (csv), not {fmt}; read it "
        "with 'perfpredict ingest csv'")
    unnamed = tmp_path / "runs.txt"
    unnamed.write_text(rows)
    result = cli("ingest", fmt, str(unnamed), "--system", "x")
    assert result.exit_code == 2 and "ingest csv" not in result.stderr
    assert '"n_runs": 0' in cli("runs", "stats", "--format", "json").stdout


@pytest.mark.parametrize(("fmt", "log", "says"), [
    ("sacct", "sarc-sacct-json-slurm_23_2_6.json",
     "this is JSON (sacct --json output), not sacct -P text; read it with 'perfpredict "
     "ingest sacct-json'"),
    ("sacct-json", "xdmod-sacct-accounting-logs.psv",
     "this is sacct -P text ('|'-separated fields), not JSON; read it with 'perfpredict "
     "ingest sacct'"),
    ("sacct-json", "slurm2sql-test-data1.psv", "this is sacct -P text"),
])
def test_slurm_text_and_json_given_as_each_other_name_the_right_format(
        cli: Cli, fmt: str, log: str, says: str) -> None:
    """sacct's JSON given to 'ingest sacct' was 'expected 26 fields in Open XDMoD's
    order, found 1', and its text given to 'ingest sacct-json' 'not valid JSON (Extra data
    at column 8)': neither named the command that reads the file."""
    path = shared_path("logs", "slurm", log)
    result = cli("ingest", fmt, str(path), "--system", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}:1: {says}")
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1


def test_an_empty_sacct_json_file_is_called_empty(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    path.write_text("\n")
    result = cli("ingest", "sacct-json", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}: the file is empty; export again with "
                                    "sacct --json")


def test_columns_that_do_not_match_the_export_are_named(cli: Cli) -> None:
    """Lines of 26 fields read with --columns of 2 blamed a '|' inside a job name only."""
    path = shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
    result = cli("ingest", "sacct", str(path), "--columns", "JobID,State")
    assert result.exit_code == 2
    assert "expected 2 fields, found 26" in result.stderr
    assert "or --columns does not name every field of the export" in result.stderr


def test_a_document_cut_after_jobs_stores_none_of_them(cli: Cli, tmp_path: Path) -> None:
    """Read a job at a time, the runs before the cut reached the store first; the cut
    document is refused whole as when it was loaded whole, also under --on-error skip."""
    text = shared_path("logs", "slurm", "sarc-generated-sacct-json-v0.0.43-mila_1714003200.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[:len(text) * 3 // 4])
    result = cli("ingest", "sacct-json", str(path), "--on-error", "skip")
    assert result.exit_code == 0, result.stderr
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1
    failed = cli("ingest", "sacct-json", str(path))
    assert failed.exit_code == 2
    assert failed.stderr.startswith(f"Error: {path}:1: not valid JSON (")
    assert "nothing from this file was stored" in failed.stderr


@pytest.mark.parametrize("n_after", [1, 5])
def test_a_bad_file_names_the_files_after_it_that_were_not_read(
        cli: Cli, tmp_path: Path, n_after: int) -> None:
    """Real sacct dumps, the second with its '|' turned to commas: the first is stored
    and listed, the second refused, and the error (one line) names the files after it,
    never read (a few, then how many), which the store does not hold."""
    first = shared_path("logs", "slurm", "slurm2sql-test-data1.psv")
    bad = tmp_path / "commas.psv"
    bad.write_text(shared_path("logs", "slurm", "xdmod-sacct-accounting-logs.psv")
                   .read_text().replace("|", ","))
    later = [tmp_path / f"later{i}.psv" for i in range(n_after)]
    for i, path in enumerate(later):  # its jobs under other ids: stored, were it read
        path.write_text(first.read_text().replace("4397", f"{i + 1}397"))
    result = cli("ingest", "sacct", str(first), str(bad), *map(str, later),
                 "--system", "ub-hpc", "--format", "json")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {bad}:1: ")
    if n_after == 1:
        assert line.endswith(f"; 1 file given after it was not read: {later[0]}")
    else:
        assert line.endswith(f"; 5 files given after it were not read: {later[0]}, "
                             f"{later[1]}, {later[2]} and 2 more (5 in all)")
    assert [report["path"] for report in json.loads(result.stdout)] == [str(first)]
    assert {row["job_id"] for row in exported(cli)} == {"43974388", "43977780"}


#: A real log of each format its scheduler appends to a record at a time, each ended by
#: a newline, and a value in its last record that, cut short, still reads: the walltime
#: of 10 h as 1 s, 64 CPUs as 6, the record before its run limit, a peak memory of
#: 8.7 GiB as 93 bytes.
CUT_INSIDE_A_VALUE = {
    "pbs": (("pbs", "xdmod-accounting-logs.log"), "Resource_List.walltime=1"),
    "jobcomp": (("slurm", "jobcomp-filetxt-quoted-lines.log"), "ProcCnt=6"),
    "lsf": (("lsf", "xdmod-utf8-multibyte-chars.log"), '"span[ptile=16]" "" ""'),
    "sge": (("uge", "xdmod-accounting-logs.log"), ":93"),
}
#: Lines of each log read by the test.
LOG_LINES = 61


@pytest.mark.parametrize("fmt", sorted(CUT_INSIDE_A_VALUE))
def test_a_last_line_still_being_written_is_left_for_the_next_ingest(
        cli: Cli, tmp_path: Path, fmt: str) -> None:
    """Today's accounting file, still being written, ends inside a record: PBS, LSF,
    Grid Engine and jobcomp refused the file, storing nothing, and a record cut inside a
    value would read as a job with the cut value, which the whole file read the next day
    changes none of (a stored job only gains fields it lacks). The records before it are stored now, the
    cut one is left with a one-line note, and the file, once the scheduler has written
    the rest of it, stores that job once, as the whole file read at once does."""
    parts, cut_after = CUT_INSIDE_A_VALUE[fmt]
    lines = shared_path("logs", *parts).read_text(encoding="utf-8").splitlines(keepends=True)
    text = "".join(lines[:LOG_LINES])
    log = tmp_path / "accounting"
    log.write_text(text[:text.rindex(cut_after) + len(cut_after)], encoding="utf-8")
    before = tmp_path / "before"  # the lines the scheduler had finished
    before.write_text(text[:text.rfind("\n", 0, text.rindex(cut_after)) + 1],
                      encoding="utf-8")

    for _ in range(2):  # the same file again is already ingested, and says so again
        result = cli("ingest", fmt, str(log), "--system", "site")
        assert result.exit_code == 0, result.output
        # (LSF's log, of one record, also "holds no records")
        assert result.stderr.splitlines()[-1] == (
            f"Warning: {log}: the last line has no newline: left for the next ingest, as "
            "the scheduler may still be writing it")
    assert cli("ingest", fmt, str(before), "--system", "site", db="before.db").exit_code == 0
    assert exported(cli) == exported(cli, db="before.db")
    assert json.loads(cli("runs", "rejects", "--format", "json").stdout) == []

    with log.open("a", encoding="utf-8") as fh:  # the scheduler ends the record
        fh.write(text[text.rindex(cut_after) + len(cut_after):])
    result = cli("ingest", fmt, str(log), "--system", "site")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert exported(cli) == exported_whole(cli, tmp_path, fmt, text)
    assert len(exported(cli)) > len(exported(cli, db="before.db"))


@pytest.mark.parametrize("fmt", sorted(CUT_INSIDE_A_VALUE))
def test_a_log_piped_in_while_written_is_read_as_its_file_is(
        cli: Cli, tmp_path: Path, fmt: str) -> None:
    """`ssh server cat accounting/today | perfpredict ingest pbs -` every hour: the log
    piped in while the scheduler wrote a record was refused whole (exit 2), as if cut
    short. It is read as the file is: up to the last newline, the record left for the
    next ingest, which pipes the log in grown and stores it once."""
    parts, cut_after = CUT_INSIDE_A_VALUE[fmt]
    lines = shared_path("logs", *parts).read_text(encoding="utf-8").splitlines(keepends=True)
    text = "".join(lines[:LOG_LINES])
    being_written = text[:text.rindex(cut_after) + len(cut_after)].encode("utf-8")
    before = tmp_path / "before"
    before.write_text(text[:text.rfind("\n", 0, text.rindex(cut_after)) + 1],
                      encoding="utf-8")

    result = cli("ingest", fmt, "-", "--system", "site", input=being_written)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == (
        "Warning: <stdin>: the last line has no newline: left for the next ingest, as the "
        "scheduler may still be writing it")
    assert cli("ingest", fmt, str(before), "--system", "site", db="before.db").exit_code == 0
    assert exported(cli) == exported(cli, db="before.db")

    result = cli("ingest", fmt, "-", "--system", "site", input=text.encode("utf-8"))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert exported(cli) == exported_whole(cli, tmp_path, fmt, text)


#: A real log of each format logrotate's copytruncate rotates (PBS's daily files too,
#: where a site rotates them so), with two records or more.
ROTATED = {
    "pbs": ("pbs", "xdmod-accounting-logs.log"),
    "jobcomp": ("slurm", "jobcomp-filetxt-quoted-lines.log"),
    "lsf": ("lsf", "xdmod-accounting-logs.log"),
    "sge": ("uge", "xdmod-accounting-logs.log"),
}


def rotated_mid_record(fmt: str) -> tuple[str, str]:
    """The real log of ``fmt`` rotated by copytruncate while its first record was
    written: the rotated copy ends inside that record, and the log, emptied, starts with
    the rest of it, which the daemon appended (O_APPEND) before the records after it."""
    text = shared_path("logs", *ROTATED[fmt]).read_text(encoding="utf-8")
    cut = text.index("\n") // 2
    return text[:cut], text[cut:]


@pytest.mark.parametrize("piped", [False, True])
@pytest.mark.parametrize("fmt", sorted(ROTATED))
def test_a_log_rotated_inside_a_record_has_its_first_line_left_with_a_warning(
        cli: Cli, tmp_path: Path, fmt: str, piped: bool) -> None:
    """logrotate's copytruncate cut a record in two: the log went on with the rest of
    it as its line 1, which was refused as not a record, the whole log with it, so the
    nightly ingest of the log failed every time and only --on-error skip got past it.
    The line is left with a warning naming it and why; the records after it are stored
    as the log read from its line 2 stores them, and nothing is rejected."""
    _, log_text = rotated_mid_record(fmt)
    log = tmp_path / "accounting"
    log.write_text(log_text, encoding="utf-8")
    after = tmp_path / "after"
    after.write_text(log_text[log_text.index("\n") + 1:], encoding="utf-8")
    assert cli("ingest", fmt, str(after), "--system", "site", db="after.db").exit_code == 0

    for on_error in ("fail", "skip"):
        where, name = ("-", "<stdin>") if piped else (str(log), str(log))
        result = cli("ingest", fmt, where, "--system", "site", "--on-error", on_error,
                     "--reread", input=log_text.encode("utf-8") if piped else None)
        assert result.exit_code == 0, result.output
        kind = {"pbs": "PBS / Torque / PBS Pro accounting logs",
                "jobcomp": "Slurm jobcomp/filetxt job completion log",
                "lsf": "IBM LSF lsb.acct accounting",
                "sge": "Grid Engine"}[fmt]
        assert f"Warning: {name}: line 1 is not a record of {kind}, where line 2 and those " \
               "after it are: it is the rest of a record the rotated file holds " \
               "(logrotate's copytruncate emptied the log while that record was written), " \
               "left unread" in result.stderr.splitlines()
        assert "rejected line" not in result.stdout
    assert exported(cli) == exported(cli, db="after.db") != []
    assert json.loads(cli("runs", "rejects", "--format", "json").stdout) == []


@pytest.mark.parametrize("copy_name", ["accounting.1", "accounting-20241202"])
@pytest.mark.parametrize("fmt", sorted(ROTATED))
def test_the_rotated_copy_says_its_last_line_went_on_in_the_log(
        cli: Cli, tmp_path: Path, fmt: str, copy_name: str) -> None:
    """The copy logrotate's copytruncate rotated ends inside the record being written:
    its last line was said to be "left for the next ingest", as a live log's, but the
    copy will not grow and the rest of that record is the log's line 1. Named as
    logrotate names it beside the log, it says so; a file of that name alone is still
    taken for a log being written."""
    copy_text, log_text = rotated_mid_record(fmt)
    copy = tmp_path / copy_name
    copy.write_text(copy_text, encoding="utf-8")
    alone = cli("ingest", fmt, str(copy), "--system", "site", db="alone.db")
    assert alone.exit_code == 0, alone.output
    assert (f"Warning: {copy}: the last line has no newline: left for the next ingest, as "
            "the scheduler may still be writing it") in alone.stderr.splitlines()

    log = tmp_path / "accounting"
    log.write_text(log_text, encoding="utf-8")
    result = cli("ingest", fmt, str(copy), "--system", "site")
    assert result.exit_code == 0, result.output
    assert (f"Warning: {copy}: the last line has no newline: left unread, as the file is the "
            f"copy of {log} rotated while that record was written (logrotate's "
            "copytruncate), which will not grow: the rest of that record is line 1 of "
            f"{log}") in result.stderr.splitlines()
    assert "next ingest" not in result.stderr


def test_a_log_rotated_inside_a_record_without_system_is_asked_for_it(
        cli: Cli, tmp_path: Path) -> None:
    """A PBS log whose line 1 is its first record's rest after the time stamp
    (";E;6.edge...") was told to be SWF ('read it with perfpredict ingest swf') where
    --system was missing, and where a later record was bad: --system is asked for, as
    of any PBS log, and the bad record named."""
    text = shared_path("logs", "pbs", "xdmod-accounting-logs.log").read_text()
    log = tmp_path / "accounting"
    log.write_text(text[len("12/21/2009 15:27:00"):])
    result = cli("ingest", "pbs", str(log))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"Error: {log}: pbs logs do not name the machine their "
                                     "jobs ran on; pass --system NAME (nothing from this "
                                     "file was stored)")
    # a bad record after it is named as such, not as the file being SWF
    lines = log.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace("11/09/2014", "11/39/2014", 1)
    log.write_text("".join(lines))
    result = cli("ingest", "pbs", str(log), "--system", "site")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {log}:3: the record's time '11/39/2014 "
                                    "23:59:51' is not a date and time"), result.stderr


@pytest.mark.parametrize(("fmt", "first_line", "says"), [
    # a record of its format, damaged: the line to fix
    ("pbs", lambda: "11/39/2014 23:59:51;E;6464684.anonhost;user=anonuser Exit_status=0",
     ":1: the record's time '11/39/2014 23:59:51' is not a date and time"),
    # a log of another format given: its first record says which (read in the test, not
    # at collection, where a clone without ../shared errs instead of skipping)
    ("pbs", lambda: (shared_path("logs", "sge", "xdmod-accounting-logs.log")
                     .read_text().splitlines()[0]),
     ":1: the file looks like Grid Engine (sge), not pbs; read it with 'perfpredict "
     "ingest sge'"),
    ("lsf", lambda: "garbage", ":1: not an lsb.acct record"),
])
def test_a_first_line_that_is_no_fragment_of_a_rotation_is_still_refused(
        cli: Cli, tmp_path: Path, fmt: str, first_line: Callable[[], str], says: str
) -> None:
    """Only a line 1 that is no record of the log's format, before lines that are, is
    left: a damaged record is refused at its line, a file of another format as such,
    and a line before lines that are no records either (a file of no format) too."""
    log = tmp_path / "accounting"
    rest = "" if fmt == "lsf" else rotated_mid_record(fmt)[1].split("\n", 1)[1]
    log.write_text(first_line() + "\n" + (rest or "more garbage\n"), encoding="utf-8")
    result = cli("ingest", fmt, str(log), "--system", "site")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: {log}{says}"), result.stderr
    assert exported(cli) == []
    sge = shared_path("logs", "sge", "xdmod-accounting-logs.log")
    refused = cli("ingest", "pbs", str(sge), "--system", "site")
    assert refused.exit_code == 2
    assert "the file looks like Grid Engine (sge), not pbs" in refused.stderr


@pytest.mark.parametrize("fmt", sorted(CUT_INSIDE_A_VALUE))
def test_a_gzip_copy_cut_inside_its_last_line_is_refused_naming_the_log_to_read(
        cli: Cli, tmp_path: Path, fmt: str) -> None:
    """A compressed copy of a log still being written (or of one cut short) will not
    grow: it was refused with 'ingest the file again once it is whole'. The fix names
    the log itself, or a copy made once whole; the good records are stored under skip,
    and the whole log then adds the cut record's job alone."""
    parts, cut_after = CUT_INSIDE_A_VALUE[fmt]
    lines = shared_path("logs", *parts).read_text(encoding="utf-8").splitlines(keepends=True)
    text = "".join(lines[:LOG_LINES])
    copy = tmp_path / "accounting.gz"
    copy.write_bytes(gzip.compress(
        text[:text.rindex(cut_after) + len(cut_after)].encode("utf-8")))
    cut_line = text[:text.rindex(cut_after)].count("\n") + 1

    result = cli("ingest", fmt, str(copy), "--system", "site")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: {copy}:{cut_line}: the last line has no newline at its end, as every "
        "record of this log has: the log was cut short, or compressed or copied while that "
        "line was written, and the record may be cut inside a value; ingest the log itself "
        "(its last line is left for the next ingest until it is whole) or a copy made once "
        "it is whole; nothing from this file was stored (fix the line, or pass --on-error "
        "skip to store the good records and keep this one as a reject)"]
    assert exported(cli) == []

    skipped = cli("ingest", fmt, str(copy), "--system", "site", "--on-error", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert [r["line"] for r in json.loads(cli("runs", "rejects", "--format", "json").stdout)
            ] == [cut_line]
    whole_rows = exported_whole(cli, tmp_path, fmt, text)
    assert cli("ingest", fmt, str(tmp_path / "whole"), "--system", "site").exit_code == 0
    assert sorted(map(str, exported(cli))) == sorted(map(str, whole_rows))


def test_a_results_csv_without_a_final_newline_is_read_whole(cli: Cli, tmp_path: Path) -> None:
    """A table of results is written once, by a script or an editor that may leave its
    last line without a newline: it is whole, and its last row is stored without a
    note (only a scheduler's log is read up to its last newline)."""
    table = tmp_path / "results.csv"
    table.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
                     "lulesh,site,30,1,8,1,120.5\nlulesh,site,30,2,8,1,64.25", encoding="utf-8")
    result = cli("ingest", "csv", str(table))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert sorted(row["runtime_s"] for row in exported(cli)) == ["120.5", "64.25"]


#: Files a command or a converter writes once: a real sacct dump that ends its last job
#: without a newline, and the first jobs of a real SWF trace so ended.
WRITTEN_ONCE = {
    "sacct": ("slurm", "slurm2sql-test-data2.psv"),
    "swf": ("swf", "NASA-iPSC-1993-3.1-cln.swf"),
}


@pytest.mark.parametrize("fmt", sorted(WRITTEN_ONCE))
def test_a_dump_without_a_final_newline_is_read_whole(cli: Cli, tmp_path: Path,
                                                      fmt: str) -> None:
    """sacct's output and an SWF trace are written once, by a command or a converter,
    and may end without a newline (slurm2sql's test data does): the last job is stored,
    as from the same file with the newline, and nothing is said of it (left for the
    next ingest, it was left for good)."""
    lines = shared_path("logs", *WRITTEN_ONCE[fmt]).read_text(
        encoding="utf-8").splitlines()[:LOG_LINES]
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    cut.write_text("\n".join(lines), encoding="utf-8")
    whole.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("ingest", fmt, str(cut), "--system", "site")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert cli("ingest", fmt, str(whole), "--system", "site", db="whole.db").exit_code == 0
    assert exported(cli) == exported(cli, db="whole.db") != []


@pytest.mark.parametrize("fmt", ["jobcomp", "lsf", "pbs", "sacct-json", "sge", "swf"])
def test_a_darshan_log_given_to_a_scheduler_format_is_named(cli: Cli, fmt: str) -> None:
    """A Darshan log in a folder of accounting files (``ingest pbs logs/*``) was refused
    as a damaged or foreign record ("not a PBS accounting record", SWF's "the file is
    damaged here", sacct-json's "Extra data at column 5"); it is named now, little- and
    big-endian alike, with the command that reads it, and nothing is stored."""
    for log in ("skew_io__skew-app.darshan", "release_logs__mpi-io-test-ppc64-3.1.8.darshan"):
        path = shared_path("logs", "darshan", log)
        result = cli("ingest", fmt, str(path), "--system", "site")
        assert result.exit_code == 2
        assert result.stderr.startswith(f"Error: {path}:1: the file is a Darshan I/O log, "
                                        f"not {fmt}; read it with 'perfpredict ingest darshan'")
    assert '"n_runs": 0' in cli("runs", "stats", "--format", "json").stdout


#: A Slurm job script with a comma in a command: its directive, at line 2, shows it.
JOB_SCRIPT = ("#!/bin/bash\n#SBATCH -N 4 # nodes\n#SBATCH --time=02:00:00\n"
              "srun ./lmp -in in.lj,in.eam\n")
JOB_SCRIPT_FIX = (
    "perfpredict reads no job scripts; ingest the scheduler's accounting of the jobs once "
    "they ran (sacct's output, or the PBS, LSF or Grid Engine log), or write each run as a "
    "row of a CSV with the columns app, system, nodes and runtime_s (the seconds it ran) "
    "and read that with 'perfpredict ingest csv'\n")


@pytest.mark.parametrize("fmt", ["csv", "sacct", "sacct-json", "jobcomp", "swf", "pbs", "lsf",
                                 "sge", "darshan"])
def test_a_job_script_is_refused_at_its_directive_in_every_format(
        cli: Cli, tmp_path: Path, fmt: str) -> None:
    """A job script given to ingest was a bad first record with each format's own fix:
    a CSV header naming '#!/bin/bash', 26 fields of Open XDMoD's order, invalid JSON,
    18 SWF fields, "not a readable Darshan log", and for PBS, LSF and Darshan first
    "pass --system NAME", which would not have made it readable either. It is one
    message now, at the line that shows the script, whatever the format, --system and
    --on-error; nothing is stored."""
    path = tmp_path / "job.sh"
    path.write_text(JOB_SCRIPT)
    for args in ((), ("--system", "site"), ("--system", "site", "--on-error", "skip")):
        result = cli("ingest", fmt, str(path), *args)
        assert result.exit_code == 2, result.output
        assert result.output == (f"Error: {path}:2: the file is a batch job script ('#SBATCH "
                                 f"-N 4 # nodes'), not a log of jobs: {JOB_SCRIPT_FIX}")
    stats = cli("runs", "stats", "--format", "json").stdout
    assert '"n_runs": 0' in stats and '"n_batches": 0' in stats


@pytest.mark.parametrize("fmt", ["csv", "sacct", "pbs"])
def test_a_job_script_piped_in_is_refused_naming_standard_input(tmp_path: Path,
                                                                 fmt: str) -> None:
    """A script piped in is refused as a file is, in the copy ingest reads, named as
    the stream it came from; a '#!' line alone shows a script."""
    from perfpredict.cli.app import app

    result = CliRunner().invoke(app, ["--db", f"sqlite:///{tmp_path / 'store.db'}", "ingest",
                                      fmt, "-", "--system", "site"],
                                input="#!/bin/bash\nsrun ./a,b\n")
    assert result.exit_code == 2, result.output
    assert result.output == ("Error: <stdin>:1: the file is a batch job script ('#!/bin/bash'), "
                             f"not a log of jobs: {JOB_SCRIPT_FIX}")


@pytest.mark.parametrize("source", sorted(ROUND_TRIPS))
def test_an_export_read_back_where_it_came_from_changes_nothing(
        cli: Cli, tmp_path: Path, source: str) -> None:
    """A store's own export read back (a restored backup, a merge) finds every run
    stored. A sacct --json job, stored with no line of its own, took the export's line
    as its source line (a line of another file than its batch's) and was counted as
    "given fields they lacked"."""
    if source == "darshan":
        pytest.importorskip("darshan")
    fmt = source.split("-nasa")[0]
    assert cli("ingest", fmt, str(ROUND_TRIPS[source](tmp_path)), "--system", "site").exit_code == 0
    export = tmp_path / "export.csv"
    export.write_text(cli("runs", "export", "--format", "csv").stdout)
    before = sqlite_rows(tmp_path / "store.db")
    result = cli("ingest", "csv", str(export))
    assert result.exit_code == 0, result.output
    assert "given fields" not in result.stdout and " 0 stored" in result.stdout
    assert sqlite_rows(tmp_path / "store.db") == before


def sqlite_rows(db: Path) -> list[tuple[object, ...]]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM runs ORDER BY id").fetchall()


def test_a_json_export_gives_a_darshan_logs_details_as_an_object(cli: Cli) -> None:
    """The CSV export writes a Darshan log's details as JSON text, which ingest csv
    reads back; the JSON export wrote the same text as a string inside the JSON, which
    a script (jq '.darshan.posix_bytes_read') had to decode a second time."""
    pytest.importorskip("darshan")
    log = shared_path("logs", "darshan", "imbalanced_io__imbalanced-io.darshan")
    assert cli("ingest", "darshan", str(log), "--system", "site").exit_code == 0
    (as_csv,) = exported(cli)
    (as_json,) = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert as_json["darshan"] == json.loads(as_csv["darshan"])
    assert as_json["darshan"]["posix_partial"] is True


def test_a_file_read_again_with_another_system_says_where_its_runs_are(cli: Cli) -> None:
    """An LSF log read with the wrong --system, then with the right one, was "already
    ingested" and nothing more: its runs stayed under the wrong system unsaid. The
    rerun says where they are and how to move them; the same system in another
    spelling says nothing more."""
    log = shared_path("logs", "lsf", "xdmod-accounting-logs.log")
    assert cli("ingest", "lsf", str(log), "--system", "wrong").exit_code == 0
    same = cli("ingest", "lsf", str(log), "--system", "WRONG")
    assert same.exit_code == 0 and not same.stderr
    again = cli("ingest", "lsf", str(log), "--system", "right")
    assert again.exit_code == 0
    assert again.stdout.startswith(f"{log}: already ingested (2 records); nothing stored.")
    assert again.stderr == (
        f"Warning: {log}: it was ingested with --system wrong, and its runs are stored "
        "under wrong, not right; to store them under right, take it out first "
        f"(perfpredict runs delete --file {log}) and ingest it again\n")
    assert cli("runs", "delete", "--file", str(log), "--yes").exit_code == 0
    assert cli("ingest", "lsf", str(log), "--system", "right").exit_code == 0
    assert {row["system"] for row in exported(cli)} == {"right"}


@pytest.mark.parametrize(("fmt", "log", "option", "says"), [
    ("pbs", ("pbs", "xdmod-accounting-logs.log"), ("--columns", "JobID,State"),
     "--columns names the fields of a sacct -P dump without a header line; a pbs file is "
     "read without it: leave it out"),
    ("lsf", ("lsf", "xdmod-accounting-logs.log"), ("--swf-allow-extra-fields",),
     "--swf-allow-extra-fields reads extended SWF variants; a lsf file is read without it: "
     "leave it out"),
    ("swf", ("swf", "NASA-iPSC-1993-3.1-cln.swf"), ("--app-from", "comment"),
     "--app-from reads an application from a job's name or comment; a swf file has none (its "
     "executable number is the application): leave it out"),
])
def test_an_option_of_another_formats_parser_is_refused(
        cli: Cli, fmt: str, log: tuple[str, str], option: tuple[str, ...], says: str) -> None:
    """'ingest pbs --columns ...' and 'ingest lsf --swf-allow-extra-fields' read the file
    as if the option had not been given, without a word."""
    path = shared_path("logs", *log)
    result = cli("ingest", fmt, str(path), "--system", "x", *option)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {says}\n"
    assert '"n_runs": 0' in cli("runs", "stats", "--format", "json").stdout
