"""``advise next-runs``: benchmarks that tighten the advised request, within a budget."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from perfpredict.advise.next_runs import NEXT_RUN_COLUMNS, plan_next_runs, with_simulated_run
from perfpredict.advise.plan import PlanRequest
from perfpredict.errors import BadInputError
from perfpredict.estimate import Query, load_predictor
from perfpredict.overhead.features import SUMMARY_NAMES
from tests.advise.conftest import BERT, BERT_SYSTEM, RELEARN, one_error_line

BERT_REQUEST = PlanRequest(app="bert", system="dgxa100_ngc22.04")


def test_a_simulated_measurement_extends_the_context(trained_url) -> None:
    predictor = load_predictor(trained_url)
    match = predictor.find_series(Query(app="bert", nodes=1, system="dgxa100_ngc22.04"))
    series, ctx = predictor.series_context(match.entry)
    extended, refitted = with_simulated_run(series, ctx, 1024.0, 9.0)
    assert refitted.scale_max == 1024 and extended.scales.size == series.scales.size + 1
    carried = [SUMMARY_NAMES.index("noise_log"), SUMMARY_NAMES.index("log2_io_bytes_per_node")]
    # noise and I/O (none here) are unknown until the run is done: carried over
    np.testing.assert_array_equal(refitted.summary[carried], ctx.summary[carried])
    # as is whether the runs were repeated (bert's were; its entry keeps their medians)
    assert ctx.repeated and refitted.repeated

    # the target is one doubling beyond the new largest scale instead of two, which is what
    # the predictor's distance-dependent interval responds to
    before, after = (predictor.predictor.predict(s, np.array([2048.0]), 0.8, c)[0]
                     for s, c in ((series, ctx), (extended, refitted)))
    assert before.extrapolation_log2 == pytest.approx(2.0)
    assert after.extrapolation_log2 == pytest.approx(1.0)


def test_runs_fit_the_budget_and_shrink_the_spread(trained_store) -> None:
    plan = plan_next_runs(trained_store, BERT_REQUEST, target_nodes=2048,
                          budget_node_hours=20)
    assert plan.steps, plan.summary()
    assert plan.spent_node_hours_p90 <= 20
    assert sum(s.cost_node_hours_p90 for s in plan.steps) == pytest.approx(
        plan.spent_node_hours_p90)
    assert plan.spread_after < plan.spread_now
    assert all(s.reduction > 0 for s in plan.steps)
    assert not {s.nodes for s in plan.steps} & {1, 8, 128, 512}  # never re-measure
    assert all(s.nodes <= 2048 for s in plan.steps)
    spreads = [plan.spread_now] + [s.spread_after for s in plan.steps]
    assert spreads == sorted(spreads, reverse=True)
    for before, step in zip(spreads, plan.steps, strict=False):
        assert step.spread_before == pytest.approx(before)


def test_a_budget_too_small_for_any_run_says_so(trained_store) -> None:
    plan = plan_next_runs(trained_store, BERT_REQUEST, target_nodes=2048,
                          budget_node_hours=0.01)
    assert plan.steps == [] and plan.spread_after == plan.spread_now
    assert any("more than the budget" in n for n in plan.notes)
    # the budget decided, not the runs: "no benchmark run would tighten it" said the runs
    # were of no use, with the note below saying none had been weighed
    assert "no benchmark run fits in it." in plan.summary()
    assert "would tighten" not in plan.summary()


def test_default_target_is_the_advised_node_count(trained_store) -> None:
    from perfpredict.advise.plan import advise_plan

    plan = plan_next_runs(trained_store, BERT_REQUEST)
    assert plan.target_nodes == advise_plan(trained_store, BERT_REQUEST).recommended.nodes


def test_a_target_and_budget_from_numpy_write_as_json(trained_store) -> None:
    """``target_nodes=np.int64(...)`` (a node count read from a frame) came back in the
    plan as numpy's int64, and json.dumps of its as_dict failed."""
    plan = plan_next_runs(trained_store, BERT_REQUEST, target_nodes=np.int64(64),
                          budget_node_hours=np.float32(500))
    doc = json.loads(json.dumps(plan.as_dict()))
    assert (doc["target_nodes"], doc["budget_node_hours"]) == (64, 500)


def test_bad_budget_and_target(trained_store) -> None:
    with pytest.raises(BadInputError, match="budget"):
        plan_next_runs(trained_store, BERT_REQUEST, budget_node_hours=-1)
    with pytest.raises(BadInputError, match="target-nodes"):
        plan_next_runs(trained_store, PlanRequest(app="bert", system="tpu-v4"),
                       target_nodes=4)
    # the fixture's machine has 2048 nodes, its queues take up to 1024
    with pytest.raises(BadInputError, match="--target-nodes 4096 is more than the 2048"):
        plan_next_runs(trained_store, BERT_REQUEST, target_nodes=4096)
    plan = plan_next_runs(trained_store, BERT_REQUEST, target_nodes=2048)
    assert all(step.nodes <= 1024 for step in plan.steps)
    assert any(note.endswith("are not considered (2048)") for note in plan.notes)


