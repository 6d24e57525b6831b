from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.errors import BadInputError
from perfpredict.ingest import IngestOptions, ingest_file
from perfpredict.ingest.csv_results import parse
from perfpredict.ingest.records import BadRecord, RunRecord
from perfpredict.report.csv_rows import write_csv
from perfpredict.store.queries import export_runs, iter_runs, run_stats
from tests.conftest import REPO

HEADER = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s,custom\n"


def write(tmp_path: Path, text: str, name: str = "runs.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_parses_contract_columns_and_keeps_extras(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "lulesh,opal,TGV1024,4,36,1,55.1,x\n")
    (record,) = list(parse(path, IngestOptions()))
    assert isinstance(record, RunRecord)
    assert (record.app, record.system, record.nodes, record.ranks_per_node) == ("lulesh", "opal", 4, 36.0)
    assert record.total_ranks == 144
    assert record.problem_size_num == 1024.0
    assert record.runtime_s == 55.1
    assert record.extra == {"custom": "x"}
    assert record.line_no == 2


def test_extra_fields_are_numbers_only_as_tables_write_them(tmp_path: Path) -> None:
    """A Slurm array task's id (``4103947_100``) stays text: read as Python reads
    numbers it became 4103947100, and a store exported and ingested again lost which
    task each job was."""
    path = write(tmp_path, "app,system,nodes,runtime_s,task,count,share,label,big,version\n"
                           "a,s,1,2.5,4103947_100,12,0.5,007,1e3,3.10\n")
    (record,) = list(parse(path, IngestOptions()))
    assert isinstance(record, RunRecord)
    assert record.extra == {"task": "4103947_100", "count": 12, "share": 0.5, "label": "007",
                            "big": 1000.0, "version": "3.10"}
    assert type(record.extra["count"]) is int


@pytest.mark.parametrize("column", ["requested_walltime_s", "io_bytes", "max_rss_bytes",
                                    "gpus"])
def test_a_negative_request_or_amount_is_refused_at_its_line(tmp_path, column: str) -> None:  # type: ignore[no-untyped-def]
    """A requested walltime of -3600 s was stored, and advise walltime then read the job
    as one that asked for nothing; sizes and GPU counts are no more negative."""
    path = write(tmp_path, f"app,system,nodes,runtime_s,{column}\nlulesh,opal,2,9.5,0\n"
                           f"lulesh,opal,4,5.5,-3600\n")
    bad = [item for item in parse(path, IngestOptions()) if isinstance(item, BadRecord)]
    assert [(b.line_no, b.reason) for b in bad] == [
        (3, f"{column} must not be negative, got -3600")]


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("lulesh,opal,s,4,36,1,-3,x", "runtime_s must be positive"),
        ("lulesh,opal,s,0,36,1,3,x", "nodes must be positive"),
        ("lulesh,opal,s,four,36,1,3,x", "column 'nodes' must be a number"),
        # Python's digit groups are no table's number
        ("lulesh,opal,s,1_6,36,1,3,x", "column 'nodes' must be a number, got '1_6'"),
        ("lulesh,opal,s,4,36,1,1_000,x", "column 'runtime_s' must be a number"),
        ("lulesh,opal,s,4,36,1,inf,x", "must be finite"),
        ("lulesh,opal,s,4,36,1,,x", "runtime_s is empty"),
        ("lulesh,opal,s,4,36,1,nan,x", "runtime_s is missing ('nan')"),
        ("lulesh,opal,s,4,36,1", "expected 8 fields as in the header, found 6; write an "
         "empty field between two commas where a value is unknown"),
        ("lulesh,opal,s,4,36,1,3,x,y", "found 9; quote fields that contain commas"),
        # a note as a hand-written table has one, of any number of commas
        ("# ARCHER2, rerun after the upgrade", "found 2; a CSV table holds no comments: "
         "delete the line"),
        (",opal,s,4,36,1,3,x", "column 'app' is empty"),
        # how a spreadsheet writes what was meant, said as the number to write instead
        ("lulesh,opal,s,4,36,1,01:30:00,x",
         "got '01:30:00'; durations are written in seconds (01:30:00 is 5400)"),
        # a number with its unit, as a center's own tables write them
        ("lulesh,opal,s,4,36,1,1.5h,x", "got '1.5h'; durations are written in seconds (1.5h "
         "is 5400)"),
        ("lulesh,opal,s,4,36,1,90 min,x", "durations are written in seconds (90 min is 5400)"),
        ("lulesh,opal,s,4,36,1,250ms,x", "durations are written in seconds (250ms is 0.25)"),
        ('lulesh,opal,s,4,36,1,"1,234.5",x', "without thousands separators"),
        ('lulesh,opal,s,4,36,1,"100,5",x', "with '.' as the decimal point"),
    ],
)
def test_bad_rows_name_their_line_and_reason(tmp_path: Path, row: str, reason: str) -> None:
    path = write(tmp_path, HEADER + "lulesh,opal,s,2,36,1,9.5,x\n" + row + "\n")
    items = list(parse(path, IngestOptions()))
    bad = items[-1]
    assert isinstance(bad, BadRecord)
    assert bad.line_no == 3
    assert reason in bad.reason


