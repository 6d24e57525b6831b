"""``perfpredict advise``: node-count choice, walltime, node-hours, JSON and batch directives,
on the real bundled data through a predictor trained on it."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest
from typer.testing import CliRunner

from perfpredict.advise.job_limits import quantile_confidence
from perfpredict.advise.plan import PlanRequest, advise_plan, sweep_nodes
from perfpredict.advise.selection import (
    Candidate,
    EfficiencyFloor,
    node_count,
    objective_score,
    percent_apart,
)
from perfpredict.advise.walltime import slurm_time
from perfpredict.durations import format_seconds
from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.figures import format_value, significant
from tests.advise.conftest import (
    BERT,
    BERT_SYSTEM,
    RELEARN,
    one_error_line,
    with_bert_machine,
    with_queue_charges,
)

BERT_REQUEST = {"app": "bert", "system": "dgxa100_ngc22.04"}


def test_sweep_covers_powers_of_two_and_measured_counts() -> None:
    assert sweep_nodes(1, [1, 8, 128, 540], 1024) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
                                                      540, 1024]
    assert sweep_nodes(27, [27, 64, 125], 200) == [27, 32, 64, 125, 128]
    assert sweep_nodes(0.5, [0.5, 1], 4) == [1, 2, 4]


def test_p90_is_the_upper_bound_of_the_central_80_percent_interval() -> None:
    assert quantile_confidence(0.9) == pytest.approx(0.8)
    assert quantile_confidence(0.95) == pytest.approx(0.9)


@pytest.mark.parametrize("objective", ["fastest", "cheapest", "balanced"])
def test_recommendation_obeys_the_efficiency_floor(trained_store, objective: str) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, objective=objective,
                                                  min_efficiency=0.7))
    rec = plan.recommended
    assert rec.efficiency >= 0.7 and rec.meets_floor
    assert [c.meets_floor for c in plan.candidates] == [c.efficiency >= 0.7
                                                        for c in plan.candidates]
    # nothing that meets the floor is better by the objective
    score = objective_score(objective, plan.weak, plan.measured[0].nodes)
    assert all(score(rec) <= score(c) for c in plan.candidates if c.meets_floor)
    assert plan.reason.startswith(objective) and plan.reason.endswith(".")
    assert plan.reason.count(". ") == 0, "the reason is one sentence"


def test_fastest_names_the_floor_that_stopped_it(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST))
    faster = [c for c in plan.candidates if c.predicted_runtime_s < plan.recommended
              .predicted_runtime_s]
    assert faster and not any(c.meets_floor for c in faster)
    assert plan.rule == "min_efficiency 0.7"
    assert "70% floor" in plan.reason


def test_a_single_node_is_named_in_the_singular(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, min_efficiency=0.99))
    assert plan.recommended.nodes == 1
    assert plan.reason.startswith("fastest: 1 node gives "), plan.reason
    assert "1 nodes" not in plan.reason


def test_a_sweep_of_one_node_count_says_it_is_the_only_one(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, max_nodes=1))
    assert [c.nodes for c in plan.candidates] == [1]
    assert plan.reason.startswith("fastest: 1 node is the only node count considered; "
                                  ), plan.reason
    assert "1-1" not in plan.reason and "1 node counts" not in plan.reason


@pytest.mark.parametrize(("efficiency", "said"), [(0.6996, "69.96%"), (0.699, "69.9%"),
                                                   (0.58, "58%")])
def test_an_efficiency_below_the_floor_reads_below_it(efficiency: float, said: str) -> None:
    candidate = Candidate(nodes=16, predicted_runtime_s=100.0, lower_runtime_s=90.0,
                          upper_runtime_s=110.0, p90_runtime_s=105.0, efficiency=efficiency,
                          speedup=11.2, speedup_per_doubling=None, node_hours_p50=0.4,
                          node_hours_p90=0.5, measured=False, measured_runtime_s=None,
                          beyond_measured_range=False)
    (_, why), = EfficiencyFloor(min_efficiency=0.7).violations(candidate, weak=False)
    assert why == f"is only {said} efficient, below the 70% floor"


@pytest.mark.parametrize(("efficiency", "floor", "said"), [
    (0.696, 0.7, "69.6%"), (0.74, 0.7, "74%"), (0.7, 0.7, "70%"), (0.70001, 0.7, "70.001%"),
    (0.52, None, "52%"), (0.0045, 0.7, "0.45%"), (0.0045, None, "0.45%"),
    (0.00018, 0.001, "0.018%"), (0.00999, 0.01, "0.999%"), (0.0, None, "0%")])
def test_an_efficiency_in_the_candidates_table_reads_on_its_side_of_the_floor(
        efficiency: float, floor: float | None, said: str) -> None:
    """The table's efficiency column beside its verdict: "70%" and "<floor" for 69.6%
    read as a contradiction."""
    assert percent_apart(efficiency, floor) == said


#: An efficiency below 1%, as every rendering of one must show it: two significant digits.
SMALL_PERCENT = r"0\.0*[1-9]\d%"


def test_efficiencies_below_one_percent_keep_two_significant_digits(  # type: ignore[no-untyped-def]
        trained_url: str, tmp_path) -> None:
    """bert swept to a million nodes, past every useful scale: the table read "0%" for
    0.18% (and 0.28%, 0.43%...), and so did the recommendation's summary line."""
    import dataclasses

    from perfpredict.cli.app import app

    url = with_bert_machine(trained_url, tmp_path, lambda spec: dataclasses.replace(
        spec, nodes=2**20, queues=(),
        sources={k: v for k, v in spec.sources.items() if k != "queues"}))

    def advise_cli(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(app, ["--db", url, *args])

    result = advise_cli("advise", *BERT, "--max-nodes", "1048576", "--objective", "fastest",
                        "--min-efficiency", "0.001")
    assert result.exit_code == 0, result.output
    summary = re.search(r"parallel efficiency (\S+), speedup", result.stdout)
    assert summary is not None and re.fullmatch(SMALL_PERCENT, summary[1]), summary
    cells = re.findall(r"│ ([\d.]+%) ", result.stdout)
    assert "0%" not in cells and any(re.fullmatch(SMALL_PERCENT, c) for c in cells), cells
    estimate = advise_cli("estimate", *BERT, "--nodes", "1048576")
    said = re.search(r"parallel efficiency (\S+) against", estimate.stdout)
    assert said is not None and said[1] == summary[1]


def test_speedup_per_doubling_floor_holds_on_every_doubling_up_to_the_choice(
        trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST,
                                                  min_speedup_per_doubling=1.8))
    upto = [c for c in plan.candidates if c.nodes <= plan.recommended.nodes]
    assert all(c.speedup_per_doubling is None or c.speedup_per_doubling >= 1.8 for c in upto)
    assert "per doubling" in plan.reason and plan.rule == "min_speedup_per_doubling 1.8"
    # the overall 70% default is off when only the per-doubling rule is asked for
    assert plan.request.floor().min_efficiency is None


def test_walltime_covers_the_kill_risk_quantile_within_the_queue(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, max_nodes=64))
    rec = plan.recommended
    assert plan.catalog_system == BERT_SYSTEM and plan.queue == "medium", plan.reason
    assert plan.walltime_s >= plan.walltime_quantile_s >= rec.predicted_runtime_s
    assert plan.walltime_s % plan.time_granularity_s == 0 and plan.time_granularity_s == 300
    assert plan.walltime_s <= plan.queue_max_walltime_s
    assert plan.kill_probability <= plan.request.kill_risk
    assert plan.chained_jobs == 1


