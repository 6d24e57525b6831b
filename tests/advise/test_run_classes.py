"""Run classes of an allocation proposal (--run-class) and their totals per period
(--periods, --period-label), on the bert series of the trained fixture store (measured at
1, 8, 128 and 512 nodes, on a machine whose catalog entry has queues and charges 2 units
per node-hour)."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.advise.run_classes import RunClass, parse_run_class
from perfpredict.durations import format_seconds
from perfpredict.errors import BadInputError
from tests.advise.conftest import BERT, one_error_line, with_queue_charges

CLASSES = ("largest=512x2", "typical = 64 x 10", "smallest=1x4")
CLASS_ARGS = [arg for text in CLASSES for arg in ("--run-class", text)]
PERIODS = ["--periods", "4", "--period-label", "quarter"]


@pytest.fixture
def classes_plan(trained_store):  # type: ignore[no-untyped-def]
    return advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04", run_classes=CLASSES, periods=4,
        period_label="quarter"))


def test_a_run_class_is_label_nodes_and_runs() -> None:
    assert parse_run_class("largest=512x10") == RunClass("largest", 512, 10)
    assert parse_run_class(" typical job = 64 X 3 ") == RunClass("typical job", 64, 3)
    assert parse_run_class("a=b=4x2") == RunClass("a=b", 4, 2)


#: Labels as a user types them: printable text on one line, without edge spaces (which the
#: parser strips).
LABELS = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S"),
                               include_characters=" "),
                 min_size=1, max_size=20).map(str.strip).filter(bool)


@given(label=LABELS, nodes=st.integers(1, 2**31 - 1), runs=st.integers(1, 1_000_000))
def test_a_run_class_reads_back_as_written(label: str, nodes: int, runs: int) -> None:
    assert parse_run_class(f"{label}={nodes}x{runs}") == RunClass(label, nodes, runs)


@pytest.mark.parametrize("text", ["big", "=4x2", "big=4", "big=4x", "big=x2", "big=4x2x1",
                                  "big=-4x2", "big=4.5x2", "line\nbreak=4x2"])
def test_a_run_class_not_in_the_form_is_refused(text: str) -> None:
    with pytest.raises(BadInputError, match="--run-class"):
        parse_run_class(text)


def test_each_class_is_priced_as_runs_x_nodes_x_hours(classes_plan) -> None:
    classes = classes_plan.run_classes
    assert [(c.label, c.nodes, c.runs) for c in classes] == [
        ("largest", 512, 2), ("typical", 64, 10), ("smallest", 1, 4)]
    for c in classes:
        assert c.p90_runtime_s >= c.predicted_runtime_s
        assert c.upper_runtime_s >= c.predicted_runtime_s >= c.lower_runtime_s
        assert math.isclose(c.node_hours_p50, c.runs * c.nodes * c.predicted_runtime_s / 3600)
        assert math.isclose(c.node_hours_p90, c.runs * c.nodes * c.p90_runtime_s / 3600)
        assert c.node_hours_p90 >= c.node_hours_p50
        # the fixture's machine charges 2 units per node-hour, no queue multiplier
        assert c.allocation_units_p50 is not None and c.allocation_units_p90 is not None
        assert math.isclose(c.allocation_units_p50, 2 * c.node_hours_p50)
        assert math.isclose(c.allocation_units_p90, 2 * c.node_hours_p90)
        assert c.walltime_quantile_s >= c.predicted_runtime_s
    largest, typical, smallest = classes
    assert largest.measured and smallest.measured and not typical.measured
    assert largest.queue == "large" and typical.queue == "medium"
    # one node runs some 20 min, the fixture's 1-2 node queue allows 10: chained, warned
    assert smallest.queue == "small" and smallest.chained_jobs > 1
    assert any(w.startswith("run class 'smallest': ") for w in classes_plan.warnings)
    assert typical.basis == "predicted between the measured 8 and 128 nodes"
    assert "typical at 64 nodes (predicted between the measured 8 and 128 nodes)" in (
        classes_plan.basis)


def test_a_class_beyond_the_measured_counts_is_marked_so(advise_cli) -> None:
    result = advise_cli("advise", *BERT, "--run-class", "huge=1024x1", "--format",
                        "markdown")
    assert result.exit_code == 0, result.output
    assert "| huge | 1 | 1024 | predicted, beyond measured |" in result.output
    assert "huge at 1024 nodes (predicted beyond the largest measured, 512 nodes)" in (
        result.output)


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_the_proposal_note_bounds_what_a_chained_class_is_charged(advise_cli, fmt: str) -> None:  # type: ignore[no-untyped-def]
    """The tables count a chained run's predicted runtime alone; what chaining may add
    was said only in a warning on stderr, out of the Markdown or LaTeX pasted into a
    proposal, whose note said no more than "each run 3 chained jobs"."""
    args = ("advise", *BERT, *CLASS_ARGS)
    smallest = next(c for c in json.loads(advise_cli(*args, "--format", "json").stdout)[
        "run_classes"] if c["label"] == "smallest")
    jobs = smallest["chained_jobs"]
    assert jobs > 1 and smallest["walltime_s"] == 600
    result = advise_cli(*args, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert (f"smallest: the limit of queue small, each run {jobs} chained jobs, checkpointed "
            "before the limit (the node-hours count the predicted runtime alone; with each "
            "job but the last charged up to its limit, a run takes up to "
            f"{jobs} x 10 min x 1 node = {jobs / 6:.3g} node-hours)") in " ".join(
                result.stdout.split())


def test_the_class_at_the_recommended_count_is_priced_as_the_recommendation(
        trained_store) -> None:
    plain = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04"))
    rec = plain.recommended_class
    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04", run_classes=(f"same={rec.nodes}x1",)))
    (same,) = plan.run_classes
    assert same.as_dict() == {**rec.as_dict(), "label": "same", "basis": same.basis}
    assert plan.walltime_s == same.walltime_s


def test_totals_and_periods_sum_the_classes(classes_plan) -> None:
    classes, totals = classes_plan.run_classes, classes_plan.totals
    assert totals.total.runs == 16
    assert math.isclose(totals.total.node_hours_p50, sum(c.node_hours_p50 for c in classes))
    assert math.isclose(totals.total.node_hours_p90, sum(c.node_hours_p90 for c in classes))
    assert totals.total.allocation_units_p90 is not None
    assert math.isclose(totals.total.allocation_units_p90, 2 * totals.total.node_hours_p90)
    share = totals.per_period
    assert math.isclose(4 * share.node_hours_p50, totals.total.node_hours_p50)
    assert math.isclose(4 * share.node_hours_p90, totals.total.node_hours_p90)
    assert share.runs == 4
    # the recommendation is not a row beside the classes, nor counted in the total
    assert classes_plan.resource_classes == classes


def test_without_classes_the_totals_are_the_recommendations(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04",
                                                  runs=5))
    assert plan.run_classes == [] and plan.resource_classes == [plan.recommended_class]
    assert plan.recommended_class.label == "production (recommended)"
    assert math.isclose(plan.totals.total.node_hours_p50, plan.node_hours_p50)
    assert plan.totals.total.allocation_units_p90 == plan.allocation_units_p90
    assert plan.totals.periods == 1


def test_one_class_given_as_text_is_that_class(trained_store) -> None:
    """As ``app=`` takes one name: ``run_classes="largest=512x10"`` was read as classes
    of its letters ("--run-class 'l' is not LABEL=NODESxRUNS")."""
    one = PlanRequest(app="bert", system="dgxa100_ngc22.04", run_classes="largest=8x10")  # type: ignore[arg-type]
    assert one.run_classes == ("largest=8x10",)
    plan = advise_plan(trained_store, one)
    assert [(c.label, c.nodes, c.runs) for c in plan.run_classes] == [("largest", 8, 10)]


#: Classes beyond the measured counts (1024, a swept count past the recommendation), off
#: the sweep between measured ones (48, no power of two) and at a measured one (1).
EVIDENCE_CLASSES = ("largest=1024x2", "typical=48x10", "smallest=1x4")
EVIDENCE_ARGS = [arg for text in EVIDENCE_CLASSES for arg in ("--run-class", text)]


def _predicted_evidence(rows: list[dict[str, str]]) -> dict[str, tuple[str, str]]:
    """The predicted rows of a scaling-evidence table: nodes -> (prediction, source)."""
    return {r["Nodes"]: (r["Predicted (s) [90% interval]"], r["Source"]) for r in rows
            if r["Source"] != "measured"}


def test_the_evidence_predicts_each_class_never_measured(trained_store) -> None:
    """With --run-class the scaling evidence listed only the measured counts (and the
    recommendation's): the 1024 and 48 nodes a proposal asks for had no predicted row."""
    from perfpredict.figures import format_value
    from perfpredict.report.proposal import evidence_rows

    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04", run_classes=EVIDENCE_CLASSES))
    assert plan.recommended.nodes < 1024 and plan.recommended.measured
    rows, _, predicted = evidence_rows(plan)
    assert [r["Nodes"] for r in rows] == ["1", "8", "128", "512", "48", "1,024"]
    assert predicted == [False] * 4 + [True] * 2  # measured first, then set apart
    largest, typical, _ = plan.run_classes
    assert _predicted_evidence(rows) == {
        format_value(float(c.nodes)): (
            f"{format_value(c.predicted_runtime_s)} [{format_value(c.lower_runtime_s)}, "
            f"{format_value(c.upper_runtime_s)}]", f"predicted ({c.label})")
        for c in (typical, largest)}


def test_a_class_at_the_recommended_count_shares_its_evidence_row(trained_store) -> None:
    from perfpredict.report.proposal import evidence_rows

    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04", min_efficiency=0.01, max_nodes=1024,
        run_classes=("same=1024x1", "also=1024x3", "mid=256x1")))
    assert plan.recommended.nodes == 1024
    sources = {nodes: source for nodes, (_, source) in
               _predicted_evidence(evidence_rows(plan)[0]).items()}
    assert sources == {"256": "predicted (mid)",
                       "1,024": "predicted (recommended, same, also)"}


