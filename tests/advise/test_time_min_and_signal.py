"""``advise --time-min-kill-risk`` (a shorter limit the scheduler may cut the walltime to,
from the prediction) and ``--signal-lead`` (how long before its limit the job is told to
checkpoint): the plan, the directives, the JSON, the table and the refusals.

Most run on the bundled predictor in an empty store, whose bert series on the Dell
XE8545 is wide enough apart at its 95th and 75th percentiles (31 and 29 minutes) for a
time-min; the chained and the rounded-away cases use the trained store of
``conftest.py``, whose bert machine has queues and 5-minute granularity."""

from __future__ import annotations

import json
import math

import pytest

from perfpredict.advise.checkpoint import CHECKPOINT_SIGNAL_MAX_SHARE, signal_lead_option_s
from perfpredict.advise.job_limits import (
    exceedance_probability,
    rounded_limit_s,
    runtime_quantiles,
)
from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.durations import option_seconds
from perfpredict.errors import BadInputError
from tests.advise.conftest import BERT, one_error_line, with_bert_machine

XE8545 = "XE8545x4A100-SXM-40GB (Dell)"
XE_BERT = ("advise", "--app", "bert", "--system", XE8545)
#: bert on the trained store's queued machine, in one job of the 3-256 node queue.
BERT_ADVISE = ("advise", *BERT)
#: bert on the trained store's queued machine, chained across 3 jobs of the 10-min queue.
CHAINED = ("advise", *BERT, "--objective", "cheapest", "--max-nodes", "2")


def _json(result) -> dict:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- the plan -------------------------------------------------------------------------------

def test_the_time_min_is_the_quantile_at_its_risk_rounded_as_the_walltime(store) -> None:  # type: ignore[no-untyped-def]
    from perfpredict.estimate import load_predictor

    plan = advise_plan(store, PlanRequest(app="bert", system=XE8545, time_min_kill_risk=0.25))
    predictor = load_predictor(store.url)
    query = plan.request.query(plan.recommended.nodes)
    quantile_s = runtime_quantiles(predictor, [query], 0.75)[0]
    assert plan.time_min is not None and plan.time_min.quantile_s == quantile_s
    assert plan.time_min.time_min_s == rounded_limit_s(quantile_s, plan.time_granularity_s)
    assert plan.time_min.time_min_s % 60 == 0 and plan.time_min_shortens
    assert plan.time_min.time_min_s < plan.walltime_s
    # read off the interval model as the walltime's is: at most the risk, and above the
    # walltime's, which is longer
    assert plan.time_min.kill_probability == min(
        exceedance_probability(predictor, query, plan.time_min.time_min_s), 0.25)
    assert plan.kill_probability < plan.time_min.kill_probability <= 0.25
    assert plan.signal_lead_s is None  # one job, meant to end before its limit


def test_a_library_caller_gives_the_signal_lead_as_a_number_of_seconds(store) -> None:  # type: ignore[no-untyped-def]
    """``PlanRequest(signal_lead=300)``, seconds as a notebook holds them, was a TypeError
    from inside ("argument of type 'int' is not iterable"); it is the lead "300" and
    "5:00" give, and a number that is no duration is refused as text that is none is."""
    import numpy as np

    leads = {signal_lead: advise_plan(store, PlanRequest(
        app="bert", system=XE8545, signal_lead=signal_lead)).signal_lead_s
        for signal_lead in (300, 300.0, np.int64(300), "300", "5:00")}
    assert set(leads.values()) == {300}, leads
    for wrong in (-5, float("nan"), True, 300.5):
        with pytest.raises(BadInputError, match=r"^--signal-lead must be (a duration above "
                           r"zero|whole seconds)"):
            advise_plan(store, PlanRequest(app="bert", system=XE8545, signal_lead=wrong))