@pytest.mark.parametrize(("size", "bytes_"), [("1.5G", "1610612736"), ("512M", "536870912"),
                                             ("2TB", "2199023255552")])
def test_a_size_with_its_unit_is_refused_with_its_bytes(tmp_path: Path, size: str,
                                                        bytes_: str) -> None:
    """io_bytes of '1.5G' was refused as "must be a number" without a word of what to
    write; sizes are said in bytes as sacct's suffixes count them (K = 1024)."""
    path = write(tmp_path, f"app,system,nodes,runtime_s,io_bytes\nlulesh,opal,2,9.5,{size}\n")
    (bad,) = parse(path, IngestOptions())
    assert isinstance(bad, BadRecord)
    assert bad.reason == (f"column 'io_bytes' must be a number, got {size!r}; sizes are "
                          f"written in bytes ({size} is {bytes_})")


def test_a_header_naming_a_column_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    """Which runtime_s is the runtime is anyone's guess; unnamed columns (trailing
    commas) hold nothing read and pass."""
    twice = write(tmp_path, "app,system,nodes,runtime_s,runtime_s\na,s,1,10,20\n")
    (bad,) = list(parse(twice, IngestOptions()))
    assert isinstance(bad, BadRecord) and bad.line_no == 1
    assert "names runtime_s more than once" in bad.reason
    trailing = write(tmp_path, "app,system,nodes,runtime_s,,\na,s,1,10,,\n", "trailing.csv")
    (run,) = list(parse(trailing, IngestOptions()))
    assert isinstance(run, RunRecord) and run.runtime_s == 10.0


