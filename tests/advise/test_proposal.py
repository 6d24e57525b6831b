"""Proposal tables: Markdown and LaTeX that paste cleanly, CSV with stable columns."""

from __future__ import annotations

import csv
import io
import re

import pytest

from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.advise.walltime import slurm_time
from perfpredict.report.proposal import (
    CANDIDATE_COLUMNS,
    evidence_rows,
    proposal_latex,
    proposal_markdown,
    summary_lines,
)
from perfpredict.report.tables import latex_escape, latex_table
from tests.advise.conftest import BERT


@pytest.fixture
def bert_plan(trained_store):  # type: ignore[no-untyped-def]
    # a recommendation beyond the measurements, so the evidence has predicted rows
    return advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04",
                                                  runs=10, objective="fastest",
                                                  min_efficiency=0.01, max_nodes=1024))


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Each table as rows of cells, split on unescaped pipes."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            current.append([c.strip() for c in cells])
        elif current:
            tables.append(current)
            current = []
    return tables


def test_markdown_tables_parse(bert_plan) -> None:
    text = proposal_markdown(bert_plan)
    tables = _markdown_tables(text)
    assert len(tables) == 2
    for table in tables:
        widths = {len(row) for row in table}
        assert len(widths) == 1, table  # same column count on every row
        assert set("".join(table[1])) <= set("-:")  # the delimiter row
    resources, evidence = tables
    header = resources[0]
    assert header[:3] == ["Run class", "Runs", "Nodes"]
    assert {"Total node-hours P50", "Total node-hours P90", "Total test units P50"} <= set(
        header)
    row = dict(zip(header, resources[2], strict=True))
    assert row["Runs"] == "10" and row["Nodes"] == str(bert_plan.recommended.nodes)
    assert row["Walltime request"].startswith(slurm_time(bert_plan.walltime_s))
    assert evidence[0][:3] == ["Nodes", "Time to solution, actual (s)",
                               "Time to solution, ideal (s)"]
    body = evidence[2:]
    measured = [r for r in body if r[-1] == "measured"]
    predicted = [r for r in body if r[-1] != "measured"]
    assert [r[0] for r in measured] == ["1", "8", "128", "512"]
    assert predicted and all(cell.startswith("*") for r in predicted for cell in r)
    assert bert_plan.basis in text


def test_evidence_is_in_olcf_shape(bert_plan) -> None:
    rows, columns, predicted = evidence_rows(bert_plan)
    assert columns[:3] == ["Nodes", "Time to solution, actual (s)",
                           "Time to solution, ideal (s)"]
    first = bert_plan.measured[0]
    # ideal strong scaling: the smallest run's time divided by the node ratio
    assert rows[1]["Time to solution, ideal (s)"] == f"{first.runtime_s / 8:.3g}"
    assert predicted == sorted(predicted), "measured rows first, predicted rows after"
    assert rows[-1]["Source"] == "predicted (recommended)" or not any(predicted[-1:])
    assert all(re.fullmatch(r"[\d.,]+ \[[\d.,]+, [\d.,]+\]", r[columns[3]]) for r in rows)


def test_the_evidence_names_the_ranks_run_not_fractions_of_nodes(trained_store) -> None:  # type: ignore[no-untyped-def]
    """LULESH ran 27 to 343 ranks: at 27 ranks per node the evidence table's Nodes column
    read 2.37037, 4.62963 and 12.7037 beside "measured", node counts no one ran, which
    the basis under it no longer names. The table names the ranks run, as the basis
    does; a node count only where the ranks fill whole nodes, and its note says so."""
    plan = advise_plan(trained_store, PlanRequest(app="LULESH 2.0.3", ranks_per_node=27))
    rows, _, predicted = evidence_rows(plan)
    measured = [(r["Nodes"], r["Ranks"]) for r, guessed in zip(rows, predicted, strict=True)
                if not guessed]
    assert measured == [("1", "27"), ("-", "64"), ("-", "125"), ("8", "216"), ("-", "343")]
    assert "at 27, 64, 125, 216, 343 MPI ranks (1 to 12.7037 nodes, converted at 27" in (
        plan.basis)
    assert ("Nodes are the ranks at 27 MPI ranks per node; '-' where a measured rank count "
            "fills no whole number of nodes.") in proposal_markdown(plan)
    # a series whose ranks fill whole nodes says nothing of it
    whole = advise_plan(trained_store, PlanRequest(
        app="RELeARN", problem_size="9000 neurons/rank, theta=0.3", ranks_per_node=32))
    assert [r["Nodes"] for r in evidence_rows(whole)[0][:5]] == ["1", "2", "4", "8", "16"]
    assert "no whole number of nodes" not in proposal_markdown(whole)