def test_a_time_min_that_rounds_up_to_the_walltime_is_said_and_not_written(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """bert's 75th and 95th percentiles (180 and 189 s) both round up to the machine's
    5-minute granule: a --time-min equal to --time lets the scheduler cut nothing."""
    doc = _json(advise_cli(*BERT_ADVISE, "--time-min-kill-risk", "0.25", "--format", "json"))
    assert doc["time_min_s"] == doc["walltime_s"] == 300
    assert doc["time_min_quantile_s"] < doc["walltime_quantile_s"]
    assert any("nothing to shorten" in w for w in doc["warnings"])
    sbatch = advise_cli(*BERT_ADVISE, "--time-min-kill-risk", "0.25", "--emit", "sbatch").stdout
    assert "--time-min=" not in sbatch
    assert ("# --time-min: at --time-min-kill-risk 0.25 the runtime quantile rounds up to "
            "the walltime itself, so there is nothing to shorten") in sbatch.splitlines()
    pbs = advise_cli(*BERT_ADVISE, "--time-min-kill-risk", "0.25", "--emit", "pbs").stdout
    assert "#PBS -l walltime=00:05:00" in pbs.splitlines()
    assert "min_walltime=" not in pbs and "max_walltime" not in pbs
    table = advise_cli(*BERT_ADVISE, "--time-min-kill-risk", "0.25").stdout
    assert "  time-min " not in table and "nothing to shorten" in table


def test_a_chained_runs_time_min_is_its_capped_walltime(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """Each job of a chain reaches the queue's limit: a time-min below it would only
    cut the chain into more jobs, so it is the walltime, with the chain's kill
    probability, not the risk asked for."""
    doc = _json(advise_cli(*CHAINED, "--time-min-kill-risk", "0.25", "--format", "json"))
    assert doc["chained_jobs"] == 3 and doc["time_min_s"] == doc["walltime_s"] == 600
    assert doc["time_min_kill_probability"] == doc["kill_probability"] > 0.25


def test_a_chained_run_gets_no_time_min_even_where_its_quantile_lies_below_the_limit(  # type: ignore[no-untyped-def]
        trained_url: str, tmp_path) -> None:
    """bert on one node, its 95th percentile (1,212 s) past a 20-minute queue and its
    55th (1,133 s) below it: each job of the two-job chain was given a time-min of 19
    minutes "killed with probability at most 0.45", and the note of a time-min that
    rounds up to the walltime asked for a larger --time-min-kill-risk, which no risk
    helps."""
    import dataclasses

    from typer.testing import CliRunner

    from perfpredict.catalog import Queue
    from perfpredict.cli.app import app

    url = with_bert_machine(trained_url, tmp_path, lambda spec: dataclasses.replace(
        spec, time_granularity_s=60, queues=(Queue("small", 1, 2, 1200.0),
                                             *spec.queues[1:])))

    def advise(*args: str):  # type: ignore[no-untyped-def]
        return CliRunner().invoke(app, ["--db", url, *CHAINED, "--time-min-kill-risk", "0.45",
                                        *args])

    doc = _json(advise("--format", "json"))
    assert doc["chained_jobs"] == 2 and doc["walltime_s"] == 1200
    assert doc["time_min_quantile_s"] < doc["walltime_s"] < doc["walltime_quantile_s"]
    assert doc["time_min_s"] == doc["walltime_s"]
    assert doc["time_min_kill_probability"] == doc["kill_probability"]
    (note,) = [w for w in doc["warnings"] if "time-min" in w]
    assert note == ("no time-min is written: the run is chained across 2 jobs that each run "
                    "to their limit and checkpoint, so there is nothing to shorten at any "
                    "--time-min-kill-risk")
    sbatch = advise("--emit", "sbatch").stdout.splitlines()
    assert not any(line.startswith("#SBATCH --time-min") for line in sbatch)
    assert ("# --time-min: none, the run is chained across 2 jobs that each run to their "
            "limit, so there is nothing to shorten") in sbatch
    pbs = advise("--emit", "pbs").stdout
    assert "#PBS -l walltime=00:20:00" in pbs and "min_walltime=" not in pbs


# --- Slurm and PBS directives ---------------------------------------------------------------

def test_emit_sbatch_writes_the_time_min_and_the_signal(cli) -> None:  # type: ignore[no-untyped-def]
    args = (*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", "5:00")
    doc = _json(cli(*args, "--format", "json"))
    result = cli(*args, "--emit", "sbatch")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index(f"#SBATCH --time={doc['walltime_slurm']}")
    assert lines[start + 1:] == [
        "# --time-min: the scheduler may cut the limit to this to start the job sooner; a "
        "job given only that long is killed with probability at most 0.25 "
        "(--time-min-kill-risk): checkpoint, or accept that risk",
        f"#SBATCH --time-min={doc['time_min_slurm']}",
        "#SBATCH --signal=B:USR1@300  # checkpoint before the limit"]
    assert doc["time_min_slurm"] == "0-00:29:00" and doc["walltime_slurm"] == "0-00:31:00"


def test_emit_pbs_writes_a_shrink_to_fit_job(cli) -> None:  # type: ignore[no-untyped-def]
    """PBS sets a shrink-to-fit job's walltime itself, between min_walltime and
    max_walltime (OpenPBS pbs_resources(7B)); it has no --signal, so the lead is said
    as how to time the checkpoint from the walltime PBS set."""
    args = (*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", "300")
    doc = _json(cli(*args, "--format", "json"))
    lines = cli(*args, "--emit", "pbs").stdout.splitlines()
    directives = [line for line in lines if line.startswith("#PBS")]
    assert directives[1:] == [f"#PBS -l min_walltime={doc['time_min_pbs']}",
                              f"#PBS -l max_walltime={doc['walltime_pbs']}"]
    assert not any("-l walltime=" in line for line in lines)
    assert lines[-1] == (
        "# checkpoint 300 s before the limit: PBS signals nothing ahead of it, so time it in "
        "the job, e.g. run the launch command under 'timeout --signal=USR1 SECONDS' with "
        "SECONDS the walltime PBS sets (qstat -f $PBS_JOBID: Resource_List.walltime) less 300")


def test_emit_pbs_times_the_signal_from_a_fixed_walltime(cli) -> None:  # type: ignore[no-untyped-def]
    doc = _json(cli(*XE_BERT, "--signal-lead", "300", "--format", "json"))
    lines = cli(*XE_BERT, "--signal-lead", "300", "--emit", "pbs").stdout.splitlines()
    assert f"#PBS -l walltime={doc['walltime_pbs']}" in lines
    assert lines[-1].endswith(f"with SECONDS {int(doc['walltime_s']) - 300}")


def test_a_signal_lead_is_written_for_one_job_and_only_when_given(cli) -> None:  # type: ignore[no-untyped-def]
    """Before, --signal appeared only for a chained run, with perfpredict's own lead."""
    given = cli(*XE_BERT, "--signal-lead", "120", "--emit", "sbatch").stdout.splitlines()
    assert given[-1] == "#SBATCH --signal=B:USR1@120  # checkpoint before the limit"
    assert not any("--signal" in line for line in cli(*XE_BERT, "--emit", "sbatch").stdout
                   .splitlines())


def test_a_signal_lead_for_a_chained_run_replaces_perfpredicts(advise_cli) -> None:  # type: ignore[no-untyped-def]
    lines = advise_cli(*CHAINED, "--signal-lead", "90", "--emit", "sbatch").stdout.splitlines()
    assert "#SBATCH --signal=B:USR1@90  # checkpoint before the limit; chain 3 jobs" in lines
    pbs = advise_cli(*CHAINED, "--signal-lead", "90", "--emit", "pbs").stdout.splitlines()
    assert pbs[-2].startswith("# the queue caps the walltime: checkpoint before the limit")
    assert pbs[-1].endswith("with SECONDS 510")  # the 10-minute limit less 90 s


def test_a_lead_too_long_for_a_chained_run_does_not_ask_for_a_smaller_risk(advise_cli) -> None:  # type: ignore[no-untyped-def]
    """A chained run's walltime is its queue's limit, which no --kill-risk lengthens: the
    refusal told the user to ask for a smaller one."""
    result = advise_cli(*CHAINED, "--signal-lead", "150")
    assert result.exit_code == 2
    assert one_error_line(result) == (
        "Error: --signal-lead 150 s is more than a fifth of the job's 00:10:00 walltime: it "
        "would be told to checkpoint with 75% of its time gone; give at most 120 s")

# --- JSON and the table ---------------------------------------------------------------------


def test_json_carries_the_time_min_and_the_lead_with_units(cli) -> None:  # type: ignore[no-untyped-def]
    doc = _json(cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", "5:00",
                    "--format", "json"))
    assert doc["time_min_kill_risk"] == 0.25 and doc["signal_lead_s"] == 300
    assert doc["time_min_s"] == 1740 and doc["time_min_slurm"] == "0-00:29:00"
    assert doc["time_min_pbs"] == "00:29:00"
    assert doc["time_min_quantile_s"] <= doc["time_min_s"] < doc["walltime_s"]
    assert doc["kill_probability"] < doc["time_min_kill_probability"] <= 0.25
    emitted = _json(cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", "5:00",
                        "--emit", "sbatch", "--format", "json"))
    assert {k: emitted[k] for k in doc} == doc
    plain = _json(cli(*XE_BERT, "--format", "json"))  # the same keys, null, without them
    assert all(plain[key] is None for key in (
        "time_min_kill_risk", "time_min_s", "time_min_slurm", "time_min_pbs",
        "time_min_quantile_s", "time_min_kill_probability", "signal_lead_s"))


def test_the_time_min_names_its_percentile_in_english(cli) -> None:  # type: ignore[no-untyped-def]
    """A --time-min-kill-risk of 0.49 was "the 51th percentile"."""
    result = cli(*XE_BERT, "--time-min-kill-risk", "0.49")
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("  time-min ")]
    assert "min_walltime): the 51st percentile " in line


def test_the_table_says_the_time_min_and_the_signal(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", "300")
    assert result.exit_code == 0, result.output
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("  time-min ")]
    assert line.startswith("  time-min 0-00:29:00 (Slurm --time-min), 00:29:00 (PBS "
                           "min_walltime): the 75th percentile ")
    assert line.endswith("rounded up; the scheduler may cut the walltime to it to start "
                         "the job sooner, and a job given only that long is killed with "
                         "probability 13%: checkpoint, or accept that risk")
    assert ("  checkpoint signal 300 s before the limit (Slurm --signal=B:USR1@300; PBS has "
            "none: time it in the job)") in result.stdout.splitlines()
    csv = cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--format", "csv")
    assert "  time-min 0-00:29:00" in csv.stderr  # the summary, aside from the table


# --- refusals -------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (("--time-min-kill-risk", "0.05"),
     "--time-min-kill-risk must be larger than --kill-risk (0.05), got 0.05"),
    (("--kill-risk", "0.3", "--time-min-kill-risk", "0.2"),
     "--time-min-kill-risk must be larger than --kill-risk (0.3), got 0.2: the time-min is "
     "a shorter limit than the walltime, which more runs outlive; give one above 0.3 and "
     "below 0.5"),
    (("--kill-risk", "0.1", "--time-min-kill-risk", "0.1"),
     "which more runs outlive; 0.25 accepts that one run in four is killed"),
    (("--time-min-kill-risk", "0.5"), "--time-min-kill-risk must be above 0 and below 0.5"),
    (("--time-min-kill-risk", "nan"), "--time-min-kill-risk must be a finite number"),
    (("--signal-lead", "abc"), "--signal-lead must be a duration above zero, in seconds "
     "(600) or as [DD-[HH:]]MM:SS (10:00, 1:30:00), got 'abc'"),
    (("--signal-lead", "0"), "--signal-lead must be a duration above zero"),
    (("--signal-lead", "-60"), "--signal-lead must be a duration above zero"),
    (("--signal-lead", "inf"), "--signal-lead must be a duration above zero"),
    (("--signal-lead", "10:75"), "--signal-lead must be a duration above zero"),
    (("--signal-lead", "1.5"), "--signal-lead must be whole seconds"),
    (("--signal-lead", "18:12:16"), "--signal-lead must be at most 65535 s"),
])
def test_bad_values_give_one_error_line(cli, args: tuple[str, ...], message: str) -> None:  # type: ignore[no-untyped-def]
    result = cli(*XE_BERT, *args)
    assert result.exit_code == 2
    assert message in one_error_line(result)