@pytest.mark.parametrize(("header", "renames"), [
    ("application,machine,input,num_nodes,elapsed",
     "rename application to app, elapsed to runtime_s, num_nodes to nodes, machine to "
     "system, input to problem_size in the header (runtime_s in seconds)"),
    ("App,System,Nodes,Runtime_s", "rename App to app, Runtime_s to runtime_s, Nodes to nodes, "
     "System to system in the header (runtime_s in seconds)"),
    ("app,system,nodes,time", "rename time to runtime_s in the header (runtime_s in seconds)"),
    # a spreadsheet's headings: spaces, brackets, the unit when it is seconds
    ("App, System, Nodes, Runtime (s)", "rename App to app, Runtime (s) to runtime_s, Nodes "
     "to nodes, System to system in the header (runtime_s in seconds)"),
    ("Application,Machine,Num Nodes,Wall time [s]", "rename Application to app, Wall time [s] "
     "to runtime_s, Num Nodes to nodes, Machine to system in the header"),
    # a runtime in another unit: no rename alone fixes it
    ("app,system,nodes,time_min", "convert time_min (minutes) to seconds in a column runtime_s"),
    ("application,system,nodes,Runtime (h)", "rename application to app in the header; "
     "convert Runtime (h) (hours) to seconds in a column runtime_s"),
    ("x,y", "the header names x, y; see 'perfpredict ingest --help'"),
    # one column of a known name: not a table of other separators ("uses semicolons")
    ("nodes", "the header names nodes; see 'perfpredict ingest --help'"),
    ("app", "the header names app; see 'perfpredict ingest --help'"),
    # a spreadsheet's export in its locale's separator: read as one column, and said so
    ("app;system;nodes;runtime_s", "its columns are separated by semicolons, not commas; "
     "save the table as comma-separated values with '.' as the decimal point"),
    ("app\tsystem\tnodes\truntime_s", "its columns are separated by tabs, not commas"),
    ("JobID|JobName|Partition", "for sacct -P output use 'perfpredict ingest sacct'"),
    # a ';' that is not a separator of column names says nothing of one
    ("\x07;\x03k", "the header names \x07;\x03k; see 'perfpredict ingest --help'"),
])
def test_a_header_in_other_words_is_refused_with_the_renames_it_needs(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, header: str, renames: str) -> None:
    """Another center's benchmark table names its columns its own way: the refusal says
    which to rename, and reads none of them in place of perfpredict's (a "time" in
    minutes taken for seconds would store wrong runtimes without a word)."""
    path = write(tmp_path, header + "\n" + ",".join(["1"] * header.count(",")) + ",1\n")
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: the header needs at least the columns app and "
                           "runtime_s"), line
    assert renames in line
    # nothing in the file is a good record, so skipping bad records is no fix for it
    assert line.endswith("nothing from this file was stored; --on-error skip goes on with "
                         "the other files and keeps this one as a reject"), line
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1


@pytest.mark.parametrize(("table", "fix"), [
    ("app,system,cores,runtime_s\nlammps,lumi,128,10.5\n", "rename cores to total_ranks in "
     "the header (total_ranks counts MPI ranks: cores / threads_per_rank)"),
    ("app,system,runtime_s\nlammps,lumi,10.5\n", "the header names app, system, runtime_s"),
])
def test_a_header_without_a_scale_is_refused_at_its_line(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, table: str, fix: str) -> None:
    """Without nodes or total_ranks every run would be refused for want of a scale: the
    file is refused once, at its header, with the rename where a column goes by another
    name (CSC's chemistry tables count cores)."""
    path = write(tmp_path, table)
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: the header has neither nodes nor total_ranks, "
                           "one of which gives each run's scale; " + fix), line
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1


def test_scheduler_jobs_need_no_scale_column(tmp_path: Path) -> None:
    """A job that never ran (``runs export`` writes them) has no node count."""
    path = write(tmp_path, "job_id,app,system,state,runtime_s\n42,vasp,x,CANCELLED,0\n")
    (run,) = list(parse(path, IngestOptions()))
    assert isinstance(run, RunRecord) and run.nodes is None and run.job_id == "42"