def test_cli_table_json_and_csv(advise_cli) -> None:
    args = ("advise", "next-runs", *BERT, "--target-nodes", "2048", "--budget-node-hours", "20")
    table = advise_cli(*args)
    assert table.exit_code == 0, table.output
    assert "P90/P50" in table.output and "Benchmarks to run next" in table.output
    doc = json.loads(advise_cli(*args, "--format", "json").output)
    assert doc["target_nodes"] == 2048 and doc["spent_node_hours_p90"] <= 20
    assert doc["runs"] and doc["spread_after"] < doc["spread_now"]
    # whole node counts as JSON integers, as a script compares them with its own
    assert doc["measured_nodes"] and all(type(n) is int for n in doc["measured_nodes"])
    rows = list(csv.DictReader(io.StringIO(advise_cli(*args, "--format", "csv").output)))
    assert list(rows[0]) == list(NEXT_RUN_COLUMNS) and len(rows) == len(doc["runs"])
    # "1 benchmark run(s)": the count said in its own number
    runs = len(doc["runs"])
    said = " ".join(table.output.split())
    assert f", {runs} benchmark run{'' if runs == 1 else 's'} costing " in said
    assert "run(s)" not in said


def test_cli_writes_a_budget_in_thousands_not_an_exponent(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """A budget of 100,000 node-hours was "a budget of 1e+05 node-hours", the runs'
    cost "2.522e+04", beside a table that writes 25,218."""
    result = advise_cli("advise", "next-runs", *BERT, "--target-nodes", "2048",
                        "--budget-node-hours", "100000")
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "With a budget of 100,000 node-hours, " in said
    assert "e+0" not in said


def test_cli_without_a_run_to_suggest_prints_no_empty_table(advise_cli) -> None:
    result = advise_cli("advise", "next-runs", *BERT, "--target-nodes", "2048",
                        "--budget-node-hours", "0.01")
    assert result.exit_code == 0, result.output
    assert "P90/P50" in result.output and "Benchmarks to run next" not in result.output


def test_the_plan_says_which_of_several_series_it_is_for(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """--app alone matches several bert series: the plan names the one it chose and the
    others, as advise and estimate do, rather than leave a tie broken without a word."""
    result = advise_cli("advise", "next-runs", "--app", "bert", "--target-nodes", "1024",
                        "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (note,) = [n for n in doc["notes"] if "series match" in n]
    assert note.split(" series match; using the best measured one (most scales, then most "
                      "runs), not ")[1].startswith("bert on "), note
    assert doc["series"] not in note


def test_a_target_of_one_node_is_said_in_the_singular(advise_cli) -> None:
    result = advise_cli("advise", "next-runs", *BERT, "--target-nodes", "1")
    assert result.exit_code == 0, result.output
    assert "At 1 node the P90/P50" in result.output, result.output


@pytest.mark.parametrize(("args", "said"), [
    (("--budget-node-hours", "0"), "--budget-node-hours must be a finite number above 0"),
    # an infinite budget was taken as one (JSON wrote it as Infinity, which no parser
    # reads), and nan was said to be "not more than 0"
    (("--budget-node-hours", "inf"), "--budget-node-hours must be a finite number above "
     "0 (leave it out for no limit), got inf"),
    (("--budget-node-hours", "nan"), "--budget-node-hours must be a finite number above "
     "0 (leave it out for no limit), got nan"),
    # said as "nodes", the option's name never typed
    (("--target-nodes", "100000000000"),
     "--target-nodes must be a whole number from 1 to 2147483647, got 1e+11"),
    # the refusals of a target outside the machine or the measured range say what to ask
    (("--target-nodes", "4096"), f"--target-nodes 4096 is more than the 2048 nodes "
     f"{BERT_SYSTEM} has (the catalog); ask for at most 2048"),
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else None)
def test_cli_bad_budget_or_target_is_one_error_line(  # type: ignore[no-untyped-def]
        advise_cli, args: tuple[str, ...], said: str) -> None:
    result = advise_cli("advise", "next-runs", *BERT, *args)
    assert result.exit_code == 2
    assert one_error_line(result).startswith(f"Error: {said}")


@pytest.mark.parametrize("subcommand", ["next-runs", "walltime"])
def test_options_given_to_advise_before_a_subcommand_say_where_they_go(  # type: ignore[no-untyped-def]
        advise_cli, subcommand: str) -> None:
    """'advise --app X next-runs' gives --app to 'advise' itself; the subcommand, which
    never sees it, would ask for the --app the user typed."""
    result = advise_cli("advise", *BERT, subcommand)
    assert result.exit_code == 2
    line = one_error_line(result)
    assert line.startswith("Error: --app, --system before '") and "are options of 'advise'" \
        in line, line
    assert f"'perfpredict advise {subcommand} --help'" in line
    # after the name they reach the subcommand
    assert advise_cli("advise", "next-runs", *BERT).exit_code == 0


def test_a_target_below_the_measured_range_says_what_to_ask_for(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """RELeARN measured at 32-512 ranks is 2-32 nodes at 16 ranks per node."""
    relearn = (*RELEARN[:-1], "16")
    result = advise_cli("advise", "next-runs", *relearn, "--target-nodes", "1")
    assert result.exit_code == 2
    assert one_error_line(result) == ("Error: --target-nodes 1 is below the smallest "
                                      "measured configuration (2 nodes); ask for 2 or more")
    # at 24 ranks per node the smallest is 1.33 nodes: the count to ask for is whole
    result = advise_cli("advise", "next-runs", *RELEARN[:-1], "24", "--target-nodes", "1")
    assert result.exit_code == 2
    assert one_error_line(result) == ("Error: --target-nodes 1 is below the smallest "
                                      "measured configuration (1.33333 nodes); ask for 2 "
                                      "or more")


def test_a_run_no_queue_holds_says_so(trained_url, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A benchmark longer than any queue taking its node count allows was suggested
    without a word (a tester's: 27 chained 15-minute jobs)."""
    import dataclasses

    from perfpredict.store import open_store
    from tests.advise.conftest import with_bert_machine

    url = with_bert_machine(trained_url, tmp_path, lambda spec: dataclasses.replace(
        spec, queues=tuple(dataclasses.replace(q, max_walltime_s=1.0) for q in spec.queues)))
    store = open_store(url)
    try:
        plan = plan_next_runs(store, BERT_REQUEST, target_nodes=1024, budget_node_hours=20)
    finally:
        store.dispose()
    assert plan.steps, plan.summary()
    for step in plan.steps:
        (note,) = [n for n in plan.notes if n.startswith(f"the run at {step.nodes} node")]
        assert "(P90), longer than any queue of" in note
        assert "at most 1 s" in note and "shorten the benchmark" in note


def test_the_summary_names_the_ranks_measured_as_the_basis_does(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """LULESH ran 27 to 343 ranks: at 27 ranks per node next-runs said "measured at 1,
    2.37037, 4.62963, 8, 12.7037 nodes", counts no one ran, where advise's basis names
    the ranks; it says them as the basis does, and the JSON the ranks run, its node
    counts null where the ranks fill no whole node (they were 2.37037..., 4.62962...),
    as advise's JSON gives them."""
    lulesh = ("--app", "LULESH 2.0.3", "--ranks-per-node", "27")
    result = advise_cli("advise", "next-runs", *lulesh, "--target-nodes", "16")
    assert result.exit_code == 0, result.output
    measured = ("27, 64, 125, 216, 343 MPI ranks (1 to 12.7037 nodes, converted at 27 MPI "
                "ranks per node)")
    assert f"(measured at {measured}). " in " ".join(result.stdout.split())
    assert "2.37" not in result.stdout
    (basis,) = [line for line in advise_cli("advise", *lulesh).stdout.splitlines()
                if line.startswith("  basis: ")]
    assert f" at {measured};" in basis
    doc = json.loads(advise_cli("advise", "next-runs", *lulesh, "--target-nodes", "16",
                                "--format", "json").stdout)
    assert doc["ranks_per_node"] == 27
    assert doc["measured_nodes"] == [1, None, None, 8, None]
    assert doc["measured_ranks"] == [27, 64, 125, 216, 343]
    nodes_doc = json.loads(advise_cli("advise", "next-runs", *BERT, "--format", "json").stdout)
    assert nodes_doc["ranks_per_node"] is None and nodes_doc["measured_ranks"] is None
    assert "(measured at 1, 8, 128, 512 nodes)" in advise_cli(
        "advise", "next-runs", *BERT).stdout


def test_a_next_runs_plan_shows_its_answer_in_a_notebook_not_every_step(trained_store) -> None:  # type: ignore[no-untyped-def]
    """``plan_next_runs(...)`` as a notebook cell's value spelled out every step and note
    (755 characters for LULESH), where a Plan's repr is its answer."""
    plan = plan_next_runs(trained_store, PlanRequest(app="LULESH 2.0.3", ranks_per_node=27))
    assert plan.steps
    shown = repr(plan)
    assert len(shown) < 250
    assert shown == (f"NextRunsPlan(series={plan.series!r}, target_nodes={plan.target_nodes}, "
                     f"spread_now={plan.spread_now:.4g}, spread_after={plan.spread_after:.4g}, "
                     f"spent_node_hours_p90={plan.spent_node_hours_p90:.4g}, "
                     f"nodes={[s.nodes for s in plan.steps]}, n_notes={len(plan.notes)})")