def test_a_machine_without_queues_does_not_send_the_user_to_another_system(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """The warning said "or pass --system NAME of a catalog machine", read as the machine
    to run on; --system chooses the runs, and LULESH has none on a machine with queues:
    the command it suggested ends in "LULESH 2.0.3 has no runs with system 'Frontier'"."""
    result = advise_cli("advise", "--app", "LULESH 2.0.3", "--ranks-per-node", "36")
    assert result.exit_code == 0, result.output
    assert ("warning: the catalog lists no queues for opal: walltime rounded to 60 s, no "
            "queue limit checked (add the machine's queues with 'perfpredict systems add "
            "FILE.toml'; --system chooses the runs to advise from, not the machine to run "
            "on)") in " ".join(result.stdout.split())
    assert advise_cli("advise", "--app", "LULESH 2.0.3", "--ranks-per-node", "36",
                      "--system", "Frontier").exit_code == 1


def test_walltime_is_capped_by_the_queue_with_a_chaining_warning(trained_store) -> None:
    # one or two nodes run 10-20 min; the fixture's queue for 1-2 nodes allows 10 min
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, objective="cheapest",
                                                  max_nodes=2))
    assert plan.recommended.nodes <= 2 and plan.queue == "small"
    assert plan.walltime_s == plan.queue_max_walltime_s == 600
    assert plan.walltime_quantile_s > plan.walltime_s
    # each job works until its checkpoint signal, a fifth of the 10 min before the limit
    assert plan.signal_lead_s == 120
    assert plan.chained_jobs == math.ceil(plan.walltime_quantile_s / (600 - 120)) >= 2
    assert any("chain" in w and "checkpoint" in w for w in plan.warnings)
    assert plan.kill_probability > plan.request.kill_risk


@pytest.mark.parametrize(("scheduler", "chain"), [
    ("slurm", "(sbatch --dependency=afterany:JOBID)"),
    ("pbs", "(qsub -W depend=afterany:JOBID)"),
    (None, "(a dependency on the previous job's end, whatever its exit)"),
])
def test_the_chaining_warning_speaks_the_machines_scheduler(scheduler: str | None,
                                                            chain: str) -> None:
    """A PBS machine was told to chain its jobs with sbatch --dependency."""
    from perfpredict.advise.job_limits import walltime_limit
    from perfpredict.catalog import Queue, SystemSpec

    spec = SystemSpec(name="m", nodes=64, scheduler=scheduler,
                      queues=(Queue("short", 1, 64, 600.0),))
    limit = walltime_limit(1500.0, 8, spec, 0.05, "m", "--max-nodes")
    assert limit.chained_jobs == 4  # jobs of 480 s of work, checkpointing 120 s early
    assert f"checkpoint and chain 4 jobs {chain};" in limit.warnings[0]
    # the node-hours of the predicted runtime leave out what chaining costs: each job
    # charged to its limit (and restarts reading the checkpoint) bound a run's hours
    assert limit.warnings[0].endswith("budget up to 4 x 10 min x 8 nodes = 5.33 "
                                      "node-hours per run")


def test_the_chaining_budget_writes_thousands_of_node_hours_as_the_tables_do() -> None:
    """A chain of 2048-node jobs was "budget up to 4 x 10 min x 2048 nodes = 1.37e+03
    node-hours per run", beside tables that write 1,365."""
    from perfpredict.advise.job_limits import walltime_limit
    from perfpredict.catalog import Queue, SystemSpec

    spec = SystemSpec(name="m", nodes=4096, queues=(Queue("short", 1, 4096, 600.0),))
    (chained,) = walltime_limit(1500.0, 2048, spec, 0.05, "m", "--max-nodes").warnings
    assert chained.endswith("budget up to 4 x 10 min x 2048 nodes = 1,365 node-hours per run")


@pytest.mark.parametrize(("kill_risk", "said"), [("0.49", "51st"), ("0.08", "92nd"),
                                                 ("0.07", "93rd"), ("0.05", "95th")])
def test_the_walltime_names_its_percentile_in_english(advise_cli, kill_risk: str,  # type: ignore[no-untyped-def]
                                                      said: str) -> None:
    """Every percentile was "th": --kill-risk 0.49 read "the 51th percentile", 0.08 "the
    92th", in the summary, the proposal's note and the chaining warning alike."""
    table = advise_cli("advise", *BERT, "--kill-risk", kill_risk)
    assert table.exit_code == 0, table.output
    assert f"(PBS): the {said} percentile " in table.stdout
    markdown = advise_cli("advise", *BERT, "--kill-risk", kill_risk, "--format", "markdown")
    assert markdown.exit_code == 0, markdown.output
    assert f"the {said} percentile of the predicted runtime" in markdown.stdout
    chained = advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2",
                         "--kill-risk", kill_risk)
    assert f"the walltime of the {said}-percentile runtime" in " ".join(chained.stdout.split())


@pytest.mark.parametrize(("nodes", "said"), [(1, "1 node"), (8, "8 nodes")])
def test_the_queue_warnings_count_one_node_in_the_singular(nodes: int, said: str) -> None:
    """A chained run on one node was "every queue of m that takes 1 nodes"."""
    from perfpredict.advise.job_limits import walltime_limit
    from perfpredict.catalog import Queue, SystemSpec

    spec = SystemSpec(name="m", nodes=64, queues=(Queue("short", 1, 8, 600.0),))
    (chained,) = walltime_limit(1500.0, nodes, spec, 0.05, "m", "--max-nodes").warnings
    assert f"every queue of m that takes {said}, the longest" in chained
    narrow = SystemSpec(name="m", nodes=64, queues=(Queue("wide", 16, 64, 600.0),))
    (refused,) = walltime_limit(1500.0, nodes, narrow, 0.05, "m", "--max-nodes").warnings
    assert refused.startswith(f"no queue of m accepts {said}: such a job may pend forever")


def test_a_node_count_no_queue_accepts_is_not_considered(trained_store) -> None:
    """A job no queue takes may pend forever: it is left out of the sweep, and said so,
    rather than recommended into a proposal or a job script."""
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, objective="fastest",
                                                  min_efficiency=0.01, max_nodes=2048))
    assert max(c.nodes for c in plan.candidates) == 1024
    assert plan.queue is not None
    assert not any("pend forever" in w for w in plan.warnings)
    assert any(w.startswith("node counts no queue of ") and w.endswith("(2048)")
               for w in plan.warnings)


def test_a_walltime_beyond_every_measured_count_says_to_halve_the_kill_risk(
        trained_store) -> None:  # type: ignore[no-untyped-def]
    # resnet measured up to 32 nodes, asked up to 4096: a walltime rounded up to a minute
    # leaves the predictor's kill probability at about 16%, above half the risk asked
    resnet = {"app": "resnet", "max_nodes": 4096, "min_efficiency": 0.01}
    beyond = advise_plan(trained_store, PlanRequest(**resnet, kill_risk=0.3))
    assert beyond.recommended.nodes > max(m.nodes for m in beyond.measured)
    assert beyond.kill_probability > 0.15
    assert sum("--kill-risk 0.15" in w for w in beyond.warnings) == 1, beyond.warnings
    # the same walltime at a risk it already halves: asking for half would not change it
    covered = advise_plan(trained_store, PlanRequest(**resnet, kill_risk=0.4))
    assert covered.walltime_s == beyond.walltime_s and covered.kill_probability <= 0.2
    assert not any("--kill-risk" in w for w in covered.warnings), covered.warnings
    # at a measured count (16 of resnet's 1-32 nodes) the walltime rests on the series'
    # own repeats there, no extrapolation: no note, and the walltime, rounded up to a
    # minute past every repeat's deviation, kills at most the share a conformal
    # p-value leaves above them all, 1 / (n + 1) of the two tails
    inside = advise_plan(trained_store, PlanRequest(**{**resnet, "max_nodes": 16},
                                                    kill_risk=0.2))
    assert inside.recommended.nodes <= max(m.nodes for m in inside.measured)
    assert not any("--kill-risk" in w for w in inside.warnings), inside.warnings
    assert 0 < inside.kill_probability <= 0.5 / 10