def test_a_lead_beyond_a_fifth_of_the_time_min_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    """The lead is how long the checkpoint needs: cut to the fifth, the job would be
    killed while writing it, so it is refused against the shortest limit it may get."""
    doc = _json(cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--format", "json"))
    most_s = math.floor(CHECKPOINT_SIGNAL_MAX_SHARE * doc["time_min_s"])
    assert cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", str(most_s),
               "--emit", "sbatch").exit_code == 0
    result = cli(*XE_BERT, "--time-min-kill-risk", "0.25", "--signal-lead", str(most_s + 1))
    assert result.exit_code == 2
    assert one_error_line(result) == (
        f"Error: --signal-lead {most_s + 1} s is more than a fifth of the job's 00:29:00 "
        f"time-min: it would be told to checkpoint with 80% of its time gone; give at most "
        f"{most_s} s, or ask for a longer limit (a smaller --kill-risk, a smaller "
        f"--time-min-kill-risk)")
    walltime = cli(*XE_BERT, "--signal-lead", "2:00:00")
    assert walltime.exit_code == 2
    assert "of the job's 00:31:00 walltime: it would be told to checkpoint as it starts" in (
        one_error_line(walltime))


@pytest.mark.parametrize(("text", "seconds"), [
    ("600", 600.0), ("10:00", 600.0), ("1:30:00", 5400.0), ("1-00:00:00", 86400.0),
    (" 90 ", 90.0), ("00:00.5", 0.5)])
def test_a_duration_option_takes_seconds_or_a_clock_duration(text: str, seconds: float) -> None:
    assert option_seconds("--signal-lead", text) == seconds


def test_the_signal_lead_is_whole_seconds_slurm_takes() -> None:
    assert signal_lead_option_s("18:12:15") == 65535
    with pytest.raises(BadInputError, match="give 1$"):
        signal_lead_option_s("00:00.5")
