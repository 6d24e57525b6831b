"""Issue 14 items 13-14: scheduler jobs are not a scaling study unless something says they
are one workload, and an application with no trained series is told why."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from perfpredict.model.series import build_series, scaling_study_runs
from tests.conftest import nasa_jobs

#: Jobs of the NASA iPSC/860 log (SWF): few enough that no walltime advisor is fitted.
N_JOBS = 190


def _invoke(db: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--db", db, *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A store of real scheduler jobs (the first NASA iPSC jobs, whose executables ran
    at many processor counts), RELeARN's benchmark runs, and a benchmark measured at one
    node count in two layouts; trained on them alone (what is a series does not depend on
    what the predictor borrows, and borrowing is a training on the bundled data sets)."""
    tmp = tmp_path_factory.mktemp("untrained")
    swf = nasa_jobs(tmp, N_JOBS)
    solo = tmp / "solo.csv"
    solo.write_text("app,system,nodes,ranks_per_node,runtime_s\n" + "".join(
        f"solo,opal,8,{rpn},{t}\n" for rpn in (32, 64) for t in (100, 101, 102)))
    db = f"sqlite:///{tmp}/store.db"
    for args in (("ingest", "swf", str(swf), "--system", "ipsc"),
                 ("ingest", "csv", str(solo)), ("datasets", "load", "relearn"),
                 ("train", "--no-borrow-bundled")):
        code, out, err = _invoke(db, *args)
        assert code == 0, out + err
    return db, tmp


def test_train_on_scheduler_jobs_alone_says_why_no_runtime_predictor(
        tmp_path: Path) -> None:
    """``runs stats`` lists the log's executables at many processor counts, so "no series
    with 3+ measured scales", all that train said, read as a fault: it names the jobs
    that are not scaling studies, and what would train a runtime predictor."""
    db = f"sqlite:///{tmp_path}/store.db"
    assert _invoke(db, "ingest", "swf", str(nasa_jobs(tmp_path, 400)), "--system", "ipsc")[0] == 0
    code, out, err = _invoke(db, "train", "--no-borrow-bundled")
    assert code == 0, err
    (line,) = [line for line in out.splitlines() if "runtime predictor" in line]
    assert line.startswith("  runtime predictor: not trained: no series (application, system, "
                           "problem size, variant, layout) has 3+ scales; ")
    assert "completed runs are scheduler jobs (swf) with no problem size or variant, not " \
        "scaling studies, so the runtime predictor leaves them out; ingest runs of one " \
        "input at three or more node counts as CSV with a problem_size column" in line
    assert "walltime advisor: fitted on 400 scheduler jobs" in out
    # with too few jobs for a walltime advisor, the same reason is the one-line error
    code, _, err = _invoke(db, "train", "--app", "exe-3")
    assert code == 1
    assert err.startswith("Error: nothing to train on: the store holds 38 runs, fewer than "
                          "200 of them scheduler jobs with submit times, and no series ")
    assert len(err.strip().splitlines()) == 1
    # beside a benchmark's series, the predictor is trained and the jobs are still named
    runs = tmp_path / "solver.csv"
    runs.write_text("app,system,nodes,runtime_s\n" + "".join(
        f"solver,ipsc,{n},{40 + 1000 / n:.2f}\n" for n in (1, 2, 4, 8)))
    assert _invoke(db, "ingest", "csv", str(runs))[0] == 0
    code, out, err = _invoke(db, "train", "--no-borrow-bundled")
    assert code == 0, err
    assert "runtime predictor: 1 series can be estimated" in out
    (note,) = [line for line in out.splitlines()
               if line.startswith("  note: ") and "scheduler jobs" in line]
    assert note.endswith(
        " completed runs are scheduler jobs (swf) with no problem size or variant, not "
        "scaling studies, so the runtime predictor leaves them out")


def test_scheduler_jobs_with_only_a_job_name_are_not_trained_as_a_series(
        store: tuple[str, Path]) -> None:
    db, _ = store
    code, _, err = _invoke(db, "estimate", "--app", "exe-3", "--nodes", "64")
    assert code == 1
    assert err.startswith("Error: no trained series for application 'exe-3': its 19 completed "
                          "runs are scheduler jobs (swf) with no problem size or variant")
    assert "not a controlled scaling study" in err and len(err.strip().splitlines()) == 1
    # RELeARN's benchmark runs are trained on as before
    code, out, err = _invoke(db, "estimate", "--app", "RELeARN", "--nodes", "16",
                             "--ranks-per-node", "4", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["app"] == "RELeARN"


def test_a_stated_problem_size_or_variant_makes_scheduler_jobs_a_series() -> None:
    runs = pd.DataFrame({
        "app": "lammps", "system": "ipsc", "problem_size": [None, None, "", "", "1M atoms",
                                                            "1M atoms"],
        "variant": [None, None, "build=a", "build=a", None, None],
        "nodes": [1.0, 2.0, 1.0, 2.0, 1.0, 2.0], "total_ranks": float("nan"),
        "ranks_per_node": float("nan"), "threads_per_rank": float("nan"),
        "runtime_s": [10.0, 6.0, 10.0, 6.0, 10.0, 6.0], "problem_size_num": float("nan"),
        "state": "COMPLETED", "censored": False, "extra": None, "source_format": "sacct"})
    assert list(scaling_study_runs(runs).index) == [2, 3, 4, 5]
    assert [(s.key.problem_size, s.key.variant) for s in build_series(runs)] == [
        ("", "build=a"), ("1M atoms", "")]
    assert len(build_series(runs.assign(source_format="csv"))) == 3  # benchmarks: all


def test_an_app_measured_at_one_scale_says_which_scales_and_layouts_were_found(
        store: tuple[str, Path]) -> None:
    db, _ = store
    code, _, err = _invoke(db, "estimate", "--app", "SOLO", "--nodes", "16")
    assert code == 1
    assert "its runs form no series of 2+ scales" in err
    assert ("found solo on opal [default size, 32 ranks/node]: 3 run(s) at 8 nodes; "
            "solo on opal [default size, 64 ranks/node]: 3 run(s) at 8 nodes") in err


def test_runs_ingested_after_training_ask_to_train_again(store: tuple[str, Path]) -> None:
    db, tmp = store
    more = tmp / "solo16.csv"
    more.write_text("app,system,nodes,ranks_per_node,runtime_s\nsolo,opal,16,32,55\n")
    assert _invoke(db, "ingest", "csv", str(more))[0] == 0
    code, _, err = _invoke(db, "estimate", "--app", "solo", "--nodes", "32")
    assert code == 1
    assert "that the predictor was not trained with; run 'perfpredict train'" in err