def test_bad_file_is_refused_whole_and_store_untouched(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = write(tmp_path, HEADER + "a,s,p,1,1,1,10,\n", "good.csv")
    ingest_file(store, "csv", good)
    bad = write(tmp_path, HEADER + "a,s,p,2,1,1,6,\na,s,p,4,1,1,-1,\n", "bad.csv")
    with pytest.raises(BadInputError) as err:
        ingest_file(store, "csv", bad)
    assert "bad.csv:3:" in str(err.value)
    assert "fix the line, or pass --on-error skip to store the good records" in str(err.value)
    assert run_stats(store)["n_runs"] == 1
    assert run_stats(store)["n_batches"] == 1


def test_skip_mode_keeps_rejects_and_reingest_is_idempotent(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, HEADER + "a,s,p,2,1,1,6,\na,s,p,4,1,1,-1,\na,s,p,2,1,1,6,\n")
    report = ingest_file(store, "csv", path, IngestOptions(on_error="skip"))
    # Identical rows are genuine repetitions and both kept.
    assert (report.n_records, report.n_stored, report.n_rejected) == (2, 2, 1)
    again = ingest_file(store, "csv", path, IngestOptions(on_error="skip"))
    assert again.already_ingested
    stats = run_stats(store)
    assert (stats["n_runs"], stats["n_rejects"]) == (2, 1)
    # Read again on purpose, the identical rows keep their keys (content, file, occurrence)
    # and the rejects are this reading's, not added to the first's.
    reread = ingest_file(store, "csv", path, IngestOptions(on_error="skip", reread=True))
    assert (reread.already_ingested, reread.n_records, reread.n_stored,
            reread.n_duplicates, reread.n_rejected) == (False, 2, 0, 2, 1)
    stats = run_stats(store)
    assert (stats["n_runs"], stats["n_rejects"], stats["n_batches"]) == (2, 1, 1)


#: A results table whose line 3 is rejected (a node count in words), then fixed; its
#: application's name is quoted, as a spreadsheet writes one with a comma.
MIXED = 'app,system,nodes,runtime_s\nx,s,1,10\n"x, y",s,two,5\nx,s,4,3\n'


def test_a_rejected_line_fixed_and_ingested_again_stores_that_line_alone(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """The rejection said to fix the line and ingest the file again; doing so stored every
    row again (lines 2 and 4 twice), with a warning naming 'runs delete --batch 1'. The
    fixed file stores its fixed line, says which, and ingested again stores nothing."""
    path = write(tmp_path, MIXED)
    first = cli("ingest", "csv", str(path), "--on-error", "skip")
    assert first.exit_code == 0, first.output
    assert ("  rejected line 3: column 'nodes' must be a number, got 'two'\n"
            "  fix the line and ingest the file again: only what was rejected is stored "
            "then\n") in first.stdout
    path.write_text(MIXED.replace("two", "2"))
    fixed = cli("ingest", "csv", str(path))
    assert (fixed.exit_code, fixed.stderr) == (0, ""), fixed.output
    assert fixed.stdout == (
        f"{path}: 3 records, 1 stored (line 3, rejected by batch 1), 2 already in the store "
        "(unchanged since batch 1), 0 attached to stored jobs, 0 rejected.\n")
    again = cli("ingest", "csv", str(path), "--format", "json")
    assert json.loads(again.stdout)[0]["already_ingested"] is True
    stats = json.loads(cli("runs", "stats", "--format", "json").stdout)
    assert stats["n_runs"] == 3
    runs = json.loads(cli("runs", "export", "--format", "json").stdout)
    assert sorted((run["app"], run["nodes"]) for run in runs) == [
        ("x", 1), ("x", 4), ("x, y", 2)]
    # the fixed file is the first one's too: deleting it takes both batches' runs
    assert cli("runs", "delete", "--file", str(path), "--yes").exit_code == 0
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 0


def test_a_fixed_line_is_said_in_the_json_summary_and_a_second_fix_reads_the_first(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """--format json gives the batch and the lines as data; two lines rejected, fixed one
    at a time, each ingest stores the line it fixed."""
    path = write(tmp_path, MIXED + "x,s,eight,2\n")
    cli("ingest", "csv", str(path), "--on-error", "skip")
    path.write_text(MIXED.replace("two", "2") + "x,s,eight,2\n")
    once = json.loads(cli("ingest", "csv", str(path), "--on-error", "skip", "--format",
                          "json").stdout)[0]
    assert {name: once[name] for name in ("n_stored", "n_duplicates", "n_rejected",
                                          "fixed_from_batch", "fixed_lines", "warnings")} == {
        "n_stored": 1, "n_duplicates": 2, "n_rejected": 1, "fixed_from_batch": 1,
        "fixed_lines": [3], "warnings": []}
    path.write_text(MIXED.replace("two", "2") + "x,s,8,2\n")
    twice = json.loads(cli("ingest", "csv", str(path), "--format", "json").stdout)[0]
    assert (twice["n_stored"], twice["fixed_from_batch"], twice["fixed_lines"]) == (1, 2, [5])
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 4


def test_a_stored_line_changed_with_the_rejected_one_stores_the_file_again_as_before(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """A line that was stored changed too: the file is an edit, stored again beside the
    first with the warning naming the batch to delete, as any edited file is."""
    path = write(tmp_path, MIXED)
    cli("ingest", "csv", str(path), "--on-error", "skip")
    path.write_text(MIXED.replace("two", "2").replace("x,s,1,10", "x,s,1,11"))
    edited = cli("ingest", "csv", str(path), "--format", "json")
    (report,) = json.loads(edited.stdout)
    assert (report["n_stored"], report["fixed_from_batch"], report["fixed_lines"]) == (3, None, [])
    (warning,) = report["warnings"]
    assert warning.endswith("'perfpredict runs delete --batch 1' takes the earlier runs out")
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_runs"] == 5


def test_a_table_without_a_system_column_is_refused_once_at_its_header(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """Each row was refused alone at line 2 with a fix suggesting --on-error skip, which
    rejected every row; the header says it once, with the two fixes that work."""
    path = write(tmp_path, "app,nodes,runtime_s\nmy,1,1000\nmy,2,510\n", "n.csv")
    refused = cli("ingest", "csv", str(path))
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"Error: {path}:1: the header has no system column, so no run names the machine it "
        "ran on; add a 'system' column or pass --system NAME; nothing from this file was "
        "stored; --on-error skip goes on with the other files and keeps this one as a "
        "reject\n")
    renamed = cli("ingest", "csv", str(write(tmp_path, "app,machine,nodes,runtime_s\nmy,a,1,9\n",
                                            "m.csv")))
    assert renamed.exit_code == 2
    assert "pass --system NAME (rename machine to system in the header)" in renamed.stderr
    stored = cli("ingest", "csv", str(path), "--system", "opal")
    assert stored.exit_code == 0 and "2 records, 2 stored" in stored.stdout


def test_rows_without_system_are_rejected_alone_and_new_systems_keep_file_order(  # type: ignore[no-untyped-def]
        store, tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "a,zeta,p,1,1,1,6,\na,,p,2,1,1,5,\na,alpha,p,4,1,1,4,\n"
                 "a,zeta,p,8,1,1,3,\n")
    report = ingest_file(store, "csv", path, IngestOptions(on_error="skip"))
    assert (report.n_stored, report.n_rejected, report.new_systems) == (3, 1, ["zeta", "alpha"])
    assert [r["line_no"] for r in report.first_rejects] == [3]


def test_export_ingests_back_unchanged(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, HEADER + "a,s,1400k-atoms,2,4,2,6.5,q\na,s,1400k-atoms,4,4,2,3.5,r\n")
    ingest_file(store, "csv", path)
    exported = tmp_path / "export.csv"
    with exported.open("w") as fh:
        export = export_runs(store)
        assert write_csv(fh, export.columns, export.rows) == 2
    from perfpredict.store import open_store

    other = open_store(f"sqlite:///{tmp_path / 'other.db'}")
    report = ingest_file(other, "csv", exported)
    assert report.n_stored == 2

    def comparable(s):  # type: ignore[no-untyped-def]
        return sorted((r["app"], r["nodes"], r["runtime_s"], r["total_ranks"],
                       r["problem_size_num"], r["extra"]["custom"]) for r in iter_runs(s))

    assert comparable(other) == comparable(store)
    # The export of the copy is byte-identical to the export of the original.
    second = tmp_path / "export2.csv"
    with second.open("w") as fh:
        export = export_runs(other)
        write_csv(fh, export.columns, export.rows)
    assert second.read_text() == exported.read_text()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
                min_size=1, max_size=9))
def test_arbitrary_rows_never_crash_the_parser(tmp_path_factory, cells: list[str]) -> None:  # type: ignore[no-untyped-def]
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf).writerow(cells)
    path = tmp_path_factory.mktemp("h") / "fuzz.csv"
    path.write_text(HEADER + buf.getvalue(), encoding="utf-8")
    for item in parse(path, IngestOptions()):
        assert isinstance(item, (RunRecord, BadRecord))
        if isinstance(item, BadRecord):
            assert item.reason


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_table_in_utf16_or_utf32_is_refused_saying_so(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, encoding: str) -> None:
    """A spreadsheet's "Unicode text" export: read as UTF-8 its header would be refused as
    naming columns that are not there; the refusal names the encoding and the fix."""
    path = tmp_path / "runs.csv"
    path.write_bytes((HEADER + "lulesh,opal,s,2,36,1,9.5,x\n").encode(encoding))
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {path}: the file is UTF-16 or UTF-32 text; "
                                     "save it as UTF-8 (a spreadsheet's 'CSV UTF-8')")
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_batches": 0') == 1