@pytest.mark.parametrize("request_fields, fragment", [
    ({"run_classes": ("huge=4096x1",)}, "has 2048 nodes"),
    ({"run_classes": ("a=4x1", "a=8x1")}, "label 'a' is given twice"),
    ({"run_classes": ("a=4x1",), "runs": 3}, "--runs 3 budgets the recommended"),
    ({"periods": 0}, "--periods must be a whole number from 1 to 120"),
    ({"period_label": " "}, "--period-label needs a label"),
])
def test_bad_classes_and_periods_are_refused(trained_store, request_fields,
                                             fragment: str) -> None:
    with pytest.raises(BadInputError, match=fragment):
        advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04",
                                               **request_fields))


# --- through the CLI --------------------------------------------------------------------

def test_json_lists_the_classes_the_totals_and_a_periods_share(advise_cli) -> None:
    result = advise_cli("advise", *BERT, *CLASS_ARGS, *PERIODS, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [c["label"] for c in doc["run_classes"]] == ["largest", "typical", "smallest"]
    typical = doc["run_classes"][1]
    assert typical["source"] == "predicted" and typical["measured"] is False
    for key in ("walltime_s", "walltime_slurm", "p90_runtime_s", "node_hours_per_run_p50",
                "node_hours_p90", "allocation_units_p90", "queue", "basis"):
        assert key in typical
    totals = doc["resource_totals"]
    assert totals["runs"] == 16 and totals["periods"] == 4
    assert totals["period_label"] == "quarter"
    assert math.isclose(totals["per_period"]["node_hours_p90"] * 4, totals["node_hours_p90"])
    assert math.isclose(totals["node_hours_p50"],
                        sum(c["node_hours_p50"] for c in doc["run_classes"]))
    # the recommendation's fields stay
    assert doc["recommended_nodes"] and doc["runs"] == 1 and doc["candidates"]


def test_markdown_lists_the_classes_a_total_and_a_periods_share(advise_cli) -> None:
    result = advise_cli("advise", *BERT, *CLASS_ARGS, *PERIODS, "--format", "markdown")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ")]
    labels = [row.split("|")[1].strip() for row in rows]
    assert labels[:6] == ["Run class", "largest", "typical", "smallest", "Total",
                          "Per quarter (1/4)"]
    assert "production (recommended)" not in result.output
    assert "| typical | 10 | 64 | predicted |" in result.output
    assert "Totals per quarter split evenly over 4 periods" in result.output
    assert "take back what a period leaves unused" in result.output
    assert "typical at 64 nodes (predicted between the measured 8 and 128 nodes)" in (
        result.output)


def test_runs_that_do_not_divide_into_the_periods_are_said_to_be_an_average(  # type: ignore[no-untyped-def]
        advise_cli) -> None:
    """3 runs over 4 quarters gave "Per quarter (1/4) | 0.75" runs and a quarter of the
    node-hours with nothing to say that a quarter holds a whole run or none."""
    result = advise_cli("advise", *BERT, "--runs", "3", *PERIODS)
    assert result.exit_code == 0, result.output
    assert ("The share is an average: 3 runs over 4 periods is 0.75 runs per quarter, "
            "fewer than one, and a period in which a run is made needs that run's whole "
            "node-hours; ask for each run in the period it is made.") in result.output
    five = advise_cli("advise", *BERT, "--runs", "5", *PERIODS, "--format", "markdown")
    assert "5 runs over 4 periods is 1.25 runs per quarter, and a period" in five.output
    # a million runs were "1e+06 runs over 120 periods is 8.33e+03 runs per month" and
    # "for 1000000 runs", beside a table that writes 8,333
    many = advise_cli("advise", *BERT, "--runs", "1000000", "--periods", "120",
                      "--period-label", "month")
    assert many.exit_code == 0, many.output
    said = " ".join(many.stdout.split())
    assert "1,000,000 runs over 120 periods is 8,333 runs per month, and a period" in said
    assert "; for 1,000,000 runs " in said and "e+0" not in said
    # runs that divide evenly need no word
    even = advise_cli("advise", *BERT, "--runs", "8", *PERIODS)
    assert "Totals per quarter split evenly" in even.output
    assert "average" not in even.output


def test_latex_sets_the_total_apart(advise_cli) -> None:
    result = advise_cli("advise", *BERT, *CLASS_ARGS, *PERIODS, "--format", "latex")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    total = next(i for i, line in enumerate(lines) if line.startswith("Total & 16 &"))
    assert lines[total - 1] == r"\midrule"
    assert lines[total + 1].startswith("Per quarter (1/4) & 4 &")
    assert "Totals per quarter split evenly over 4 periods" in result.output


def test_markdown_and_latex_carry_the_same_evidence_rows(advise_cli) -> None:
    """The classes' predicted rows in both proposal formats, italic and after the
    measured ones; the JSON carries each of their predictions with its interval."""
    markdown = advise_cli("advise", *BERT, *EVIDENCE_ARGS, "--format", "markdown")
    latex = advise_cli("advise", *BERT, *EVIDENCE_ARGS, "--format", "latex")
    doc = json.loads(advise_cli("advise", *BERT, *EVIDENCE_ARGS, "--format", "json").stdout)
    assert markdown.exit_code == latex.exit_code == 0, markdown.output + latex.output
    evidence = markdown.stdout.split("### Scaling evidence")[1]
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in evidence.splitlines()
             if line.startswith("| ")]
    assert [row[0] for row in cells[1:]] == ["1", "8", "128", "512", "*48*", "*1,024*"]
    assert [row[-1] for row in cells[-2:]] == ["*predicted (typical)*",
                                               "*predicted (largest)*"]
    tabular = latex.stdout.split(r"\label{tab:resources-bert}")[1]
    body = tabular.split("\\midrule\n")[2].split("\\bottomrule")[0].splitlines()
    assert [line.split(" & ")[0] for line in body] == [r"\textit{48}", r"\textit{1,024}"]
    assert body[1].endswith(r"\textit{predicted (largest)} \\")
    by_label = {c["label"]: c for c in doc["run_classes"]}
    for label in ("typical", "largest"):
        assert by_label[label]["lower_runtime_s"] < by_label[label]["upper_runtime_s"]


