"""``advise walltime`` keeps each job's advice within the longest queue limit of the
catalog for its node count, and warns of jobs that may pend forever.

Before, it never read the catalog's queues: on the example center at --kill-risk 0.01
with --allow-above-request, jobs predicted to run minutes were advised 30 days, a
walltime no queue of a machine takes (the job pends forever)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from perfpredict.advise.queues import longest_queue
from perfpredict.catalog import Queue

EXAMPLES = Path(__file__).parents[2] / "examples" / "data"
HOUR_S = 3600.0
#: The example center's machine as its center would describe it: node-count bins.
DEMO_TOML = """\
name = "demo-cluster"
nodes = 64

[sources]
nodes = "examples/02_sacct_walltime.py"
queues = "the center's queue policy"

[[queues]]
name = "cpu"
min_nodes = 1
max_nodes = 8
max_walltime_s = 86400

[[queues]]
name = "large"
min_nodes = 9
max_nodes = 64
max_walltime_s = 43200
"""
#: Jobs on Frontier, one per node-count bin of the shipped catalog: up to 64 nodes
#: 'extended' allows 24 h; 65-91 nodes 2 h (batch bin 5, the debug QOS alike); 92-183
#: nodes 6 h (bin 4); 184+ nodes 12 h (bin 3). Two request more than their bin allows.
FRONTIER_JOBS = """\
job_id,app,system,user,account,partition,nodes,total_ranks,requested_walltime_s,submit_time
5000001,relearn,frontier,alice,neuro,batch,4,128,7200,2024-06-01T09:00:00
5000002,relearn,frontier,alice,neuro,batch,80,2560,7200,2024-06-01T09:00:00
5000003,relearn,frontier,bob,neuro,batch,100,3200,21600,2024-06-01T09:00:00
5000004,relearn,frontier,bob,neuro,batch,200,6400,43200,2024-06-01T09:00:00
5000005,lammps,frontier,carol,chem,batch,100,4800,86400,2024-06-01T09:00:00
5000006,gromacs,frontier,frank,chem,batch,200,9600,86400,2024-06-01T09:00:00
"""
FRONTIER_LIMITS = {"5000001": (24 * HOUR_S, "extended"),
                   "5000002": (2 * HOUR_S, "batch (bin 5)"),
                   "5000003": (6 * HOUR_S, "batch (bin 4)"),
                   "5000004": (12 * HOUR_S, "batch (bin 3)"),
                   "5000005": (6 * HOUR_S, "batch (bin 4)"),
                   "5000006": (12 * HOUR_S, "batch (bin 3)")}


def _runner(url: str) -> Callable[..., Result]:
    from perfpredict.cli.app import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["--db", url, *args])


def _rows(result: Result) -> dict[str, dict[str, str]]:
    assert result.exit_code == 0, result.output
    return {row["job_id"]: row for row in csv.DictReader(io.StringIO(result.stdout))}


@pytest.fixture
def example_center(tmp_path: Path) -> Callable[..., Result]:
    """The example center's store (examples/data), its machine not in the catalog."""
    cli = _runner(f"sqlite:///{tmp_path / 'store.db'}")
    assert cli("ingest", "sacct", str(EXAMPLES / "synthetic_sacct.psv")).exit_code == 0
    return cli


@pytest.fixture(scope="module")
def frontier(tmp_path_factory: pytest.TempPathFactory) -> tuple[Callable[..., Result], Path]:
    """The example center's accounting as if of Frontier (sacct's Cluster 'frontier',
    matched to the catalog's Frontier), and the jobs of :data:`FRONTIER_JOBS`."""
    folder = tmp_path_factory.mktemp("frontier")
    dump, jobs = folder / "frontier.psv", folder / "jobs.csv"
    dump.write_text((EXAMPLES / "synthetic_sacct.psv").read_text()
                    .replace("demo-cluster", "frontier"))
    jobs.write_text(FRONTIER_JOBS)
    cli = _runner(f"sqlite:///{folder / 'store.db'}")
    assert cli("ingest", "sacct", str(dump)).exit_code == 0
    return cli, jobs