def test_a_spreadsheets_csv_utf8_reads_as_the_plain_file(tmp_path: Path) -> None:
    """Excel's "CSV UTF-8": a byte-order mark, then CRLF line ends; the mark is not part
    of the first column's name (:func:`~perfpredict.ingest._text.lines.open_binary`)."""
    text = HEADER + "lulesh,opal,s,2,36,1,9.5,x\n"
    excel = write(tmp_path, "", "excel.csv")
    excel.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    assert list(parse(excel, IngestOptions())) == list(parse(write(tmp_path, text),
                                                             IngestOptions()))


def test_a_table_of_carriage_returns_alone_is_refused_with_the_fix(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """Excel for Mac's 'CSV (Macintosh)' ends lines in CR alone: the file read as one line,
    refused as a header naming 'runtime_smy,sys,1,1000...' with no fix."""
    path = write(tmp_path, "", "mac.csv")
    path.write_bytes(b"app,system,nodes,runtime_s\rmy,sys,1,1000\rmy,sys,2,510\r")
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: {path}:1: its lines end in a carriage return alone, as classic Mac OS and "
        "Excel for Mac's 'CSV (Macintosh)' write them, so the file reads as one line; save "
        "it as 'CSV UTF-8', or convert its line ends: tr '\\r' '\\n' < old.csv > new.csv; "
        "nothing from this file was stored; --on-error skip goes on with the other files "
        "and keeps this one as a reject")
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1
    path.write_bytes(path.read_bytes().replace(b"\r", b"\n"))  # the fix it names
    assert cli("ingest", "csv", str(path)).exit_code == 0


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_quoted_cell_over_several_lines_keeps_its_line_breaks(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, newline: str) -> None:
    """A spreadsheet cell with a line break (Alt+Enter) is written quoted over two lines.
    The lines were handed to the CSV reader without their ends, so 'first line' and
    'second line' were stored as 'first linesecond line'; the row after it keeps its own
    line number, and an export of it ingests back unchanged."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app

    text = (HEADER + 'lulesh,opal,s,2,36,1,9.5,"first line\nsecond line"\n'
            "lulesh,opal,s,4,36,1,5.5,y\n")
    path = tmp_path / "runs.csv"
    path.write_bytes(text.replace("\n", newline).encode())
    first, second = parse(path, IngestOptions())
    assert isinstance(first, RunRecord) and isinstance(second, RunRecord)
    assert first.extra == {"custom": "first line\nsecond line"}
    assert (first.line_no, second.line_no) == (2, 4)
    assert cli("ingest", "csv", str(path)).exit_code == 0
    export = cli("runs", "export", "--format", "csv").stdout
    (tmp_path / "export.csv").write_text(export)
    copy = ["--db", f"sqlite:///{tmp_path / 'copy.db'}"]
    assert CliRunner().invoke(app, [*copy, "ingest", "csv", str(tmp_path / "export.csv")]
                              ).exit_code == 0
    assert CliRunner().invoke(app, [*copy, "runs", "export"]).stdout == export


def test_times_without_a_zone_are_read_in_the_timezone_given(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A center's own job table writes local times. ``--timezone`` was accepted and
    ignored for CSV (they were read as UTC, an hour or two off), though the store treats
    CSV times as wall-clock times read in it; now a time without a zone is read in it,
    one with its offset as written, and one that never occurred there is refused at its
    line."""
    header = "app,system,nodes,runtime_s,job_id,submit_time\n"
    path = tmp_path / "jobs.csv"
    path.write_text(header + "a,s,1,10,1,2024-01-15T12:00:00\n"
                    "a,s,1,10,2,2024-07-15 12:00:00\n"
                    "a,s,1,10,3,2024-07-15T12:00:00+00:00\n")
    result = cli("ingest", "csv", str(path), "--timezone", "Europe/Berlin")
    assert result.exit_code == 0, result.output
    submitted = {row["job_id"]: row["submit_time"] for row in csv_rows(
        cli("runs", "export", "--format", "csv").stdout)}
    assert submitted == {"1": "2024-01-15T11:00:00Z", "2": "2024-07-15T10:00:00Z",
                         "3": "2024-07-15T12:00:00Z"}
    gap = tmp_path / "gap.csv"
    gap.write_text(header + "a,s,1,10,4,2024-03-31T02:30:00\n")
    refused = cli("ingest", "csv", str(gap), "--timezone", "Europe/Berlin")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(f"Error: {gap}:2: column 'submit_time' "
                                     "'2024-03-31T02:30:00' does not exist in Europe/Berlin")