def test_node_hours_and_allocation_units(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, runs=12, max_nodes=64))
    for c in plan.candidates:
        assert c.lower_runtime_s <= c.predicted_runtime_s <= c.p90_runtime_s
        assert c.p90_runtime_s <= c.upper_runtime_s  # P90 is inside the 90% interval
        assert 0 < c.node_hours_p50 <= c.node_hours_p90
        assert c.node_hours_p50 == pytest.approx(c.nodes * c.predicted_runtime_s / 3600)
    assert plan.node_hours_p50 <= plan.node_hours_p90
    assert plan.node_hours_p50 == pytest.approx(12 * plan.recommended.node_hours_p50)
    # the fixture's machine charges 2 units per node-hour
    assert plan.allocation_unit == "test units"
    assert plan.allocation_units_p50 == pytest.approx(2 * plan.node_hours_p50)
    assert plan.allocation_units_p90 == pytest.approx(2 * plan.node_hours_p90)
    assert "1, 8, 128, 512 nodes" in plan.basis and "2 test units per node-hour" in plan.basis


def test_a_queue_charge_multiplier_is_stated_with_its_queue(trained_url, tmp_path) -> None:
    """The basis said "(times the queue's multiplier)" whatever the multiplier, so a
    premium queue's 2x was in the totals and nowhere in the words a reviewer reads."""
    from perfpredict.store import open_store

    store = open_store(with_queue_charges(trained_url, tmp_path, lambda queue: 1.5))
    try:
        plan = advise_plan(store, PlanRequest(**BERT_REQUEST, max_nodes=64))
    finally:
        store.dispose()
    assert plan.queue == "medium"
    assert plan.allocation_units_p50 == pytest.approx(2 * 1.5 * plan.node_hours_p50)
    assert plan.basis.endswith("at 2 test units per node-hour of elapsed time, times 1.5 in "
                               "queue 'medium'."), plan.basis


def test_a_charge_of_one_unit_per_node_hour_is_said_in_the_singular(trained_url,  # type: ignore[no-untyped-def]
                                                                  tmp_path) -> None:
    """Frontier's proposal caption read "charged on Frontier at 1 Frontier node-hours per
    node-hour of elapsed time"."""
    import dataclasses

    from perfpredict.cli.app import app

    url = with_bert_machine(trained_url, tmp_path, lambda spec: dataclasses.replace(
        spec, charge_factor=1.0, allocation_unit="test node-hours"))
    result = CliRunner().invoke(app, ["--db", url, "advise", *BERT, "--max-nodes", "64",
                                      "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert (f"charged on {BERT_SYSTEM} at 1 test node-hour per node-hour of elapsed time."
            in result.stdout), result.stdout


def test_sweep_defaults_to_the_catalog_size(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST))
    nodes = [c.nodes for c in plan.candidates]
    # the fixture's machine has 2048 nodes, its queues take up to 1024
    assert nodes[0] == 1 and nodes[-1] == 1024
    assert any(w.endswith("are not considered (2048)") for w in plan.warnings)
    assert {1, 8, 128, 512} <= set(nodes)
    assert [c.nodes for c in plan.candidates if c.measured] == [1, 8, 128, 512]


def test_the_sweep_stops_at_the_machine_size(trained_store) -> None:
    """A proposal for more nodes than the machine has would be refused: --max-nodes
    above the catalog's count is cut to it, with a warning, the floor as the user set
    it."""
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, max_nodes=100_000,
                                                  min_efficiency=0.001))
    assert plan.warnings[0] == (f"--max-nodes 100000 is more than the 2048 nodes "
                                f"{BERT_SYSTEM} has (the catalog): the sweep stops at 2048")
    # and the fixture's queues take at most 1024 nodes
    assert plan.warnings[1].endswith("are not considered (2048)")
    assert max(c.nodes for c in plan.candidates) == plan.recommended.nodes == 1024
    assert plan.reason.endswith("the 0.1% parallel-efficiency floor did not bind (no "
                                f"queue of {BERT_SYSTEM} takes more nodes).")