def test_the_example_centers_30_day_advice_is_capped_once_its_queues_are_in_the_catalog(
        example_center: Callable[..., Result], tmp_path: Path) -> None:
    """perfpredict ingest sacct examples/data/synthetic_sacct.psv; perfpredict advise
    walltime --input examples/data/pending_jobs.csv --allow-above-request --kill-risk 0.01
    advised 4190001 (4 nodes, predicted 3 min), 4190002 (16 nodes), 4190005 and 4190006
    30-00:00:00, also once the machine's queues were in the catalog. A job of a node count
    no queue takes (4190009, 100 nodes) is warned of."""
    entry = tmp_path / "demo.toml"
    entry.write_text(DEMO_TOML)
    pending = str(tmp_path / "pending.csv")
    Path(pending).write_text((EXAMPLES / "pending_jobs.csv").read_text()
                             + "4190009,postproc,demo-cluster,erin,eng,cpu,100,4800,3600,"
                             "2024-06-01T09:00:00\n")
    args = ("advise", "walltime", "--input", pending, "--allow-above-request",
            "--kill-risk", "0.01", "--format", "csv")
    uncapped = _rows(example_center(*args))
    assert uncapped["4190001"]["slurm_time"] == "30-00:00:00"  # not in the catalog: as before
    assert example_center("systems", "add", str(entry)).exit_code == 0
    result = example_center(*args)
    rows = _rows(result)
    limits = {"cpu": 24 * HOUR_S, "large": 12 * HOUR_S}
    alone = rows.pop("4190009")  # said of the job itself, not only of the first in the summary
    assert (alone["queue_max_walltime_s"], alone["no_queue_takes_nodes"]) == ("", "True")
    assert {row["no_queue_takes_nodes"] for row in rows.values()} == {"False"}
    assert "no queue takes it" in example_center(*args[:-2]).stdout  # the table's note
    for job in csv.DictReader(io.StringIO((EXAMPLES / "pending_jobs.csv").read_text())):
        row, queue = rows[job["job_id"]], "cpu" if int(job["nodes"]) <= 8 else "large"
        assert float(row["walltime_s"]) <= limits[queue]
        assert float(row["queue_max_walltime_s"]) == limits[queue]
        capped = float(uncapped[job["job_id"]]["walltime_s"]) > limits[queue]
        assert row["capped_by_queue"] == (queue if capped else "")
        if not capped:  # the rest of the advice is what it was
            assert row["walltime_s"] == uncapped[job["job_id"]]["walltime_s"]
    assert rows["4190001"]["slurm_time"] == "1-00:00:00"
    assert rows["4190002"]["slurm_time"] == "0-12:00:00"
    assert rows["4190002"]["capped_by_queue"] == "large"
    n_capped = sum(row["capped_by_queue"] != "" for row in rows.values())
    assert n_capped >= 4
    stderr = " ".join(result.stderr.split())
    assert f"warning: {n_capped} jobs capped at the longest queue limit" in stderr
    assert ("warning: 1 job at a node count no queue takes (first: job 4190009): "
            "they may pend forever.") in stderr