def csv_rows(text: str) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_a_table_in_latin1_is_refused_at_its_first_unreadable_line(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, encoding: str) -> None:
    """Read with its bytes replaced, "Müller-Cluster" would be stored as a new system
    "M\ufffdller-Cluster": refused at the line, with the fix."""
    path = tmp_path / "runs.csv"
    path.write_bytes((HEADER + "lulesh,opal,s,2,36,1,9.5,x\n"
                      "lulesh,Müller-Cluster,s,2,36,1,9.5,x\n").encode(encoding))
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {path}:3: the line is not UTF-8 text (perhaps "
                                     "Latin-1 or Windows-1252")
    assert "save the file as UTF-8" in result.output
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1


def test_a_gzip_stream_damaged_at_its_start_is_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.csv.gz"
    path.write_bytes(gzip.compress((HEADER + "lulesh,opal,s,2,36,1,9.5,x\n").encode())[:12])
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: the compressed stream is damaged"), line


def test_a_text_a_store_cannot_keep_is_a_reject_not_a_failed_store(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An application name longer than its column, or a NUL character: PostgreSQL failed
    the whole file with an internal error, --on-error skip or not, where SQLite stored
    the row; now the row is refused on both, with its line and the fix."""
    path = write(tmp_path, HEADER + "a,s,p,1,1,1,6,\n" + "b" * 301 + ",s,p,2,1,1,5,\n"
                 "a\x00b,s,p,4,1,1,4,\na,s,p,8,1,1,3,\n")
    with pytest.raises(BadInputError, match=r":3: app is 301 characters long, more than the "
                       r"300 a store keeps; shorten it"):
        ingest_file(store, "csv", path)
    report = ingest_file(store, "csv", path, IngestOptions(on_error="skip"))
    assert (report.n_stored, report.n_rejected) == (2, 2)
    assert [r["reason"] for r in report.first_rejects][1] == (
        "app holds a NUL character, which a store cannot keep; remove it")


def test_a_runtime_below_a_microsecond_is_refused(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A series of 1e-300 s runs trained into every application's correction: other
    codes' estimates came out at ideal scaling, and advise divided by a walltime of 0."""
    path = write(tmp_path, HEADER + "a,s,p,1,1,1,1e-300,\n")
    with pytest.raises(BadInputError, match=r":2: runtime_s of 1e-300 s is below a "
                       r"microsecond, which no clock measures"):
        ingest_file(store, "csv", path)


@pytest.mark.parametrize(("row", "reason"), [
    # half a rank per node stored a run of 0 ranks (one node) without a word
    ("a,s,p,1,0.5,1,10,", ":2: ranks_per_node must be a whole number, got 0.5; where ranks "
     "are spread unevenly over the nodes, give total_ranks too"),
    ("a,s,p,4,2.5,1,10,", ":2: ranks_per_node must be a whole number, got 2.5"),
    ("a,s,p,1,0,1,10,", ":2: ranks_per_node must be positive, got 0"),
    ("a,s,p,1,-4,1,10,", ":2: ranks_per_node must be positive, got -4"),
    ("a,s,p,1,4,0.5,10,", ":2: column 'threads_per_rank' must be a whole number, got 0.5"),
    ("a,s,p,1,4,0,10,", ":2: threads_per_rank must be positive, got 0"),
])
def test_a_layout_of_part_ranks_or_threads_is_refused_at_its_line(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path, row: str, reason: str) -> None:
    """Ranks and threads come whole: the file is refused at the line, with the fix, and
    nothing of it is stored."""
    path = write(tmp_path, HEADER + row + "\n")
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"Error: {path}{reason}"), line
    assert cli("runs", "stats", "--format", "json").stdout.count('"n_runs": 0') == 1


