"""Which queue ``advise`` puts a job in: the default one for its node count when the walltime
fits there, else another queue that takes as many nodes for that long, and chained jobs
only when none does; on the shipped catalog's machines, and end to end through the CLI."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from perfpredict.advise.job_limits import walltime_limit
from perfpredict.advise.queues import choose_queue
from perfpredict.catalog import Queue, SystemSpec, bundled_system
from tests.advise.conftest import BERT, BERT_SYSTEM

HOUR_S = 3600.0


def machine(name: str) -> SystemSpec:
    spec = bundled_system(name)
    assert spec is not None, name
    return spec


@pytest.mark.parametrize(("system", "nodes", "runtime_h", "queue", "default", "chained"), [
    # Frontier: the batch bins give 1-91 nodes 2 h; 'extended' takes up to 64 nodes for 24 h
    ("Frontier", 32, 1.5, "batch (bin 5)", "batch (bin 5)", 1),
    ("Frontier", 32, 10, "extended", "batch (bin 5)", 1),
    ("Frontier", 64, 23.9, "extended", "batch (bin 5)", 1),
    ("Frontier", 4, 65, "extended", "batch (bin 5)", 3),  # 24 h jobs, not 33 of 2 h
    # 'extended' ends at 64; each 2 h job works until its signal 10 min before the limit
    ("Frontier", 80, 10, "batch (bin 5)", "batch (bin 5)", 6),
    ("Frontier", 100, 10, "batch (bin 4)", "batch (bin 4)", 2),
    ("Frontier", 500, 11, "batch (bin 3)", "batch (bin 3)", 1),
    # ARCHER2: 'standard' 24 h, 'long' 1-64 nodes 96 h; 'lowpriority' also 24 h: not longer
    ("ARCHER2", 32, 20, "standard", "standard", 1),
    ("ARCHER2", 32, 30, "long", "standard", 1),
    ("ARCHER2", 32, 100, "long", "standard", 2),
    ("ARCHER2", 512, 30, "standard", "standard", 2),
    # ARCHER2's 'largescale' (1025+ nodes) allows 12 h; 'lowpriority' takes 2048 for 24 h
    ("ARCHER2", 1500, 20, "lowpriority", "largescale", 1),
    # LUMI: 'small' (up to 4 nodes) allows 72 h where 'standard' allows 48 h
    ("LUMI-C", 2, 50, "small", "standard", 1),
    ("LUMI-C", 100, 50, "standard", "standard", 2),
    ("LUMI-G", 4, 60, "small-g", "standard-g", 1),
    # ALCF: the prod queues split by node count, one limit each
    ("Polaris", 50, 8, "prod (medium)", "prod (medium)", 2),
    ("Aurora", 1000, 10, "prod (small)", "prod (small)", 1),
])
def test_the_queue_is_one_whose_limit_holds_the_walltime_else_the_longest(
        system: str, nodes: int, runtime_h: float, queue: str, default: str,
        chained: int) -> None:
    """The first queue taking the node count was the only one looked at: a 10-hour job on
    32 Frontier nodes was told to chain five 2-hour jobs, where 'extended' runs it in one."""
    limit = walltime_limit(runtime_h * HOUR_S, nodes, machine(system), 0.05, system,
                           "--max-nodes")
    assert limit.queue is not None and limit.default_queue is not None
    assert (limit.queue.name, limit.default_queue.name, limit.chained_jobs) == (
        queue, default, chained)
    assert limit.queue.accepts(nodes)
    if chained == 1:
        assert limit.walltime_s >= runtime_h * HOUR_S
        assert len(limit.warnings) == (limit.queue.charge_multiplier == 0)  # said free
        assert limit.queue.max_walltime_s is None or limit.walltime_s <= limit.queue.max_walltime_s
    else:  # the longest limit of any queue taking the job, and said so
        longest = max(q.max_walltime_s or 0 for q in machine(system).queues if q.accepts(nodes))
        assert limit.walltime_s == limit.queue.max_walltime_s == longest
        (warning,) = limit.warnings
        assert f"exceeds the limit of every queue of {system} that takes {nodes} nodes" in warning
        assert (f"chain {chained} jobs (sbatch --dependency=afterany:JOBID);"
                if machine(system).scheduler == "slurm"
                else f"chain {chained} jobs (qsub -W depend=afterany:JOBID);") in warning


def test_the_reason_names_the_queue_and_why() -> None:
    frontier = machine("Frontier")
    default = choose_queue(frontier, 32, 1.5 * HOUR_S)
    assert default is not None and default.reason == (
        "'batch (bin 5)' (1-91 nodes, 2 h limit), where jobs of 32 nodes land by default")
    other = choose_queue(frontier, 32, 10 * HOUR_S)
    assert other is not None and other.reason == (
        "'extended' (1-64 nodes, 24 h limit): the walltime (10 h) is longer than the 2 h "
        "limit of 'batch (bin 5)', where jobs of 32 nodes land by default; submit to "
        "'extended' instead, which takes them for that long")
    chained = choose_queue(frontier, 4, 65 * HOUR_S)
    assert chained is not None and not chained.fits and chained.reason == (
        "'extended' (1-64 nodes, 24 h limit): no queue of Frontier takes 4 nodes for the "
        "walltime (65 h); 'extended' allows the longest jobs of that size, the fewest to "
        "chain")
    cheaper = choose_queue(machine("ARCHER2"), 1500, 20 * HOUR_S)
    assert cheaper is not None and cheaper.reason.startswith(
        "'lowpriority' (1-2048 nodes, 24 h limit, charged at 0x): ")
    assert choose_queue(machine("Polaris"), 497, HOUR_S) is None


def test_limits_and_walltimes_below_an_hour_are_told_in_minutes() -> None:
    """A 10-minute debug queue read "0.167 h limit", and ARCHER2's 20-minute 'short'
    QoS "0.333 h": below an hour they are minutes (below a minute, seconds); from an
    hour up, hours as before."""
    from perfpredict.advise.queues import queue_text

    (short,) = [q for q in machine("ARCHER2").queues if q.name == "short"]
    assert queue_text(short) == "'short' (1-32 nodes, 20 min limit)"
    spec = SystemSpec(name="m", nodes=64, queues=(Queue("debug", 1, 8, 600.0),
                                                  Queue("batch", 1, 64, 2 * HOUR_S)))
    moved = choose_queue(spec, 4, 1830.0)
    assert moved is not None and moved.reason == (
        "'batch' (1-64 nodes, 2 h limit): the walltime (30.5 min) is longer than the 10 min "
        "limit of 'debug', where jobs of 4 nodes land by default; submit to 'batch' "
        "instead, which takes them for that long")
    quick = choose_queue(spec, 4, 45.0)
    assert quick is not None and quick.reason == (
        "'debug' (1-8 nodes, 10 min limit), where jobs of 4 nodes land by default")
    assert queue_text(Queue("q", 1, 8, 45.0)) == "'q' (1-8 nodes, 45 s limit)"


def test_a_queue_that_charges_nothing_is_said_to_leave_its_runs_out_of_the_units() -> None:
    """A 2048-node class of 16.9 h on ARCHER2 went to 'lowpriority' (charged at 0x, open
    to some projects only): the proposal's CU total left out its ~50k node-hours, with
    no more than "times 0 in queue 'lowpriority'" in the basis to say so."""
    archer2 = machine("ARCHER2")
    free = walltime_limit(16.9 * HOUR_S, 2048, archer2, 0.05, "ARCHER2", "--max-nodes")
    assert free.queue is not None and free.queue.name == "lowpriority"
    assert free.warnings == [
        "queue 'lowpriority', where jobs of 2048 nodes this long go, charges nothing (0x): "
        "the allocation-unit totals leave them out; check who may use it ('perfpredict "
        "systems show ARCHER2')"]
    chained = walltime_limit(60 * HOUR_S, 2048, archer2, 0.05, "ARCHER2", "--max-nodes")
    assert chained.chained_jobs == 3 and chained.warnings[-1] == free.warnings[0]
    charged = walltime_limit(10 * HOUR_S, 2048, archer2, 0.05, "ARCHER2", "--max-nodes")
    assert charged.queue is not None and charged.queue.name == "largescale"
    assert not charged.warnings


def test_a_queue_without_a_documented_limit_takes_any_walltime() -> None:
    spec = SystemSpec(name="m", queues=(Queue("short", 1, 8, HOUR_S), Queue("open", 1, 8)))
    choice = choose_queue(spec, 4, 100 * HOUR_S)
    assert choice is not None and choice.queue.name == "open" and choice.fits
    assert "(1-8 nodes, no documented limit)" in choice.reason


@pytest.fixture(scope="module")
def extended_cli(trained_url: str, tmp_path_factory: pytest.TempPathFactory
                 ) -> Callable[..., Result]:
    """The advice store, its bert machine given a Frontier-like 'extended' queue: one or
    two nodes, whose bert runs take 10-20 minutes, land in 'small' (10 min) by default,
    and 'extended' takes them for an hour."""
    from perfpredict.catalog import add_system, get_system
    from perfpredict.cli.app import app
    from perfpredict.store import open_store

    copy = tmp_path_factory.mktemp("extended") / "store.db"
    shutil.copy(trained_url.removeprefix("sqlite:///"), copy)
    store = open_store(f"sqlite:///{copy}")
    try:
        spec = get_system(store, BERT_SYSTEM)
        assert spec is not None
        add_system(store, dataclasses.replace(
            spec, queues=(*spec.queues, Queue("extended", 1, 2, HOUR_S))))
    finally:
        store.dispose()
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["--db", f"sqlite:///{copy}", *args])


CHEAP = (*BERT, "--objective", "cheapest", "--max-nodes", "2")


def test_advise_offers_the_queue_that_fits_instead_of_chaining(extended_cli, advise_cli) -> None:  # type: ignore[no-untyped-def]
    """Without the 'extended' queue the run is chained in 'small'; with it, one job."""
    chained = json.loads(advise_cli("advise", *CHEAP, "--format", "json").stdout)
    assert chained["queue"] == chained["default_queue"] == "small"
    assert chained["chained_jobs"] >= 2
    result = extended_cli("advise", *CHEAP, "--format", "json")
    assert result.exit_code == 0, result.output
    advice = json.loads(result.stdout)
    assert (advice["queue"], advice["default_queue"], advice["chained_jobs"]) == (
        "extended", "small", 1)
    assert advice["queue_max_walltime_s"] == HOUR_S
    assert chained["walltime_quantile_s"] <= advice["walltime_s"] <= HOUR_S
    assert advice["kill_probability"] <= advice["kill_risk"]
    assert advice["queue_reason"].startswith("'extended' (1-2 nodes, 1 h limit): the "
                                             "walltime (")
    assert not any("chain" in w for w in advice["warnings"])


def test_the_table_and_the_job_script_say_which_queue(extended_cli) -> None:  # type: ignore[no-untyped-def]
    table = extended_cli("advise", *CHEAP)
    assert table.exit_code == 0, table.output
    (line,) = [t for t in table.stdout.splitlines() if t.startswith("  queue ")]
    assert line.startswith("  queue 'extended' (1-2 nodes, 1 h limit): the walltime (")
    assert line.endswith("submit to 'extended' instead, which takes them for that long")
    script = extended_cli("advise", *CHEAP, "--emit", "sbatch")
    assert script.exit_code == 0, script.output
    lines = script.stdout.splitlines()
    assert lines[1].startswith("# queue 'extended' (1-2 nodes, 1 h limit)")
    assert not any("--signal" in t for t in lines)  # one job, nothing to chain
    # where the default queue takes the job, the script says nothing of queues
    default = extended_cli("advise", *BERT, "--max-nodes", "64", "--emit", "sbatch")
    assert default.exit_code == 0 and "# queue" not in default.stdout


def test_the_proposal_says_which_queue(extended_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    markdown = extended_cli("advise", *CHEAP, "--format", "markdown")
    assert markdown.exit_code == 0, markdown.output
    assert " Queue 'extended' (1-2 nodes, 1 h limit): " in markdown.stdout