def test_table_prints_the_requested_resources(advise_cli) -> None:
    result = advise_cli("advise", *BERT, *CLASS_ARGS, *PERIODS)
    assert result.exit_code == 0, result.output
    assert "Requested resources" in result.output
    assert "  run classes largest (2 x 512 nodes), typical (10 x 64 nodes), smallest " \
           "(4 x 1 node): 16 runs, " in result.output
    assert "  per quarter: " in result.output
    assert "Node counts considered" in result.output


def test_csv_stays_the_candidate_table(advise_cli) -> None:
    plain = advise_cli("advise", *BERT, "--format", "csv")
    result = advise_cli("advise", *BERT, *CLASS_ARGS, *PERIODS, "--format", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout == plain.stdout
    assert list(csv.DictReader(io.StringIO(result.stdout)))


def test_without_the_options_nothing_changes(advise_cli) -> None:
    result = advise_cli("advise", *BERT, "--runs", "3", "--format", "markdown")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| production (recommended) | 3 |")
    assert rows[2].startswith("| Nodes |"), "no total or period rows"
    assert "Source" not in rows[0] and "split evenly" not in result.output
    table = advise_cli("advise", *BERT, "--runs", "3")
    assert "Requested resources" not in table.output and "run classes" not in table.output
    doc = json.loads(advise_cli("advise", *BERT, "--runs", "3", "--format", "json").output)
    assert doc["run_classes"] == [] and doc["resource_totals"]["runs"] == 3


def test_periods_without_classes_split_the_recommendation(advise_cli) -> None:
    result = advise_cli("advise", *BERT, "--runs", "6", "--periods", "2", "--period-label",
                        "6 months", "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "| production (recommended) | 6 |" in result.output
    assert "| Per 6 months (1/2) | 3 |" in result.output
    assert "| Total |" not in result.output


@pytest.mark.parametrize("args, fragment", [
    (("--run-class", "largest:512x10"),
     "--run-class 'largest:512x10' is not LABEL=NODESxRUNS, e.g. largest=512x10"),
    (("--run-class", "big=0x3"), "--run-class 'big=0x3': the node count must be"),
    (("--run-class", "big=8x0"), "--run-class 'big=8x0': the number of runs must be"),
    (("--run-class", "a=8x1", "--run-class", "a=16x1"), "label 'a' is given twice"),
    (("--run-class", "a=8x1", "--runs", "5"), "--runs 5 budgets the recommended node"),
    (("--run-class", "huge=4096x1"), "has 2048 nodes (the catalog)"),
    (("--periods", "0"), "--periods must be a whole number from 1 to 120, got 0"),
    (("--periods", "four"), "'--periods'"),
    (("--period-label", ""), "--period-label needs a label"),
])
def test_bad_classes_and_periods_give_one_error_line(advise_cli, args, fragment: str) -> None:
    result = advise_cli("advise", *BERT, *args)
    assert result.exit_code == 2, result.output
    assert fragment in one_error_line(result)


def test_a_class_in_a_queue_charged_at_a_multiple_says_so(trained_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A class in a premium queue (here 'large', at twice the rate) was priced at the
    multiple while the footnote named only the machine's rate, and the recommendation's
    queue: 2 units per node-hour in the words, 4 in the totals, as a reviewer reads them."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app

    url = with_queue_charges(trained_url, tmp_path,
                             lambda queue: 2.0 if queue == "large" else 1.0)
    result = CliRunner().invoke(app, ["--db", url, "advise", *BERT, *CLASS_ARGS,
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    largest, typical, _ = doc["run_classes"]
    assert largest["queue"] == "large" and typical["queue"] == "medium"
    assert math.isclose(largest["allocation_units_p50"], 2 * 2 * largest["node_hours_p50"])
    assert largest["basis"] == "measured at this node count; times 2 in queue 'large'"
    assert typical["basis"] == "predicted between the measured 8 and 128 nodes"
    assert doc["queue"] != "large"  # the recommendation's queue charges the machine's rate
    assert "Run classes: largest at 512 nodes (measured at this node count; times 2 in " \
           "queue 'large')" in doc["basis"]


def test_a_walltime_beyond_the_measured_counts_names_its_class(trained_store) -> None:
    """The note that a walltime rests on an extrapolation, raised by a run class, read
    "the walltime rests on an extrapolation ...", as if about the recommendation, which
    was measured at its node count: it names the class, and only the classes beyond."""
    plan = advise_plan(trained_store, PlanRequest(
        app="resnet", min_efficiency=0.01, max_nodes=16, kill_risk=0.3,
        run_classes=("hero=4096x1", "huge=2048x2", "small=16x4")))
    assert plan.recommended.nodes <= max(m.nodes for m in plan.measured)
    (note,) = [w for w in plan.warnings if "rests on an extrapolation" in w]
    assert note.startswith("run classes 'hero', 'huge': the walltime rests on an "
                           "extrapolation"), plan.warnings
    assert "--kill-risk 0.15" in note


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_a_proposals_warnings_are_said_on_stderr(advise_cli, fmt: str) -> None:
    """The markdown and latex proposals said none of the advice's warnings, anywhere (a
    walltime resting on an extrapolation, a queue capping a class's walltime), where the
    table, json, csv and --emit say them: on stderr, the tables to paste on stdout."""
    doc = json.loads(advise_cli("advise", *BERT, *CLASS_ARGS, "--format", "json").stdout)
    assert doc["warnings"]
    result = advise_cli("advise", *BERT, *CLASS_ARGS, "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"warning: {w}" for w in doc["warnings"]]
    assert "warning:" not in result.stdout


def test_the_summary_says_the_totals_as_the_tables_write_them(advise_cli) -> None:
    """The summary wrote node-hours to three significant digits and the tables whole
    numbers from 1,000: a total of 1,219.1 was "1,220" in the summary and "1,219" in the
    Total row under it, and in the proposal pasted beside it."""
    classes = ["--run-class", "largest=512x1000", "--run-class", "smallest=1x40"]
    table = advise_cli("advise", *BERT, *classes)
    markdown = advise_cli("advise", *BERT, *classes, "--format", "markdown")
    assert table.exit_code == markdown.exit_code == 0, table.output + markdown.output
    (total,) = [[c.strip() for c in line.split("|")[1:-1]]
                for line in markdown.stdout.splitlines() if line.startswith("| Total |")]
    p50, p90 = total[-4], total[-3]  # node-hours, then the allocation units
    assert float(p50.replace(",", "")) >= 1000, total
    assert f"1040 runs, {p50} (P50), {p90} (P90) node-hours" in table.stdout, table.stdout


def test_a_class_below_the_measured_counts_is_marked_and_warned(advise_cli) -> None:
    """LULESH measured at 27-343 ranks is 3.375-42.9 nodes at 8 ranks per node: a class on
    1 node is a downward extrapolation, which read "predicted" as an interpolation did,
    with no warning."""
    args = ("advise", "--app", "LULESH 2.0.3", "--ranks-per-node", "8",
            "--run-class", "tiny=1x2", "--run-class", "mid=8x1")
    result = advise_cli(*args, "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert "| tiny | 2 | 1 | predicted, below measured |" in result.output
    assert "| mid | 1 | 8 | measured |" in result.output
    assert ("warning: run class 'tiny' at 1 node is 1.8 doublings below the smallest "
            "measured node count (3.375)") in result.output
    doc = json.loads(advise_cli(*args, "--format", "json").stdout)
    tiny, mid = doc["run_classes"]
    assert tiny["below_measured_range"] and not mid["below_measured_range"]
    assert sum("below the smallest measured node count" in w for w in doc["warnings"]) == 1


def test_a_kill_risk_past_the_calibration_errors_is_said_of_each_class(trained_store) -> None:
    """The warning that --kill-risk is rarer than the calibration errors resolve was said
    of the recommendation's node count alone: a run class elsewhere had a walltime of
    the widest error with nothing said. Each class's is said now, by its label, with its
    own percentile; a class at the recommended count shares the recommendation's, once."""
    rec = advise_plan(trained_store, PlanRequest(app="bert", system="dgxa100_ngc22.04",
                                                 kill_risk=0.0001)).recommended.nodes
    other = 1 if rec != 1 else 2
    plan = advise_plan(trained_store, PlanRequest(
        app="bert", system="dgxa100_ngc22.04", kill_risk=0.0001,
        run_classes=(f"same={rec}x1", f"other={other}x1")))
    notes = [w for w in plan.warnings if "rarer than the calibration errors" in w]
    other_class = next(c for c in plan.run_classes if c.label == "other")
    rare = "--kill-risk 0.0001 is rarer than the calibration errors at this node count"
    assert [n.startswith(start) for n, start in zip(
        notes, (rare, f"run class 'other': {rare}"), strict=True)] == [True, True], notes
    assert f"({format_seconds(other_class.walltime_quantile_s)} s)" in notes[1]
    assert f"({format_seconds(plan.walltime_quantile_s)} s)" in notes[0]