def test_latex_is_balanced_and_escaped(bert_plan) -> None:
    text = proposal_latex(bert_plan)
    for env in ("table", "tabular"):
        assert text.count(rf"\begin{{{env}}}") == text.count(rf"\end{{{env}}}") == 2
    assert text.count("{") == text.count("}")
    # every row of a tabular has as many cells as its header
    for block in re.findall(r"\\begin\{tabular\}\{(\w+)\}(.*?)\\end\{tabular\}", text, re.S):
        spec, body = block
        rows = [line for line in body.splitlines() if line.endswith(r"\\")]
        assert rows and all(line.count("&") == len(spec) - 1 for line in rows)
    assert r"dgxa100\_ngc22.04" in text and r"90\% interval" in text
    assert "dgxa100_ngc" not in text and "90% " not in text  # special characters escaped
    assert r"\textit{" in text and text.count(r"\midrule") >= 3  # predicted rows set apart


@pytest.mark.parametrize(("runs_in_walltime", "said"), [(None, r"0\.\d\d"),
                                                        (500, r"0\.002")])
def test_the_runtime_over_walltime_ratio_is_never_read_as_zero(  # type: ignore[no-untyped-def]
        bert_plan, runs_in_walltime, said) -> None:
    """A 0.1 s run in a one-minute walltime was said to fill "0.00" of it."""
    import dataclasses

    plan = bert_plan if runs_in_walltime is None else dataclasses.replace(
        bert_plan, walltime_s=runs_in_walltime * bert_plan.recommended.predicted_runtime_s)
    (line,) = [li for li in summary_lines(plan) if "expected runtime/walltime" in li]
    assert re.search(f"expected runtime/walltime {said}$", line), line


def test_latex_helpers() -> None:
    assert latex_escape("50% of a_b & c") == r"50\% of a\_b \& c"
    table = latex_table([{"a": 1.5, "b": "x"}, {"a": 2.0, "b": "y"}], ["a", "b"],
                        italic=[False, True], rule_before=[1])
    assert table.splitlines()[0] == r"\begin{tabular}{lr}"
    assert r"\midrule" + "\n" + r"\textit{2} & \textit{y} \\" in table


def test_csv_has_one_row_per_candidate_and_the_recommendation_on_stderr(advise_cli) -> None:
    """The CSV is the table of node counts, as every command's CSV is one table; the
    walltime, the node-hours of --runs and the warnings, which it dropped without a
    word, are said on stderr as 'advise walltime' says its summary."""
    result = advise_cli("advise", *BERT, "--runs", "5", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert list(rows[0]) == list(CANDIDATE_COLUMNS)
    (advised,) = [r for r in rows if r["recommended"] == "True"]
    assert all(float(r["node_hours_p50"]) <= float(r["node_hours_p90"]) for r in rows)
    assert result.stderr.startswith("bert on dgxa100_ngc22.04")
    assert f"Recommendation: {advised['nodes']} nodes." in result.stderr
    assert "(Slurm --time)" in result.stderr and "for 5 runs" in result.stderr


def test_markdown_and_latex_through_the_cli(advise_cli) -> None:
    markdown = advise_cli("advise", *BERT, "--format", "markdown")
    latex = advise_cli("advise", *BERT, "--format", "latex")
    assert markdown.exit_code == latex.exit_code == 0
    assert markdown.output.startswith("### Requested resources: bert")
    assert latex.output.startswith("% requires \\usepackage{booktabs}")
