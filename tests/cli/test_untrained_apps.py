"""Issue 14 items 13-14: scheduler jobs are not a scaling study unless something says they
are one workload, and an application with no trained series is told why."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from perfpredict.cli.app import app
from perfpredict.model.series import build_series, scaling_study_runs, why_no_series
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
    # the first line said "Trained on 400 runs.", as if a runtime predictor had been
    assert out.splitlines()[0] == ("Read 400 runs: trained the walltime advisor only, no "
                                   "runtime predictor.")
    (line,) = [line for line in out.splitlines() if "runtime predictor:" in line]
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
    assert out.startswith("Trained on 404 runs.\n")
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
    assert ("found solo on opal [default size, 32 ranks/node]: 3 runs at 8 nodes; "
            "solo on opal [default size, 64 ranks/node]: 3 runs at 8 nodes") in err


def test_runs_at_one_scale_are_counted_in_their_own_number() -> None:
    """"1 run(s) at 1 nodes" of a code run once on one node."""
    runs = pd.DataFrame({
        "app": "solo", "system": "opal", "problem_size": [None], "variant": [None],
        "nodes": [1.0], "total_ranks": float("nan"), "ranks_per_node": float("nan"),
        "threads_per_rank": float("nan"), "runtime_s": [10.0],
        "problem_size_num": float("nan"), "state": None, "censored": False, "extra": None,
        "source_format": "csv"})
    assert "found solo on opal [default size]: 1 run at 1 node; run it" in why_no_series(runs)


def test_a_series_ingested_after_training_is_fitted_at_the_estimate(
        store: tuple[str, Path]) -> None:
    """A code's runs at a second node count, ingested after ``train``, answer at once:
    the estimate fits the new series' laws as ``train`` would and says so, and ``train``
    then answers the same (a series of two scales teaches the trees nothing, so here the
    predictor does not change), without the note."""
    db, tmp = store
    more = tmp / "solo16.csv"
    more.write_text("app,system,nodes,ranks_per_node,runtime_s\nsolo,opal,16,32,55\n")
    assert _invoke(db, "ingest", "csv", str(more))[0] == 0
    query = ("estimate", "--app", "solo", "--nodes", "32", "--format", "json")
    code, out, err = _invoke(db, *query)
    assert code == 0, err
    now = json.loads(out)
    assert now["series"] == "solo on opal [default size, 32 ranks/node]"
    assert now["measured_scales"] == [8.0, 16.0] and now["n_runs"] == 4
    (fitted,) = [note for note in now["notes"] if note.startswith("fitted now")]
    assert fitted.startswith("fitted now: this predictor (trained ")
    assert fitted.endswith("was not trained with this series, so its laws were fitted to "
                           "the store's 4 runs of it for this estimate, the learned "
                           "correction and the interval are the predictor's, and the "
                           "interval may be too narrow; run 'perfpredict train' to learn "
                           "from them")
    assert not [note for note in now["notes"] if "ingested since" in note]
    assert _invoke(db, "train", "--no-borrow-bundled")[0] == 0
    code, out, err = _invoke(db, *query)
    trained = json.loads(out)
    assert not [note for note in trained["notes"] if note.startswith("fitted now")]
    for field in ("predicted_runtime_s", "lower_runtime_s", "upper_runtime_s", "formula"):
        assert trained[field] == now[field]


def test_a_known_application_on_a_new_system_is_fitted_at_the_estimate(
        store: tuple[str, Path]) -> None:
    """Trained series of the application that the query's system leaves out give way to
    the store's series on that system, fitted now, in one estimate and in a batch's rows
    alike; a system the store has no runs on is still refused, naming those it has."""
    db, tmp = store
    quartz = tmp / "solo_quartz.csv"
    quartz.write_text("app,system,nodes,ranks_per_node,runtime_s\n"
                      "solo,quartz,4,32,210\nsolo,quartz,8,32,118\n")
    assert _invoke(db, "ingest", "csv", str(quartz))[0] == 0
    code, out, err = _invoke(db, "estimate", "--app", "solo", "--system", "quartz",
                             "--nodes", "32", "--format", "json")
    assert code == 0, err
    one = json.loads(out)
    assert one["series"] == "solo on quartz [default size, 32 ranks/node]"
    assert any(note.startswith("fitted now: this predictor (trained ") for note in one["notes"])
    queries = tmp / "queries.csv"
    queries.write_text("app,system,nodes\nsolo,quartz,32\nsolo,quartz,64\n")
    code, out, err = _invoke(db, "estimate", "--input", str(queries), "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert rows[0]["predicted_runtime_s"] == one["predicted_runtime_s"]
    assert all(any(note.startswith("fitted now") for note in row["notes"]) for row in rows)
    code, _, err = _invoke(db, "estimate", "--app", "solo", "--system", "nosuch",
                           "--nodes", "32")
    assert code == 1
    assert err.startswith("Error: solo has no series with system 'nosuch' (runs at two or "
                          "more scales, which a law needs); measured: ")
    assert "quartz" in err


def test_a_new_codes_first_two_node_counts_answer_without_training(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A store holding a code run at two node counts has nothing to train on (the trees
    learn from series of three or more), and ``train`` says that ``estimate`` answers
    them anyway: the shipped predictor does, the series fitted at the estimate, its runs
    read from either backend."""
    runs = tmp_path / "mycode.csv"
    runs.write_text("app,system,problem_size,nodes,runtime_s\n"
                    "mycode,Frontier,big,16,1000\nmycode,Frontier,big,32,540\n")
    assert cli("ingest", "csv", str(runs)).exit_code == 0
    trained = cli("train")
    assert trained.exit_code == 1
    assert ("(the most any has is 2); 'perfpredict estimate' answers its series of two node "
            "counts without training;") in trained.stderr
    result = cli("estimate", "--app", "mycode", "--nodes", "128", "--format", "json")
    assert result.exit_code == 0, result.stderr
    estimate = json.loads(result.stdout)
    assert estimate["measured_scales"] == [16.0, 32.0]
    assert 0 < estimate["lower_runtime_s"] < estimate["predicted_runtime_s"] < 540
    assert [note for note in estimate["notes"] if note.startswith("fitted now")] == [
        "fitted now: the predictor shipped with perfpredict was not trained with this "
        "series, so its laws were fitted to the store's 2 runs of it for this estimate, "
        "the learned correction and the interval are the predictor's, and the interval may "
        "be too narrow; run 'perfpredict train' to learn from them"]
    assert not [note for note in estimate["notes"] if "answered by the predictor shipped" in note]
    typo = cli("estimate", "--app", "mycod", "--nodes", "128")
    assert typo.exit_code == 1
    assert typo.stderr.startswith("Error: no trained series for application 'mycod'; did you "
                                  "mean mycode?")
