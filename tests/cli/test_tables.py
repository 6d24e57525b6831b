"""Tables as people read them (issue 14, item 19): whole at 80 columns, LaTeX that fits a
page and can be referenced, notes that describe the table printed, honest counts."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from tests.conftest import shared_path

BERT = ["--app", "bert", "--system", "dgxa100_ngc22.04"]


def _at_80_columns(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _assert_fits_80_columns(text: str) -> None:
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text  # nothing cut short


@pytest.fixture
def runs_csv(tmp_path: Path) -> Path:
    path = tmp_path / "runs.csv"
    path.write_text(
        "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s,job_id\n"
        + "".join(f"solver,Perlmutter-CPU,TGV1024 with a long label,{n},128,1,"
                  f"{1234.5678 / n:.4f},job-{n}\n" for n in (1, 2, 4)))
    return path


def test_runs_list_and_systems_list_are_whole_at_80_columns(cli, db_url: str, runs_csv: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("ingest", "csv", str(runs_csv)).exit_code == 0
    listed = _at_80_columns("--db", db_url, "runs", "list")
    _assert_fits_80_columns(listed)
    for value in ("TGV1024 with a long label", "1234.57", "308.642", "job-4", "Perlmutter-CPU"):
        assert value in listed
    systems = _at_80_columns("--db", db_url, "systems", "list")
    _assert_fits_80_columns(systems)
    assert "Frontier node-hours" in systems


def test_an_empty_table_says_it_has_no_rows(sqlite_cli) -> None:  # type: ignore[no-untyped-def]
    """A new store's lists: one line, as psql says it, not empty boxes split in two at
    80 columns."""
    for args in (("runs", "list"), ("runs", "rejects"), ("runs", "batches")):
        result = sqlite_cli(*args)
        assert result.exit_code == 0 and result.stdout == "(0 rows)\n", args


def test_runs_list_says_when_it_shows_the_first_runs_only(cli, runs_csv: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("ingest", "csv", str(runs_csv)).exit_code == 0
    cut = cli("runs", "list", "--limit", "2")
    assert cut.exit_code == 0 and cut.stdout.count("TGV1024") == 2
    assert "the first 2 runs; --limit N shows more" in cut.stderr
    assert "the first 1 run; --limit N" in cli("runs", "list", "--limit", "1").stderr
    whole = cli("runs", "list", "--limit", "3")
    assert whole.stdout.count("TGV1024") == 3 and not whole.stderr
    assert not cli("runs", "list", "--limit", "2", "--format", "csv").stderr  # scripts


def test_runs_list_shows_the_io_a_darshan_log_gave(cli) -> None:  # type: ignore[no-untyped-def]
    """What a Darshan log gives its job is its I/O volume: the list left it to
    'runs export', so an ingest showed nothing of it in the list."""
    pytest.importorskip("darshan")
    log = shared_path("logs", "darshan", "skew_io__skew-app.darshan")
    assert cli("ingest", "darshan", str(log), "--system", "Frontier").exit_code == 0
    (run,) = csv.DictReader(io.StringIO(cli("runs", "list", "--format", "csv").stdout))
    assert (run["job_id"], run["io_bytes"]) == ("75746776", "43637372528.0")
    assert "4.36374e+10" in cli("runs", "list").stdout


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_runs_list_writes_each_run_before_reading_the_next(  # type: ignore[no-untyped-def]
        cli, runs_csv: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """``runs list --limit N --format csv|json`` streams like ``runs export``: it held the
    N runs first, 1.5 GB for a million (1.5 KB a run; ``runs export`` of them, 52 MB)."""
    from perfpredict.store import queries

    assert cli("ingest", "csv", str(runs_csv)).exit_code == 0
    read = queries.iter_runs
    written_at_each_read: list[int] = []

    def watched(*args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
        for run in read(*args, **kwargs):
            sys.stdout.flush()
            written_at_each_read.append(len(sys.stdout.buffer.getvalue()))  # type: ignore[attr-defined]
            yield run

    monkeypatch.setattr(queries, "iter_runs", watched)
    listed = cli("runs", "list", "--format", fmt)
    assert listed.exit_code == 0 and listed.stdout.count("job-") == 3
    assert written_at_each_read[0] < written_at_each_read[1] < written_at_each_read[2]


@pytest.mark.parametrize("command", [("runs", "list"), ("runs", "export"),
                                     ("runs", "export", "--format", "json"),
                                     ("runs", "export", "--format", "table")])
def test_runs_of_an_application_the_store_lacks_name_the_one_meant(  # type: ignore[no-untyped-def]
        cli, runs_csv: Path, command: tuple[str, ...]) -> None:
    """``runs export --app Solvr > solver.csv`` wrote a header alone, exit 0, where
    ``train --app Solvr`` names the application the store holds."""
    assert cli("ingest", "csv", str(runs_csv)).exit_code == 0
    result = cli(*command, "--app", "Solvr")
    assert result.exit_code == 1 and not result.stdout
    assert result.stderr == ("Error: the store holds no runs of application 'Solvr'; "
                             "did you mean solver?\n")
    assert cli(*command, "--app", "solver").stdout.count("TGV1024") == 3


def test_runs_export_json_streams_the_document_it_printed_whole(  # type: ignore[no-untyped-def]
        cli, db_url: str, tmp_path: Path) -> None:
    """``runs export --format json`` listed every run and its text before printing (200k
    runs: 1.3 GB); it writes them one by one now, and the document is the same: keys,
    their order, numbers, nulls, extra fields, indentation, byte for byte."""
    from perfpredict.store import open_store
    from perfpredict.store.queries import export_runs

    assert cli("runs", "export", "--format", "json").stdout == "[]\n"
    path = tmp_path / "runs.csv"
    path.write_text('app,system,problem_size,nodes,ranks_per_node,threads_per_rank,'
                    'runtime_s,job_id,note,io_bytes\n'
                    'solver,Perlmutter-CPU,TGV1024,1,128,1,1234.5678,job-1,"say ""hi"", ü",\n'
                    'solver,Perlmutter-CPU,TGV1024,2,128,1,617.28391,job-2,,1e12\n'
                    'lammps,Perlmutter-CPU,,4,64,2,0.1,job-3,plain,\n')
    assert cli("ingest", "csv", str(path)).exit_code == 0
    store = open_store(db_url)
    try:
        export = export_runs(store)
        whole = json.dumps([{c: r.get(c) for c in export.columns} for r in export.rows],
                           indent=2, default=str) + "\n"
    finally:
        store.dispose()
    streamed = cli("runs", "export", "--format", "json")
    assert streamed.exit_code == 0, streamed.output
    assert streamed.stdout == whole
    assert [r["note"] for r in json.loads(streamed.stdout)] == ['say "hi", ü', None, "plain"]


def test_json_rows_are_written_as_they_come(capsys: pytest.CaptureFixture[str]) -> None:
    """Each row is out before the next is read: an iterator is never held whole."""
    from cli.render import print_rows

    def rows():  # type: ignore[no-untyped-def]
        for i in range(3):
            yield {"i": i, "x": i / 3}
            assert capsys.readouterr().out.endswith(f'"x": {i / 3},\n    "i": {i}\n  }}')

    print_rows(rows(), "json", ["x", "i"])
    assert capsys.readouterr().out == "\n]\n"


def test_advise_table_is_whole_at_80_columns() -> None:
    shown = _at_80_columns("advise", *BERT)
    table = shown[shown.index("Node counts considered"):]
    _assert_fits_80_columns(table)
    assert "eff." in table and "doubling" in table


def test_advise_table_of_day_long_runs_is_one_table_at_80_columns(  # type: ignore[no-untyped-def]
        sqlite_cli, sqlite_url: str, tmp_path: Path) -> None:
    """Runs of four days on 4 nodes (runtimes of 365,698 s, node-hours past 1,000) made
    the table 82 columns wide, and its verdicts went to a second table of their own,
    away from the rows they judge: every column fits in one."""
    runs = tmp_path / "long.csv"
    runs.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
                    + "".join(f"climate,bigiron,L,{n},64,1,{runtime_s * (1 + r / 100):.0f}\n"
                              for n, runtime_s in ((4, 360000), (8, 190000), (16, 100000),
                                                   (32, 56000), (64, 33000))
                              for r in (-2, 0, 2)))
    assert sqlite_cli("ingest", "csv", str(runs)).exit_code == 0
    assert sqlite_cli("train").exit_code == 0
    shown = _at_80_columns("--db", sqlite_url, "advise", "--app", "climate")
    table = shown[shown.index("Node counts considered"):]
    _assert_fits_80_columns(table)
    assert re.search(r"\b\d{3},\d{3}\b", table)  # the day-long runtimes, in seconds
    assert table.count("┏") == 1  # one table, its verdicts beside the figures
    assert re.search(r"│ 4 +│.*│ ok +│", table), table


def test_runs_stats_counts_systems_that_have_runs(cli, runs_csv: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("ingest", "csv", str(runs_csv)).exit_code == 0
    assert json.loads(cli("runs", "stats", "--format", "json").stdout)["n_systems"] == 1
    assert "systems: 1," in cli("runs", "stats").stdout


def test_runs_stats_table_shows_the_first_pairs_and_says_how_to_see_them_all(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """A table of every application and system (1,032 rows over 4,979 lines for the
    bundled data sets) scrolled the totals line off the terminal; the table stops at
    --limit as runs list does, and CSV still gives every pair to a script."""
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"app{i},Mahti,{n},{100 / n}\n" for i in range(3) for n in (1, 2)))
    assert cli("ingest", "csv", str(pairs)).exit_code == 0
    shown = cli("runs", "stats", "--limit", "2")
    assert shown.exit_code == 0
    assert shown.stdout.startswith("runs: 6, apps: 3,")
    assert "app1" in shown.stdout and "app2" not in shown.stdout
    assert shown.stderr == ("the first 2 application and system rows; --limit N shows more, "
                            "--format csv lists them all\n")
    whole = cli("runs", "stats", "--limit", "3")
    assert "app2" in whole.stdout and whole.stderr == ""
    listed = list(csv.DictReader(io.StringIO(cli("runs", "stats", "--limit", "1",
                                                 "--format", "csv").stdout)))
    assert [r["app"] for r in listed] == ["app0", "app1", "app2"]


def test_runs_stats_counts_scales_in_ranks_where_runs_give_no_nodes(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """A benchmark table of core counts (a center's chemistry benchmarks) has no node
    counts: its scales are counted in ranks, not shown as 0 scales."""
    cores = tmp_path / "cores.csv"
    cores.write_text("app,system,total_ranks,runtime_s\nQE,Mahti,128,1763.4\nQE,Mahti,256,892.6\n"
                     "QE,Mahti,512,451.2\nCP2K,Mahti,128,1451.3\n")
    assert cli("ingest", "csv", str(cores)).exit_code == 0
    rows = json.loads(cli("runs", "stats", "--format", "json").stdout)["series"]
    assert [(r["app"], r["n_scales"], r["min_scale"], r["max_scale"], r["scale_unit"])
            for r in rows] == [("CP2K", 1, 128, 128, "ranks"), ("QE", 3, 128, 512, "ranks")]
    # and runs list shows each run's scale, in the first part of a split table
    listed = list(csv.DictReader(io.StringIO(cli("runs", "list", "--format", "csv").stdout)))
    assert [(r["total_ranks"], r["runtime_s"]) for r in listed][:2] == [
        ("128", "1763.4"), ("256", "892.6")]


def test_latex_tables_have_labels_and_fit_the_page() -> None:
    latex = _at_80_columns("advise", *BERT, "--format", "latex")
    assert "\\label{tab:resources-bert}" in latex and "\\label{tab:scaling-bert}" in latex
    assert latex.count("\\begin{adjustbox}{max width=\\linewidth}") == 2
    assert "\\usepackage{adjustbox}" in latex
    assert "Wallclock per run P50 (h)" not in latex  # set on several lines
    assert "\\shortstack{Wallclock per \\\\{} run P50 (h)}" in latex
    # a line break before "[" would read the bracket as its optional length argument
    assert not re.search(r"\\\\\s*\[", latex)
    assert "\\shortstack{Predicted (s) \\\\{} [90\\% interval]}" in latex


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_the_italics_note_only_when_rows_are_in_italics(fmt: str) -> None:
    """Up to 8 nodes bert's recommendation is a measured node count: no predicted row; at
    a 60% efficiency floor it is a predicted one (16 or 32 nodes)."""
    measured_only = _at_80_columns("advise", *BERT, "--max-nodes", "8", "--format", fmt)
    assert "italics" not in measured_only and "*predicted" not in measured_only
    with_predicted = _at_80_columns("advise", *BERT, "--min-efficiency", "0.6",
                                    "--format", fmt)
    assert "italics" in with_predicted


def _chunks(text: str) -> list[str]:
    """The tables a wide table was split into, each from its top rule on."""
    return ["┏" + chunk for chunk in text.split("┏")[1:]]


def test_a_split_table_repeats_the_columns_that_tell_its_rows_apart(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """evaluate's "Every method" rows are a group and a method: a table split to fit 80
    columns that repeated the group alone left its later parts without the method."""
    from cli.render import print_rows

    monkeypatch.setenv("COLUMNS", "80")
    figures = ("mape_pct", "median_ape_pct", "trimmed_mape_pct", "within_10pct_series",
               "bias_pct", "coverage", "coverage_ci_low", "coverage_ci_high")
    rows = [{"group": group, "method": method, **{f: 12.345678 for f in figures}}
            for group in ("all", "castro_scaling") for method in ("amdahl", "hybrid")]
    print_rows(rows, "table")
    chunks = _chunks(capsys.readouterr().out)
    assert len(chunks) > 1
    _assert_fits_80_columns("".join(chunks))
    for chunk in chunks:
        assert "method" in chunk and chunk.count("hybrid") == 2, chunk

    # where the first column tells the rows apart, it alone is repeated
    print_rows([{**row, "method": "amdahl"} | {"group": f"{row['group']}-{i}"}
                for i, row in enumerate(rows)], "table")
    chunks = _chunks(capsys.readouterr().out)
    assert len(chunks) > 1 and all("method" not in chunk for chunk in chunks[1:])


def test_labels_typeset_and_render_as_written() -> None:
    """|, < and > are an em-dash and inverted marks in LaTeX's default font, and "<d>" is
    an HTML tag to a Markdown renderer."""
    from perfpredict.report.tables import latex_escape, markdown_table

    assert latex_escape("a{b}\\c<d>|e") == (r"a\{b\}\textbackslash{}c\textless{}d"
                                            r"\textgreater{}\textbar{}e")
    assert markdown_table([{"label": "a|b<d>"}]).splitlines()[-1] == "| a\\|b&lt;d&gt; |"


def test_an_option_typesets_with_its_two_hyphens() -> None:
    """LaTeX sets "--" as an en-dash and "---" as an em-dash: a proposal's caption read
    "(Slurm \u2013time)", an option no one can type. Single hyphens stay as they are."""
    from perfpredict.report.tables import latex_escape

    assert latex_escape("0-00:04:00 (Slurm --time)") == "0-00:04:00 (Slurm -{}-time)"
    assert latex_escape("a---b") == "a-{}-{}-b"


def test_every_reject_an_ingest_kept_is_listed_by_file_and_line(  # type: ignore[no-untyped-def]
        cli, tmp_path: Path) -> None:
    """An ingest under --on-error skip prints its first five rejects; the others were
    in the store with no command to read them. It now names the command, and `runs
    rejects` lists each with its file, line, reason and the line as read."""
    bad = tmp_path / "bad runs.csv"
    bad.write_text("app,system,nodes,runtime_s\n"
                   + "".join(f"x,s,n{i},10\n" for i in range(1, 8)) + "x,s,4,5\n")
    other = tmp_path / "other.csv"
    other.write_text("app,system,nodes,runtime_s\ny,s,2,nine\n")
    ingested = cli("ingest", "csv", str(bad), str(other), "--on-error", "skip")
    assert ingested.exit_code == 0, ingested.output
    assert (f"  and 2 more rejected; all of them: perfpredict runs rejects --file "
            f"'{bad}'") in ingested.stdout
    assert "more rejected" not in ingested.stdout.split(str(other))[1]  # one, shown

    listed = cli("runs", "rejects", "--file", str(bad), "--format", "json")
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(r["file"], r["format"], r["line"]) for r in rows] == [
        (str(bad.resolve()), "csv", line) for line in range(2, 9)]
    assert rows[6]["reason"] == "column 'nodes' must be a number, got 'n7'"
    assert rows[6]["raw"] == "x,s,n7,10"
    every = json.loads(cli("runs", "rejects", "--format", "json").stdout)
    assert [r["line"] for r in every] == [*range(2, 9), 2]  # file by file, as ingested

    first = cli("runs", "rejects", "--limit", "3")
    assert first.exit_code == 0 and "the first 3 rejects; --limit N shows more" in first.stderr

    missing = cli("runs", "rejects", "--file", str(tmp_path / "never.csv"))
    assert missing.exit_code == 1
    assert missing.output.strip() == (
        f"Error: {tmp_path / 'never.csv'} was never ingested into this store; 'perfpredict "
        "runs rejects' without --file lists the rejects of every file it was")


@pytest.mark.parametrize("columns", [40, 80, 120])
def test_batch_ids_are_whole_beside_a_path_wider_than_the_terminal(  # type: ignore[no-untyped-def]
        db_url: str, tmp_path: Path, columns: int) -> None:
    """A file's path is one word longer than the terminal: its column was as wide, the
    table wider than the terminal, and rich narrowed every column evenly to fit, folding
    the batch column to one character (ID 10 read "1" over "0") for an admin to pass to
    ``runs delete --batch``."""
    folder = tmp_path / ("a_folder_with_a_long_name_" * 6)
    folder.mkdir()
    paths = []
    for i in range(1, 13):
        path = folder / f"runs_{i}.csv"
        path.write_text("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,"
                        f"runtime_s,job_id\nsolver,sys,p,{i},128,1,10.0,job-{i}\n")
        paths.append(str(path))
    runner = CliRunner()
    assert runner.invoke(app, ["--db", db_url, "ingest", "csv", *paths]).exit_code == 0

    shown = runner.invoke(app, ["--db", db_url, "runs", "batches"],
                          env={"COLUMNS": str(columns)})
    assert shown.exit_code == 0, shown.output
    assert max(len(line) for line in shown.stdout.splitlines()) <= columns
    first_cells = [line.split("│")[1].strip() for line in shown.stdout.splitlines()
                   if line.startswith("│")]
    assert {cell for cell in first_cells if cell} == {str(i) for i in range(1, 13)}
    assert "batch" in shown.stdout.split("┡")[0]  # the label whole too


def test_rejects_split_to_fit_keep_the_file_and_line_in_every_part(  # type: ignore[no-untyped-def]
        db_url: str, tmp_path: Path) -> None:
    """`runs rejects` of a file under a long path, split to fit 80 columns, repeated the
    file alone in its later parts: which line a reason or raw text was of could not be
    read there. The path folds so that the file, format and line fit in every part."""
    folder = tmp_path / "a_folder_with_a_rather_long_name_for_its_rejects"
    folder.mkdir()
    bad = folder / "runs.csv"
    bad.write_text("app,system,nodes,runtime_s\nx,s,1,10\nx,s,two,5\nx,s,4,-1\n")
    runner = CliRunner()
    assert runner.invoke(app, ["--db", db_url, "ingest", "csv", str(bad), "--on-error",
                               "skip"]).exit_code == 0
    shown = _at_80_columns("--db", db_url, "runs", "rejects")
    _assert_fits_80_columns(shown)
    chunks = _chunks(shown)
    assert len(chunks) > 1
    for chunk in chunks:
        header = chunk.split("┡")[0]
        assert "file" in header and "line" in header, chunk


def test_table_cells_show_names_with_brackets_as_they_are(cli) -> None:  # type: ignore[no-untyped-def]
    """A PBS job name with a bracketed part (the real log's OOD-[hostname]_Jupyter_GPU)
    is shown whole in a table, not read as rich markup, as in JSON and CSV."""
    log = shared_path("logs", "pbs", "xdmod-accounting-logs.log")
    assert cli("ingest", "pbs", str(log), "--system", "ub-hpc").exit_code == 0
    for command in (("runs", "list"), ("runs", "stats")):
        shown = cli(*command)
        assert shown.exit_code == 0 and "OOD-[hostname]_Jupyter_GPU" in shown.stdout