def test_the_sweep_considers_the_max_nodes_asked_for(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """--max-nodes 100 swept the powers of two up to 64 and not 100 itself, the count a
    user capped at (an allocation's or a queue's largest job), while "raise --max-nodes
    to look further" asked for more; the machine's size was swept, a user's cap not."""
    doc = json.loads(advise_cli("advise", *BERT, "--max-nodes", "100", "--format",
                                "json").stdout)
    assert [c["nodes"] for c in doc["candidates"]] == [1, 2, 4, 8, 16, 32, 64, 100]
    table = advise_cli("advise", *BERT, "--max-nodes", "100", "--format", "csv")
    assert table.stdout.splitlines()[-1].startswith("100,False,")


def test_weak_scaling_series_measured_in_ranks(trained_store) -> None:
    plan = advise_plan(trained_store, PlanRequest(
        app="RELeARN", problem_size="9000 neurons/rank, theta=0.3", ranks_per_node=32))
    assert plan.weak and plan.scale_unit == "ranks"
    assert [m.nodes for m in plan.measured] == [1, 2, 4, 8, 16]
    assert plan.candidates[-1].nodes == 256  # 16x the largest measured, no catalog size
    assert plan.recommended.efficiency >= 0.7
    assert ("at 32, 64, 128, 256, 512 MPI ranks (1 to 16 nodes, converted at 32 MPI ranks "
            "per node)") in plan.basis


def test_a_weak_scaling_reason_speaks_of_weak_scaling_efficiency(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """RELeARN's reason said "the 70% parallel-efficiency floor" and "4 nodes would be
    faster", of a run doing four times the work, beside a summary's "weak-scaling
    efficiency 71%"; the reason and the --nodes note now say weak-scaling efficiency and
    compare per unit of work, as the summary does."""
    result = advise_cli("advise", *RELEARN, "--nodes", "64")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "the node counts that meet the 70% weak-scaling efficiency floor (predicted " \
           "weak-scaling efficiency " in text
    assert re.search(r"\d+ nodes? would be faster per unit of work but has a weak-scaling "
                     r"efficiency of only [\d.]+%, below the 70% floor", text), text
    assert re.search(r"--nodes 64: 64 nodes has a weak-scaling efficiency of only [\d.]+%, "
                     r"below the 70% floor, so advise recommends", text), text
    assert "parallel" not in text and " efficient," not in text


def test_a_weak_scaling_reason_speaks_of_throughput_per_doubling(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """RELeARN's reason said "the 1.5x-speedup-per-doubling floor" and "gains only 1.45x
    per doubling of nodes" of runs that each do twice the work of the last, where what a
    doubling gains is throughput (2 T(n) / T(2n)); the reason and the --nodes note now
    say so, as the efficiency beside them says weak-scaling efficiency."""
    result = advise_cli("advise", *RELEARN, "--min-speedup-per-doubling", "1.5",
                        "--nodes", "8")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "among the node counts that meet the 1.5x-throughput-per-doubling floor " \
           "(predicted weak-scaling efficiency " in text
    assert re.search(r"\d+ nodes? would be faster per unit of work but gains only "
                     r"[\d.]+x in throughput per doubling of nodes, below the 1.5x floor",
                     text), text
    assert "speedup" not in text


def test_nodes_past_the_first_short_doubling_say_where_it_fell(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """RELeARN gains 1.45x in throughput from 2 to 4 nodes: --nodes 8 (and 6, a count
    the sweep skips) was said to "not meet the 1.5x-throughput-per-doubling floor",
    not where; the note now names the doubling that fell short, as the reason does."""
    for nodes in ("8", "6"):
        result = advise_cli("advise", *RELEARN, "--min-speedup-per-doubling", "1.5",
                            "--nodes", nodes)
        assert result.exit_code == 0, result.output
        assert (f"--nodes {nodes}: {nodes} nodes lies past 4 nodes, where the throughput "
                "gain per doubling already fell below the 1.5x floor, so advise recommends "
                f"2 nodes; the plan is for {nodes} nodes as asked") in " ".join(
                    result.stdout.split())


@pytest.mark.parametrize(("weak", "gain", "past"), [
    (False, "gains only 1.45x per doubling of nodes",
     "lies past 4 nodes, where the gain per doubling"),
    (True, "gains only 1.45x in throughput per doubling of nodes",
     "lies past 4 nodes, where the throughput gain per doubling")])
def test_the_per_doubling_floor_names_the_gain_as_the_scaling_has_it(
        weak: bool, gain: str, past: str) -> None:
    floor = EfficiencyFloor(min_speedup_per_doubling=1.5)
    short, beyond = (Candidate(
        nodes=n, predicted_runtime_s=100.0, lower_runtime_s=90.0, upper_runtime_s=110.0,
        p90_runtime_s=105.0, efficiency=0.8, speedup=3.0, speedup_per_doubling=x,
        node_hours_p50=0.4, node_hours_p90=0.5, measured=False, measured_runtime_s=None,
        beyond_measured_range=False) for n, x in ((4, 1.45), (8, 1.8)))
    assert floor.violations(short, weak) == [
        ("min_speedup_per_doubling 1.5", f"{gain}, below the 1.5x floor")]
    assert floor.violations(beyond, weak, broken_at=short) == [
        ("min_speedup_per_doubling 1.5", f"{past} already fell below the 1.5x floor")]
    assert floor.describe(weak) == (f"the 1.5x-{'throughput' if weak else 'speedup'}"
                                    "-per-doubling floor")


def test_the_basis_names_the_ranks_measured_not_fractions_of_nodes(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """LULESH ran 27 to 343 ranks: at 27 ranks per node its basis read "at 1, 2.37037,
    4.62963, 8, 12.7037 nodes", counts no one ran, in a proposal's caption; the ranks
    are named, and the nodes they span as the evidence table writes them."""
    result = advise_cli("advise", "--app", "LULESH 2.0.3", "--ranks-per-node", "27")
    assert result.exit_code == 0, result.output
    (basis,) = [line for line in result.stdout.splitlines() if line.startswith("  basis: ")]
    assert (" at 27, 64, 125, 216, 343 MPI ranks (1 to 12.7037 nodes, converted at 27 MPI "
            "ranks per node);") in basis
    assert "2.37" not in basis


def test_the_json_gives_the_ranks_measured_and_no_fraction_of_a_node(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """The JSON's ``measured_nodes`` were [1, 2.37037..., 4.62962..., 8, 12.7037...] for
    LULESH's 27 to 343 ranks at 27 per node, counts no one ran, where the evidence table
    writes '-' beside the ranks: now null there, and the ranks run in
    ``measured_ranks`` (null for a series measured in nodes, whose counts stay whole)."""
    doc = json.loads(advise_cli("advise", "--app", "LULESH 2.0.3", "--ranks-per-node", "27",
                                "--format", "json").stdout)
    assert doc["measured_nodes"] == [1, None, None, 8, None]
    assert doc["measured_ranks"] == [27, 64, 125, 216, 343]
    nodes_doc = json.loads(advise_cli("advise", *BERT, "--format", "json").stdout)
    assert nodes_doc["measured_ranks"] is None
    assert all(type(n) is int for n in nodes_doc["measured_nodes"])


def test_bad_requests_are_refused(trained_store) -> None:
    with pytest.raises(BadInputError, match="min-efficiency"):
        advise_plan(trained_store, PlanRequest(**BERT_REQUEST, min_efficiency=2))
    with pytest.raises(BadInputError, match="kill-risk"):
        advise_plan(trained_store, PlanRequest(**BERT_REQUEST, kill_risk=0.6))
    with pytest.raises(BadInputError, match="max-nodes"):
        advise_plan(trained_store, PlanRequest(app="bert", system="tpu-v4", max_nodes=8))
    with pytest.raises(NotFoundError, match="no trained series"):
        advise_plan(trained_store, PlanRequest(app="no-such-app"))


# --- through the CLI --------------------------------------------------------------------

def test_json_has_the_contract_keys(advise_cli) -> None:
    result = advise_cli("advise", *BERT, "--runs", "5", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    for key in ("recommended_nodes", "predicted_runtime_s", "walltime_s", "node_hours_p50",
                "node_hours_p90", "candidates", "reason", "rule", "walltime_slurm",
                "walltime_pbs", "basis", "warnings"):
        assert key in doc
    assert doc["node_hours_p50"] <= doc["node_hours_p90"]
    assert doc["walltime_s"] >= doc["predicted_runtime_s"]
    assert doc["walltime_slurm"] == slurm_time(doc["walltime_s"])
    assert re.fullmatch(r"\d{2,}:\d{2}:\d{2}", doc["walltime_pbs"])
    for c in doc["candidates"]:
        for key in ("nodes", "predicted_runtime_s", "lower_runtime_s", "upper_runtime_s",
                    "efficiency", "speedup", "node_hours_p50", "node_hours_p90", "measured"):
            assert key in c
        assert isinstance(c["measured"], bool)
    assert sum(c["nodes"] == doc["recommended_nodes"] for c in doc["candidates"]) == 1
    # whole node counts are JSON integers, as the candidates' are ([1.0, 8.0, ...] were not)
    assert doc["measured_nodes"] and all(type(n) is int for n in doc["measured_nodes"])


def test_json_candidates_mark_the_recommended_one_as_the_csv_rows_do(advise_cli) -> None:
    """The CSV's candidate rows had a 'recommended' column and the JSON's candidates no
    such key: a script reading the JSON matched nodes against recommended_nodes."""
    doc = json.loads(advise_cli("advise", *BERT, "--format", "json").stdout)
    rows = list(csv.DictReader(io.StringIO(
        advise_cli("advise", *BERT, "--format", "csv").stdout)))
    assert [c["recommended"] for c in doc["candidates"]] == [
        row["recommended"] == "True" for row in rows]
    (advised,) = [c for c in doc["candidates"] if c["recommended"]]
    assert advised["nodes"] == doc["recommended_nodes"]


def test_candidates_mark_the_count_asked_and_advise_s_own(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """With --nodes 48 the CSV's and the JSON's candidates marked 48 ``recommended``
    and nothing marked advise's own choice (8 nodes), which the plot's CSV marks
    ``advised``; both now carry ``advised`` as the plot's CSV does, the same row as
    ``recommended`` where --nodes is advise's choice too."""
    for asked, advised in ((48, 8), (8, 8)):
        nodes = ("--nodes", str(asked))
        doc = json.loads(advise_cli("advise", *BERT, *nodes, "--format", "json").stdout)
        rows = list(csv.DictReader(io.StringIO(
            advise_cli("advise", *BERT, *nodes, "--format", "csv").stdout)))
        assert doc["advised_nodes"] == advised
        assert [c["nodes"] for c in doc["candidates"] if c["recommended"]] == [asked]
        assert [c["nodes"] for c in doc["candidates"] if c["advised"] is True] == [advised]
        assert [int(r["nodes"]) for r in rows if r["advised"] == "True"] == [advised]
        assert [int(r["nodes"]) for r in rows if r["recommended"] == "True"] == [asked]


def test_table_output_says_what_and_why(advise_cli) -> None:
    result = advise_cli("advise", *RELEARN, "--runs", "3")
    assert result.exit_code == 0, result.output
    assert "Recommendation:" in result.output and "walltime 0-00:" in result.output
    assert "Node counts considered" in result.output and "advised" in result.output


def test_emit_sbatch_directives(advise_cli) -> None:
    result = advise_cli("advise", *RELEARN, "--threads-per-rank", "1", "--emit", "sbatch")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()  # the warnings go to stderr
    directives = [line for line in lines if line.startswith("#SBATCH")]
    assert [d.split("=")[0] for d in directives] == [
        "#SBATCH --nodes", "#SBATCH --ntasks-per-node", "#SBATCH --cpus-per-task",
        "#SBATCH --time"]
    assert "#SBATCH --ntasks-per-node=32" in lines and "#SBATCH --cpus-per-task=1" in lines
    assert re.fullmatch(r"#SBATCH --time=\d+-\d{2}:\d{2}:00", directives[-1])
    assert all(line.startswith("#") for line in lines)  # pastes into a script header


def test_emit_says_the_advice_warnings_on_stderr(advise_cli) -> None:
    """--emit printed the directives and nothing else: the warnings the table gives (here
    the node counts no queue takes; in a store of runs beyond the machine's size, a job of
    more nodes than it has) were lost to a user writing the job script with '> job.sh'.
    They go to stderr, as with --format csv; stdout stays the script header."""
    table = advise_cli("advise", *BERT)
    warnings = [line.strip() for line in table.stdout.splitlines()
                if line.strip().startswith("warning: ")]
    assert any(w.endswith("are not considered (2048)") for w in warnings)
    for scheduler in ("sbatch", "pbs"):
        result = advise_cli("advise", *BERT, "--emit", scheduler)
        assert result.exit_code == 0, result.output
        assert all(line.startswith("#") for line in result.stdout.splitlines())
        assert result.stderr.splitlines() == warnings


@pytest.mark.parametrize(("machine", "emit", "fix"), [
    ("pbs", "sbatch", "use --emit pbs"),
    ("slurm", "pbs", "use --emit sbatch"),
    ("fujitsu-tcs", "sbatch", "perfpredict writes no fujitsu-tcs directives: write them "
     "from the advice"),
])
def test_emit_for_another_scheduler_than_the_machines_is_warned_about(  # type: ignore[no-untyped-def]
        trained_url: str, tmp_path, machine: str, emit: str, fix: str) -> None:
    """--emit sbatch on a machine the catalog lists as PBS printed #SBATCH lines, which
    qsub reads as comments, and said nothing."""
    import dataclasses

    from perfpredict.cli.app import app

    url = with_bert_machine(trained_url, tmp_path,
                            lambda spec: dataclasses.replace(spec, scheduler=machine))
    runner = CliRunner()
    result = runner.invoke(app, ["--db", url, "advise", *BERT, "--emit", emit])
    assert result.exit_code == 0, result.output
    writes = {"sbatch": "slurm", "pbs": "pbs"}[emit]
    assert result.stderr.splitlines()[0] == (
        f"warning: {BERT_SYSTEM} runs {machine} (the catalog), and --emit {emit} writes "
        f"{writes} directives, which {machine} does not read; {fix}")
    assert all(line.startswith("#") for line in result.stdout.splitlines())
    as_json = runner.invoke(app, ["--db", url, "advise", *BERT, "--emit", emit,
                                  "--format", "json"])
    assert json.loads(as_json.stdout)["warnings"][0] == result.stderr.splitlines()[0][9:]
    if machine != "fujitsu-tcs":
        right = runner.invoke(app, ["--db", url, "advise", *BERT, "--emit",
                                    fix.removeprefix("use --emit ")])
        assert right.exit_code == 0 and "(the catalog)" not in right.stderr


def test_emit_pbs_directives(advise_cli) -> None:
    result = advise_cli("advise", *RELEARN, "--threads-per-rank", "1", "--emit", "pbs")
    assert result.exit_code == 0, result.output
    assert re.search(r"^#PBS -l select=\d+:mpiprocs=32:ompthreads=1$", result.output, re.M)
    assert re.search(r"^#PBS -l walltime=\d{2,}:\d{2}:\d{2}$", result.output, re.M)


def test_emit_with_format_json_gives_the_directives_and_their_values(advise_cli) -> None:
    """A script that submits the job reads the directives and the numbers behind them
    from one JSON object; --format json with --emit printed the text alone."""
    result = advise_cli("advise", *RELEARN, "--threads-per-rank", "1", "--emit", "sbatch",
                        "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    text = advise_cli("advise", *RELEARN, "--threads-per-rank", "1", "--emit", "sbatch")
    assert doc["scheduler"] == "sbatch" and doc["directives"] == text.stdout.rstrip("\n")
    assert doc == {**json.loads(advise_cli("advise", *RELEARN, "--threads-per-rank", "1",
                                           "--format", "json").stdout),
                   "scheduler": "sbatch", "directives": doc["directives"]}
    assert f"#SBATCH --nodes={doc['recommended_nodes']}" in doc["directives"]
    assert f"#SBATCH --time={doc['walltime_slurm']}" in doc["directives"]
    assert (doc["ranks_per_node"], doc["threads_per_rank"]) == (32, 1)


@pytest.mark.parametrize("fmt", ["csv", "markdown", "latex"])
def test_emit_refuses_a_format_it_has_no_form_in(advise_cli, fmt: str) -> None:  # type: ignore[no-untyped-def]
    result = advise_cli("advise", *BERT, "--emit", "pbs", "--format", fmt)
    assert result.exit_code == 2
    assert one_error_line(result) == (
        f"Error: --emit pbs prints batch directives as text, or as JSON with --format json; "
        f"drop --format {fmt}, or --emit for the advice as {fmt}")


def test_emit_chaining_signal_when_capped(advise_cli) -> None:
    result = advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2",
                        "--emit", "sbatch")
    assert result.exit_code == 0, result.output
    assert "#SBATCH --time=0-00:10:00" in result.output
    # a fifth of the 10 minutes before the limit: a 600 s lead signalled it at its start
    assert "#SBATCH --signal=B:USR1@120  # checkpoint" in result.output
    pbs = advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2",
                     "--emit", "pbs")
    assert "#PBS -l walltime=00:10:00" in pbs.output and "chain" in pbs.output
    markdown = advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2",
                          "--format", "markdown")
    assert "the limit of queue small, below the 95th percentile" in markdown.output
    assert "chained jobs, checkpointed before the limit" in markdown.output
    # the tables count the predicted runtime alone: the note, not only a warning on
    # stderr, bounds what the chain may be charged
    doc = json.loads(advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes",
                                "2", "--format", "json").stdout)
    jobs, nodes = doc["chained_jobs"], doc["recommended_nodes"]
    charge = format_value(jobs * 600 * nodes / 3600)
    assert (f"(the node-hours count the predicted runtime alone; with each job but the last "
            f"charged up to its limit, a run takes up to {jobs} x 10 min x "
            f"{node_count(nodes)} = {charge} node-hours).") in markdown.stdout


@pytest.mark.parametrize(("args", "code", "fragment"), [
    (("--min-efficiency", "2"), 2, "--min-efficiency"),
    (("--min-speedup-per-doubling", "3"), 2, "--min-speedup-per-doubling"),
    (("--kill-risk", "0.9"), 2, "--kill-risk"),
    # "must be between 0 and 0.5 ..., got 0.5" read as if 0.5 were taken
    (("--kill-risk", "0.5"), 2,
     "--kill-risk must be above 0 and below 0.5 (a share of jobs killed), got 0.5"),
    (("--runs", "0"), 2, "--runs"),
    # node-hours times 10^400 runs overflowed: an internal error
    (("--runs", "1" + "0" * 400), 2,
     "--runs must be a whole number from 1 to 1000000, got a number of 401 digits"),
    # one past the limit was said as 1e+06, the limit itself
    (("--runs", "1000001"), 2, "--runs must be a whole number from 1 to 1000000, got 1000001"),
    # said as "nodes", the option's name never typed, of a power of two the sweep made
    (("--max-nodes", "100000000000"), 2,
     "--max-nodes must be a whole number from 1 to 2147483647, got 1e+11"),
    (("--plot", "figure.gif"), 2, "--plot"),
])
def test_bad_options_give_one_error_line(advise_cli, args, code, fragment) -> None:
    result = advise_cli("advise", *BERT, *args)
    assert result.exit_code == code
    assert fragment in one_error_line(result)


def test_unknown_app_is_a_domain_failure(advise_cli) -> None:
    result = advise_cli("advise", "--app", "no-such-app")
    assert result.exit_code == 1
    assert "no trained series" in one_error_line(result)


def test_ranks_series_without_ranks_per_node_is_bad_input(advise_cli) -> None:
    result = advise_cli("advise", "--app", "RELeARN")
    assert result.exit_code == 2
    assert "--ranks-per-node" in one_error_line(result)


def test_one_run_states_its_node_hours_once(advise_cli) -> None:
    """For one run (the default) the totals are the run's: not "for 1 runs" again."""
    one = advise_cli("advise", *BERT)
    assert one.exit_code == 0 and "node-hours per run" in one.stdout
    assert "for 1 runs" not in one.stdout
    assert "for 5 runs" in advise_cli("advise", *BERT, "--runs", "5").stdout


def test_advise_without_app_shows_help(advise_cli) -> None:
    """Bare, as a bare 'perfpredict runs': the help, and exit 2 (no advice was given)."""
    result = advise_cli("advise")
    assert result.exit_code == 2
    assert "--app" in result.output and "next-runs" in result.output


def test_end_to_end_on_a_fresh_store(store, cli) -> None:
    """ingest, train, advise: all a user runs, on each backend."""
    from perfpredict import datasets
    from perfpredict.train import train

    datasets.ingest(store, ["relearn"])
    train(store, ["RELeARN"])
    result = cli("advise", *RELEARN, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["scale_unit"] == "ranks"
    (advised,) = [c for c in doc["candidates"] if c["nodes"] == doc["recommended_nodes"]]
    assert advised["predicted_runtime_s"] == doc["predicted_runtime_s"]
    assert doc["catalog_system"].startswith("Lichtenberg")


def test_a_walltime_is_one_granule_at_least() -> None:
    """A runtime below 6e-8 s rounded to a walltime of 0 s, and advise divided by it."""
    from perfpredict.advise.job_limits import walltime_limit

    limit = walltime_limit(1e-9, 1, None, 0.05, "nowhere", "--max-nodes")
    assert limit.walltime_s == 60.0


# --- the kill probability said --------------------------------------------------------

#: Requests whose walltime, the runtime quantile at 1 - --kill-risk rounded up, the
#: interval model's tail read back above the risk (0.00152 at 0.00148), interpolated
#: between 1000 confidences (found by scanning risks of 0.001-0.01 on the fixture's
#: predictor).
READ_HIGH = [
    ({"app": "resnet", "objective": "cheapest"}, 0.00148),
    ({"app": "bert", "max_nodes": 4096, "min_efficiency": 0.01}, 0.00151),
    ({"app": "bert", "objective": "cheapest"}, 0.00292),
]


@pytest.mark.parametrize(("fields", "kill_risk"), READ_HIGH)
def test_a_walltime_at_the_risks_quantile_is_said_to_kill_at_most_that_risk(
        trained_store, advise_cli, fields: dict[str, object], kill_risk: float) -> None:
    """--kill-risk 0.001 reported a kill probability of 0.00106: above the risk the
    walltime was built for, by the interpolation of the tail, not by the walltime."""
    from perfpredict.advise.job_limits import exceedance_probability
    from perfpredict.estimate import load_predictor

    plan = advise_plan(trained_store, PlanRequest(**fields, kill_risk=kill_risk))  # type: ignore[arg-type]
    assert plan.chained_jobs == 1 and plan.walltime_s >= plan.walltime_quantile_s
    reading = exceedance_probability(load_predictor(trained_store.url),
                                     plan.request.query(plan.recommended.nodes),
                                     plan.walltime_s)
    assert kill_risk < reading < 1.1 * kill_risk  # what was reported before
    assert plan.kill_probability == kill_risk
    options = [f"--{k.replace('_', '-')}={v}" for k, v in fields.items()]
    table = advise_cli("advise", *options, "--kill-risk", str(kill_risk))
    assert table.exit_code == 0, table.output
    assert f"; kill probability at most {100 * kill_risk:g}% (--kill-risk), " in table.stdout
    doc = json.loads(advise_cli("advise", *options, "--kill-risk", str(kill_risk),
                                "--format", "json").stdout)
    assert doc["kill_probability"] == doc["kill_risk"] == kill_risk


def test_a_walltime_rounded_well_above_the_quantile_says_the_lower_figure(
        advise_cli) -> None:
    """Rounding up to whole minutes took bert's 5% lower: the lower figure is said, not
    "at most 5%"; here, past the widest calibration error, as the bound they resolve."""
    result = advise_cli("advise", "--app", "bert", "--system", "dgxa100_ngc22.04",
                        "--max-nodes", "64", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["chained_jobs"] == 1 and 0 < doc["kill_probability"] < doc["kill_risk"]
    table = advise_cli("advise", "--app", "bert", "--system", "dgxa100_ngc22.04",
                       "--max-nodes", "64")
    assert "(--kill-risk)" not in table.stdout
    said = f"; kill probability at most {significant(100 * doc['kill_probability'], 2)}% "
    assert (said in table.stdout) == doc["kill_probability_is_upper_bound"], table.stdout


def test_a_walltime_past_the_widest_calibration_error_says_the_bound(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """RELeARN 5000 neurons/rank at 2 nodes stops at its widest calibration error,
    810.8 s, from --kill-risk 0.005 down, and its walltime was said to kill 0.01% of
    runs at each, a figure no error measured (the end of the levels the tail is read
    on). It is now the bound the errors resolve, 1 / (n + 1), said as "at most" and,
    in JSON, the number with kill_probability_is_upper_bound, the run classes' and the
    time-min's alike; a figure the errors resolve (at 0.05) is said as one."""
    relearn = ("--app", "RELeARN", "--ranks-per-node", "32", "--problem-size",
               "5000 neurons/rank, theta=0.1", "--nodes", "2")
    docs = {risk: json.loads(advise_cli(
        "advise", *relearn, "--kill-risk", risk, "--run-class", "asked=2x1",
        "--time-min-kill-risk", "0.25", "--format", "json").stdout)
        for risk in ("0.05", "0.005", "0.001")}
    resolved, *past = docs.values()
    assert not resolved["kill_probability_is_upper_bound"]
    assert 0.01 < resolved["kill_probability"] < 0.05
    bound = past[0]["kill_probability"]
    assert past[0]["walltime_s"] == past[1]["walltime_s"]
    assert 0.001 < bound < 0.005 and bound > 1e-4  # the 0.01% reported before
    for doc in past:
        assert doc["kill_probability"] == bound and doc["kill_probability_is_upper_bound"]
        (run_class,) = doc["run_classes"]
        assert (run_class["kill_probability"], run_class["kill_probability_is_upper_bound"]
                ) == (bound, True)
        assert doc["time_min_kill_probability_is_upper_bound"] is False
    table = advise_cli("advise", *relearn, "--kill-risk", "0.001")
    assert table.exit_code == 0, table.output
    assert (f"; kill probability at most {significant(100 * bound, 2)}% (the limit lies "
            "past the widest calibration error: the finest they resolve), expected") in (
                " ".join(table.stdout.split()))
    csv_run = advise_cli("advise", *relearn, "--kill-risk", "0.001", "--format", "csv")
    assert f"kill probability at most {significant(100 * bound, 2)}% (" in " ".join(
        csv_run.stderr.split())


def test_a_chained_run_says_how_often_it_outlasts_a_job_and_its_chain(advise_cli) -> None:
    """"kill probability 100%" read as a failed run, and "each of the 2 chained jobs
    reaches the limit with probability 1.6%" as if the second job were as likely to: the
    first job's limit is outlasted that often, and the chain holds the risk's quantile."""
    doc = json.loads(advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes",
                                "2", "--format", "json").stdout)
    table = advise_cli("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2")
    assert doc["chained_jobs"] >= 2
    assert "; the run outlasts its first job, to be continued by the next, with probability " \
        in table.stdout
    assert (f"%, and the {doc['chained_jobs']} jobs hold its 95th percentile (at most 5% of "
            "runs outlast them, --kill-risk)") in table.stdout


def test_a_chained_runs_runtime_over_walltime_is_over_its_chain(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """The ratio was the run's median over one job's limit: 1.27 for a run chained
    across two one-hour jobs, where Open XDMoD's elapsed / limit is at most 1."""
    args = ("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2")
    doc = json.loads(advise_cli(*args, "--format", "json").stdout)
    jobs = doc["chained_jobs"]
    assert jobs >= 2
    assert doc["expected_runtime_over_walltime"] == pytest.approx(
        doc["predicted_runtime_s"] / (jobs * doc["walltime_s"]))
    assert 0 < doc["expected_runtime_over_walltime"] <= 1
    said = f"{doc['expected_runtime_over_walltime']:.2f}"
    assert f"expected runtime/walltime {said} over the {jobs} jobs" in advise_cli(*args).stdout


@pytest.mark.parametrize("kill_risk", ["0.00001", "1e-9"])
def test_a_kill_risk_rarer_than_the_intervals_resolve_is_refused(advise_cli,
                                                                 kill_risk: str) -> None:
    """It got the widest interval's bound all the same, said to be "the 99.999th" or
    "the 100th percentile", with a kill probability of 0.01%."""
    result = advise_cli("advise", *BERT, "--kill-risk", kill_risk)
    assert result.exit_code == 2
    assert one_error_line(result) == (
        f"Error: --kill-risk {float(kill_risk):g} is rarer than the predictor's intervals "
        "resolve (their widest, 99.98%, leaves 0.0001 above it); ask for 0.0001 or more")
    assert advise_cli("advise", *BERT, "--kill-risk", "0.0001").exit_code == 0


def test_a_kill_risk_past_the_calibration_errors_is_said_to_be(trained_store) -> None:
    """Asked for a risk rarer than the calibration errors at its distance resolve, the
    walltime is their widest error or the noise floor's rarest deviation (bundled
    Castro-wdmerger at 64 nodes, a 571 s prediction: 1,272 s at 0.001, 16,484 s at
    0.0001), and its kill probability no more measured: one warning says so, naming
    the risk and the percentile; at the default risk, none."""
    rare = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, kill_risk=0.0001))
    notes = [w for w in rare.warnings if "rarer than the calibration errors" in w]
    assert notes == [f"--kill-risk 0.0001 is rarer than the calibration errors at this "
                     f"node count resolve: the 99.99th percentile "
                     f"({format_seconds(rare.walltime_quantile_s)} s) is the widest of "
                     "them or the rarest run-to-run noise of the training series, not a "
                     "tail they measured, and the kill probability said of it is a bound, "
                     "not a figure (docs/walltime.md); a larger --kill-risk rests on them"]
    usual = advise_plan(trained_store, PlanRequest(**BERT_REQUEST))
    assert usual.recommended.nodes == rare.recommended.nodes
    assert not any("rarer than the calibration errors" in w for w in usual.warnings)


def test_a_plan_shows_its_advice_in_a_notebook_not_every_field(trained_store) -> None:
    """``advise_plan(...)`` as a notebook cell's value: the dataclass's repr spelled out
    every candidate and measured point, thousands of characters before the answer."""
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, min_efficiency=0.7))
    shown = repr(plan)
    assert len(shown) < 400
    assert shown.startswith(f"Plan(series={plan.series!r}, "
                            f"recommended_nodes={plan.recommended.nodes}, ")
    assert f"walltime_s={plan.walltime_s:g}" in shown
    assert "rule='min_efficiency 0.7'" in shown
    assert f"n_candidates={len(plan.candidates)})" in shown


@pytest.mark.parametrize(("signal_lead_s", "chained_jobs"), [(None, 8), (60, 7), (600, 8)])
def test_a_chain_counts_the_work_each_job_does_before_its_checkpoint_signal(
        signal_lead_s: int | None, chained_jobs: int) -> None:
    """A run of 6.06 h under a 1 h limit was "chain 7 jobs" beside a signal 600 s before
    each limit: seven jobs that checkpoint there do 5.8 h of its work."""
    from perfpredict.advise.job_limits import walltime_limit
    from perfpredict.catalog import Queue, SystemSpec

    spec = SystemSpec(name="m", nodes=64, queues=(Queue("debug", 1, 64, 3600.0),))
    limit = walltime_limit(21817.0, 2, spec, 0.05, "m", "--max-nodes", signal_lead_s)
    assert limit.walltime_s == 3600 and limit.chained_jobs == chained_jobs
    assert f"chain {chained_jobs} jobs" in limit.warnings[0]


# --- --nodes: the plan for a node count the user has chosen ---------------------------

def test_nodes_makes_the_plan_for_the_users_count_beside_advises_own(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """'advise --nodes 64' said "No such option", and '--run-class production=64x1' added a
    row while the recommendation and --emit stayed at advise's choice: the walltime,
    node-hours, proposal rows and job script are for 64, advise's choice beside it."""
    own = json.loads(advise_cli("advise", *BERT, "--format", "json").stdout)
    result = advise_cli("advise", *BERT, "--nodes", "64", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["recommended_nodes"] == 64 and doc["rule"] == "nodes 64"
    assert doc["advised_nodes"] == own["recommended_nodes"] != 64
    assert doc["reason"].startswith(f"as asked (--nodes 64); advise's own choice is "
                                    f"{node_count(own['recommended_nodes'])} (")
    # the sweep, and its verdicts, as without --nodes
    assert [(c["nodes"], c["meets_floor"]) for c in doc["candidates"]] == [
        (c["nodes"], c["meets_floor"]) for c in own["candidates"]]
    (at_64,) = [c for c in doc["candidates"] if c["recommended"]]
    assert at_64["nodes"] == 64 and doc["node_hours_p90"] == at_64["node_hours_p90"]
    assert doc["walltime_s"] >= doc["walltime_quantile_s"] >= at_64["predicted_runtime_s"]
    sbatch = advise_cli("advise", *BERT, "--nodes", "64", "--emit", "sbatch")
    assert "#SBATCH --nodes=64" in sbatch.stdout.splitlines()
    assert f"#SBATCH --time={doc['walltime_slurm']}" in sbatch.stdout.splitlines()
    markdown = advise_cli("advise", *BERT, "--nodes", "64", "--format", "markdown").stdout
    assert "| production (recommended) | 1 | 64 |" in markdown
    table = advise_cli("advise", *BERT, "--nodes", "64").stdout
    assert "Plan: 64 nodes. As asked (--nodes 64)" in table
    verdicts = {row.split("│")[1].strip(): row.split("│")[-2].strip()
                for row in table.splitlines() if row.startswith("│")}
    assert verdicts["64"] == "asked"
    assert verdicts[str(own["recommended_nodes"])] == "advised"


def test_nodes_below_the_floor_is_planned_with_one_note(trained_store) -> None:
    """A count the floor rules out is the user's to choose: planned, not refused, with
    one warning saying so and what advise would recommend."""
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, nodes=48))
    assert plan.recommended.nodes == 48 and not plan.recommended.meets_floor
    assert 48 in [c.nodes for c in plan.candidates]  # off the sweep, shown in its order
    assert [c.nodes for c in plan.candidates] == sorted(c.nodes for c in plan.candidates)
    notes = [w for w in plan.warnings if w.startswith("--nodes 48: ")]
    assert notes == [f"--nodes 48: 48 nodes is only "
                     f"{percent_apart(plan.recommended.efficiency, 0.7)} efficient, below "
                     f"the 70% floor, so advise recommends {node_count(plan.advised_nodes)}; "
                     f"the plan is for 48 nodes as asked"]
    same = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, nodes=plan.advised_nodes))
    assert same.recommended.nodes == same.advised_nodes == plan.advised_nodes
    assert "advise's own choice is the same (" in same.reason
    assert not any(w.startswith("--nodes ") for w in same.warnings)


def test_nodes_below_the_smallest_measured_is_planned_with_a_note_of_its_own(  # type: ignore[no-untyped-def]
        advise_cli) -> None:
    """RELeARN at 16 ranks per node was measured from 2 nodes: --nodes 1 got the
    estimate's note, "1.0 doublings below the smallest measured scale (32 ranks) ...; a
    run nearer this scale would tell", in ranks where the plan speaks of nodes and
    vague where the plan budgets on that count. It now reads as a run class's below
    the measured range does, once, in nodes, naming what to measure."""
    relearn_16 = (*RELEARN[:-1], "16")
    result = advise_cli("advise", *relearn_16, "--nodes", "1", "--format", "json")
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.stdout)["warnings"]
    assert [w for w in warnings if "below the smallest measured" in w] == [
        "--nodes 1: 1 node is 1 doubling below the smallest measured node count (2): "
        "the laws extrapolated downward, which no backtest measures, and the interval is "
        "the one calibrated between measured scales; measure a run nearer 1 node before "
        "budgeting on it"]
    estimate = advise_cli("estimate", *relearn_16, "--nodes", "1")
    assert "a run nearer this scale would tell" in " ".join(estimate.stdout.split())


def test_nodes_no_queue_takes_is_planned_with_the_queues_one_note(trained_store) -> None:
    """The fixture's queues take up to 1024 of its 2048 nodes: --nodes 2048 is planned
    with the one warning that no queue accepts it, not also listed among the counts the
    sweep left out."""
    plan = advise_plan(trained_store, PlanRequest(**BERT_REQUEST, nodes=2048))
    assert plan.recommended.nodes == 2048 and plan.queue is None
    assert [w for w in plan.warnings if "2048" in w and "queue" in w] == [
        f"no queue of {BERT_SYSTEM} accepts 2048 nodes: such a job may pend forever; pick "
        "a node count a queue accepts (--nodes) or ask the center"]


@pytest.mark.parametrize(("args", "fix"), [
    (("--nodes", "2048"), "(--nodes)"),
    (("--run-class", "huge=2048x3"), "(--run-class huge=NODESx3)"),
])
def test_no_queue_accepts_names_the_option_the_count_came_from(  # type: ignore[no-untyped-def]
        advise_cli, args: tuple[str, ...], fix: str) -> None:
    """The count came from --nodes or a --run-class, but the fix said "(--max-nodes)",
    which changes neither."""
    result = advise_cli("advise", *BERT, *args)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"a node count a queue accepts {fix} or ask the center" in text
    assert "--max-nodes) or ask" not in text


def test_nodes_beyond_the_machine_is_refused(advise_cli) -> None:  # type: ignore[no-untyped-def]
    result = advise_cli("advise", *BERT, "--nodes", "4096")
    assert result.exit_code == 2
    assert one_error_line(result) == (f"Error: --nodes 4096: {BERT_SYSTEM} has 2048 nodes "
                                      "(the catalog); give a node count it has")


def test_nodes_reaches_past_the_default_sweep_without_a_machine_size(trained_store) -> None:
    """Without a catalog size the sweep stops at 16x the largest measured (RELeARN: 256
    nodes): a larger --nodes is swept to, and compared with the counts below it."""
    plan = advise_plan(trained_store, PlanRequest(
        app="RELeARN", problem_size="9000 neurons/rank, theta=0.3", ranks_per_node=32,
        nodes=1024))
    assert plan.recommended.nodes == plan.candidates[-1].nodes == 1024
    assert 512 in [c.nodes for c in plan.candidates]


@pytest.mark.parametrize(("request_args", "said"), [
    ({"nodes": 0}, "--nodes must be a whole number from 1 to 2147483647, got 0"),
    ({"nodes": 64.0}, "--nodes must be a whole number from 1 to 2147483647, got 64.0, a "
                      "float; give it as an int, 64"),
    ({"nodes": 64, "max_nodes": 32}, "--nodes 64 is above --max-nodes 32, the largest node "
                                     "count to consider; raise --max-nodes or drop it"),
])
def test_bad_nodes_are_refused_as_max_nodes_is(trained_store, request_args, said) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInputError) as refused:
        advise_plan(trained_store, PlanRequest(**BERT_REQUEST, **request_args))
    assert str(refused.value) == said