def test_a_mean_of_ranks_per_node_is_read_where_total_ranks_gives_the_ranks(
        tmp_path: Path) -> None:
    """Ranks spread unevenly over the nodes (LULESH's 125 ranks on 4 nodes, MLPerf HPC's
    64 on 128, a sacct job's tasks over its step's nodes) give a mean ranks_per_node,
    which the bundled data sets and ``runs export`` write beside total_ranks."""
    path = write(tmp_path, "app,system,nodes,ranks_per_node,total_ranks,runtime_s\n"
                           "lulesh,opal,4,31.25,125,40\noc20,horeka,128,0.5,64,5497\n")
    runs = list(parse(path, IngestOptions()))
    assert [(r.ranks_per_node, r.total_ranks) for r in runs  # type: ignore[union-attr]
            ] == [(31.25, 125), (0.5, 64)]


def test_many_new_systems_are_summed_up_on_one_readable_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """MLPerf HPC's results name 41 systems no catalog knows (an export read into a fresh
    store names hundreds, which made one line of 15,000 characters): the summary names
    the first five and counts the rest, 'systems list' lists them all, and
    --format json keeps every name for scripts."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app

    path = REPO / "datasets" / "mlperf_hpc" / "runs.csv.gz"
    result = cli("ingest", "csv", str(path))
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.stdout.splitlines() if "new systems" in line]
    listed = json.loads(cli("systems", "list", "--format", "json").stdout)
    created = [spec["name"] for spec in listed if spec["origin"] == "ingest"]
    assert len(created) == 41
    shown = line.removeprefix("  new systems (not in the catalog yet): ").split(" and 36 more")[0]
    assert len(shown.split(", ")) == 5 and set(shown.split(", ")) <= set(created)
    assert "(41 in all; 'perfpredict systems list' lists them, origin ingest)" in line
    assert line.endswith("complete them with 'perfpredict systems add FILE.toml'")
    as_json = CliRunner().invoke(app, ["--db", f"sqlite:///{tmp_path / 'other.db'}", "ingest",
                                       "csv", str(path), "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    assert sorted(json.loads(as_json.stdout)[0]["new_systems"]) == sorted(created)


def test_a_few_new_systems_are_all_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Six names take the room of five and "and 1 more": all are named, as before."""
    rows = "".join(f"a,sys{i},p,1,1,1,6,\n" for i in range(6))
    result = cli("ingest", "csv", str(write(tmp_path, HEADER + rows)))
    assert ("  new systems (not in the catalog yet): sys0, sys1, sys2, sys3, sys4, sys5; "
            "complete them with 'perfpredict systems add FILE.toml'") in result.stdout