def test_frontiers_node_count_bins_cap_the_advice(
        frontier: tuple[Callable[..., Result], Path]) -> None:
    """Each job is capped at the longest limit of the shipped Frontier entry's queues
    that take its node count (the store's 'Frontier', the sacct dump's 'frontier'), with
    its kill probability at that cap, not the risk asked for."""
    cli, jobs = frontier
    result = cli("advise", "walltime", "--input", str(jobs), "--allow-above-request",
                 "--kill-risk", "0.01", "--format", "csv")
    rows = _rows(result)
    for job_id, (limit_s, _) in FRONTIER_LIMITS.items():
        assert float(rows[job_id]["walltime_s"]) <= limit_s, job_id
        assert float(rows[job_id]["queue_max_walltime_s"]) == limit_s, job_id
    capped = {job_id for job_id, row in rows.items() if row["capped_by_queue"]}
    # 5000001 (4 nodes, 2 h request) was advised 30 days above its request
    assert {"5000001", "5000005", "5000006"} <= capped
    for job_id in capped:
        assert rows[job_id]["capped_by_queue"] == FRONTIER_LIMITS[job_id][1]
        assert float(rows[job_id]["walltime_s"]) == FRONTIER_LIMITS[job_id][0]
    assert rows["5000001"]["slurm_time"] == "1-00:00:00"
    # the same job, capped at its queue and below its request (6 h of 24 h): the kill
    # probability the calibration gives that walltime, above the 1% asked for
    within_request = cli("advise", "walltime", "--input", str(jobs), "--kill-risk", "0.01",
                         "--format", "csv")
    bounded = _rows(within_request)["5000005"]
    assert bounded["capped_by_queue"] == "batch (bin 4)"
    assert bounded["capped_at_request"] == "False"
    assert float(bounded["kill_probability"]) > 0.01
    assert "warning: 2 jobs capped at the longest queue limit" in " ".join(
        within_request.stderr.split())


def test_a_request_over_every_queue_limit_is_warned(
        frontier: tuple[Callable[..., Result], Path]) -> None:
    """5000005 asks 24 h on 100 nodes and 5000006 24 h on 200, where Frontier's queues
    allow 6 h and 12 h: as requested they may pend forever, and the summary says so."""
    cli, jobs = frontier
    result = cli("advise", "walltime", "--input", str(jobs), "--kill-risk", "0.05")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert ("warning: 2 jobs with a request above every queue limit for their node count "
            "(first: job 5000005): with their own request they may pend forever") in text
    assert "request over limit" in result.output  # the table's note
    rows = _rows(cli("advise", "walltime", "--input", str(jobs), "--kill-risk", "0.05",
                     "--format", "csv"))
    over = {job_id for job_id, row in rows.items()
            if row["request_above_queue_limit"] == "True"}
    assert over == {"5000005", "5000006"}
    assert {row["request_above_queue_limit"] for job_id, row in rows.items()
            if job_id not in over} == {"False"}


def test_a_system_not_in_the_catalog_is_advised_as_before(
        example_center: Callable[..., Result]) -> None:
    """The example center's 'demo-cluster' has only the placeholder ingest made: no queue
    limit is known, so nothing is capped or warned, and the new columns stay empty."""
    result = example_center("advise", "walltime", "--input",
                            str(EXAMPLES / "pending_jobs.csv"), "--kill-risk", "0.05",
                            "--format", "csv")
    rows = _rows(result)
    columns = list(next(iter(rows.values())))
    after = columns.index("request_likely_too_short") + 1  # added after the columns before
    assert columns[after:after + 3] == [
        "queue_max_walltime_s", "capped_by_queue", "request_above_queue_limit"]
    assert {(row["queue_max_walltime_s"], row["capped_by_queue"],
             row["request_above_queue_limit"], row["no_queue_takes_nodes"])
            for row in rows.values()} == {("", "", "", "")}
    assert "warning" not in result.stderr
    # the advice of examples/02_sacct_walltime.py's docstring
    assert [rows[j]["slurm_time"] for j in ("4190001", "4190002", "4190007")] == [
        "0-00:20:00", "0-01:15:00", "0-15:00:00"]


@pytest.mark.parametrize(("limits_s", "longest"), [
    ((7200.0, 86400.0, 7200.0), 1),
    ((7200.0, 7200.0), 0),  # the first listed among equals
    ((7200.0, None, 86400.0), 1),  # no documented limit: the longest of all
])
def test_the_longest_queue(limits_s: tuple[float | None, ...], longest: int) -> None:
    queues = [Queue(f"q{i}", 1, None, limit) for i, limit in enumerate(limits_s)]
    assert longest_queue(queues) is queues[longest]
