"""The efficiency panel of ``advise --plot`` (issue 14, item 16), checked on the numbers
it plots (the CSV written beside the figure)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app

#: Measured at 1, 8, 128 and 512 nodes.
BERT = ["--app", "bert", "--system", "dgxa100_ngc22.04"]
#: The CSV's six significant digits (perfpredict.report.plots.CSV_FLOAT_FORMAT), and
#: ratios of up to three of its cells.
SIX_DIGITS = 2e-5


def test_efficiency_is_100_percent_at_the_base_for_measured_and_predicted(tmp_path: Path) -> None:
    figure = tmp_path / "scaling.svg"
    result = CliRunner().invoke(app, ["advise", *BERT, "--plot", str(figure)])
    assert result.exit_code == 0, result.output
    assert figure.exists()
    with figure.with_suffix(".csv").open(newline="") as fh:
        rows = [{k: float(v) if v not in ("", "True", "False") else v for k, v in r.items()}
                for r in csv.DictReader(fh)]
    base = next(r for r in rows if r["measured_runtime_s"] != "")
    assert base["nodes"] == 1.0
    # inside the measured range the predicted curve passes through the measured medians
    # (perfpredict.model.base_estimate.measured_offset_log), so the two curves share their base
    for row in rows:
        if row["measured_runtime_s"] != "":
            assert row["predicted_runtime_s"] == pytest.approx(row["measured_runtime_s"],
                                                               rel=SIX_DIGITS)
    assert base["measured_efficiency"] == pytest.approx(1.0)
    assert base["predicted_efficiency"] == pytest.approx(1.0)
    for row in rows:  # strong scaling: T(base) * base / (T(p) * p), each from its own curve
        assert row["predicted_efficiency"] == pytest.approx(
            base["predicted_runtime_s"] * base["nodes"] / (row["predicted_runtime_s"] * row["nodes"]),
            rel=SIX_DIGITS)
        if row["measured_runtime_s"] != "":
            assert row["measured_efficiency"] == pytest.approx(
                base["measured_runtime_s"] * base["nodes"]
                / (row["measured_runtime_s"] * row["nodes"]), rel=SIX_DIGITS)


def test_the_table_and_the_plot_share_one_base(tmp_path: Path) -> None:
    """The advise table's efficiency (an estimate's) is the plotted predicted efficiency,
    node count by node count, and 100% at the smallest measured configuration."""
    import json

    figure = tmp_path / "scaling.png"
    result = CliRunner().invoke(app, ["advise", *BERT, "--format", "json", "--plot", str(figure)])
    assert result.exit_code == 0, result.output
    candidates = {c["nodes"]: c for c in json.loads(result.stdout)["candidates"]}
    with figure.with_suffix(".csv").open(newline="") as fh:
        plotted = {float(r["nodes"]): float(r["predicted_efficiency"]) for r in csv.DictReader(fh)}
    assert candidates[1]["efficiency"] == pytest.approx(1.0)
    assert candidates[1]["speedup"] == pytest.approx(1.0)
    for nodes, candidate in candidates.items():
        assert candidate["efficiency"] == pytest.approx(plotted[float(nodes)], rel=SIX_DIGITS)


def test_a_plot_that_cannot_be_written_is_bad_input(tmp_path: Path) -> None:
    """A folder that does not exist is the user's to fix (exit 2, one line), not an
    internal error."""
    figure = tmp_path / "missing" / "scaling.png"
    result = CliRunner().invoke(app, ["advise", *BERT, "--plot", str(figure)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line == (f"Error: --plot {figure}: cannot write it (No such file or directory); "
                    "choose a folder that exists and you can write")


def test_a_figure_of_another_format_is_refused_before_the_sweep(tmp_path: Path) -> None:
    """Said first, as the application that does not exist would be only after it: a
    wrong extension used to cost a whole sweep before it was refused."""
    figure = tmp_path / "scaling.txt"
    result = CliRunner().invoke(app, ["advise", "--app", "nosuch", "--plot", str(figure)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"Error: --plot {figure}: the file must end in .png, "
                                     ".svg or .pdf")


def test_a_plot_does_not_write_its_numbers_over_another_table(tmp_path: Path) -> None:
    """``--plot runs.png`` wrote the plotted numbers over the runs.csv beside it (the
    user's own table of runs) without a word. Refused before the sweep, and nothing
    written; the numbers of an earlier plot of that name are written again."""
    runs = tmp_path / "runs.csv"
    table = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s\n"
    runs.write_text(table)
    figure = tmp_path / "runs.png"
    result = CliRunner().invoke(app, ["advise", "--app", "nosuch", "--plot", str(figure)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"Error: --plot {figure}: its numbers go to {runs}, which holds another table "
        "(its header begins 'app,system,problem_size,nodes,ranks_per_node,threads_per_rank,"
        "runtime_s'); name the figure otherwise, or move that file\n")
    assert runs.read_text() == table and not figure.exists()
    again = tmp_path / "scaling.pdf"
    for _ in range(2):
        result = CliRunner().invoke(app, ["advise", *BERT, "--plot", str(again)])
        assert result.exit_code == 0, result.output


def test_a_plot_drawn_from_python_leaves_a_notebook_s_matplotlib_as_it_was(
        tmp_path: Path) -> None:
    """``save_scaling_plot`` called ``matplotlib.use("Agg")``: in a notebook, the inline
    backend was gone and the user's own figures no longer showed."""
    import matplotlib.pyplot as plt

    from perfpredict.advise.plan import PlanRequest, advise_plan
    from perfpredict.report.plots import save_scaling_plot
    from perfpredict.store import open_store

    before = plt.get_backend()
    plt.switch_backend("svg")  # a backend other than Agg, standing for the notebook's
    mine = plt.figure()
    try:
        with open_store(tmp_path / "empty.db") as store:  # the bundled predictor answers
            plan = advise_plan(store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
        written = save_scaling_plot(plan, tmp_path / "scaling.png")
        assert written.figure.stat().st_size > 0 and written.data_csv.exists()
        assert plt.get_backend() == "svg"
        assert plt.get_fignums() == [mine.number]
    finally:
        plt.close(mine)
        plt.switch_backend(before)
