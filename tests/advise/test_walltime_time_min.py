"""``advise walltime --time-min-kill-risk``: a time-min per job (Slurm ``--time-min``, the
shortest limit backfill may cut the walltime to), through the library and the CLI, on
KTH-SP2's first 3,000 jobs as history and the next 200 as jobs to advise."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from perfpredict.advise.walltime import (
    CANDIDATE_WALLTIMES_S,
    WalltimeAdvice,
    advise_walltime,
    slurm_time,
)
from perfpredict.advise.walltime.advisor import TIME_MIN_COLUMNS, time_min_choice
from tests.advise.conftest import kth_files, one_error_line

N_ADVISED = 200
KILL_RISK = 0.05


@pytest.fixture(scope="module")
def kth_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """(store URL holding the history and its saved advisor, the jobs to advise)."""
    from perfpredict.advise.walltime import fit_walltime_advisor, save_walltime_advisor
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store

    folder = tmp_path_factory.mktemp("kth_time_min")
    history, advised = kth_files(folder, 3000, N_ADVISED)
    url = f"sqlite:///{folder / 'store.db'}"
    store = open_store(url)
    ingest_file(store, "swf", history)
    save_walltime_advisor(store, fit_walltime_advisor(store))
    store.dispose()
    return url, advised


@pytest.fixture(scope="module")
def advice_at(kth_store: tuple[str, Path]) -> Callable[[float | None], WalltimeAdvice]:
    """The library's advice at ``--kill-risk 0.05`` and a time-min risk (None: none)."""
    from perfpredict.store import open_store

    url, advised = kth_store
    cache: dict[float | None, WalltimeAdvice] = {}

    def advise(time_min_kill_risk: float | None) -> WalltimeAdvice:
        if time_min_kill_risk not in cache:
            store = open_store(url)
            cache[time_min_kill_risk] = advise_walltime(
                store, str(advised), input_format="swf", kill_risk=KILL_RISK,
                time_min_kill_risk=time_min_kill_risk)
            store.dispose()
        return cache[time_min_kill_risk]

    return advise


@pytest.fixture
def kth_cli(kth_store: tuple[str, Path]) -> Callable[..., Result]:
    """``perfpredict --db <store> advise walltime --input <jobs> ARGS...``."""
    from perfpredict.cli.app import app

    url, advised = kth_store

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(app, ["--db", url, "advise", "walltime", "--input",
                                        str(advised), *args])

    return invoke


# --- the library ----------------------------------------------------------------------------

def test_a_time_min_is_a_candidate_no_longer_than_the_walltime_within_the_risk(  # type: ignore[no-untyped-def]
        advice_at) -> None:
    rows = advice_at(0.25).rows
    for row in rows:
        assert row["time_min_kill_risk"] == 0.25
        assert row["time_min_s"] <= row["walltime_s"]
        assert row["time_min_slurm"] == slurm_time(row["time_min_s"])
        # a shorter limit kills every job the walltime kills
        assert row["time_min_kill_probability"] >= row["kill_probability"]
        if row["time_min_s"] < row["walltime_s"]:  # a round candidate, within the risk
            assert row["time_min_s"] in CANDIDATE_WALLTIMES_S
            assert row["time_min_kill_probability"] <= 0.25
        else:  # nothing shorter meets the risk: the walltime, as the advice reads it
            assert row["time_min_kill_probability"] == row["kill_probability"]
    shortened = [r for r in rows if r["time_min_s"] < r["walltime_s"]]
    # backfill gets something to work with, and the summary counts it
    assert len(shortened) >= N_ADVISED // 10
    summary = advice_at(0.25).summary
    assert summary["time_min_kill_risk"] == 0.25
    assert summary["n_time_min_shorter"] == len(shortened)
    assert summary["time_min_expected_kill_share"] == pytest.approx(
        np.mean([r["time_min_kill_probability"] for r in rows]), abs=1e-4)


def test_a_larger_risk_never_gives_a_longer_time_min(advice_at) -> None:  # type: ignore[no-untyped-def]
    risks = (0.1, 0.2, 0.3, 0.45)
    time_mins = np.array([[r["time_min_s"] for r in advice_at(risk).rows] for risk in risks])
    assert (np.diff(time_mins, axis=0) <= 0).all()
    assert (time_mins[-1] < time_mins[0]).sum() >= N_ADVISED // 10  # and it moves


def test_the_time_min_leaves_the_advice_as_it_was(advice_at) -> None:  # type: ignore[no-untyped-def]
    plain, with_time_min = advice_at(None), advice_at(0.25)
    assert all(row[key] is None for row in plain.rows for key in TIME_MIN_COLUMNS)
    assert [{k: v for k, v in row.items() if k not in TIME_MIN_COLUMNS}
            for row in with_time_min.rows] == [
        {k: v for k, v in row.items() if k not in TIME_MIN_COLUMNS} for row in plain.rows]
    assert plain.summary["time_min_kill_risk"] is None
    assert plain.summary["n_time_min_shorter"] is None


def test_the_time_min_is_the_shortest_walltime_within_the_risk_its_map_has_seen() -> None:
    """Per job: the first candidate below the walltime whose reading, never below the
    walltime's, is at most the risk; an unknown reading (NaN: above what the window
    showed) never qualifies; no candidate at all leaves the walltime."""
    walltimes_s = np.array([[60.0, 120.0, 300.0, 600.0]] * 4)
    kill_p = np.array([[0.9, 0.3, 0.2, 0.05],   # 300 s: the first at most 0.25
                       [np.nan, 0.1, 0.1, 0.05],  # 60 s unknown: 120 s
                       [0.9, 0.6, 0.4, 0.05],     # none: the walltime
                       [0.2, 0.1, 0.05, 0.05]])   # the walltime's 0.22 bounds them
    chosen_s = np.array([600.0, 600.0, 600.0, 300.0])
    chosen_kill_p = np.array([0.05, 0.05, 0.05, 0.22])
    time_min_s, time_min_p = time_min_choice(kill_p, walltimes_s, chosen_s, chosen_kill_p,
                                             0.25)
    assert time_min_s.tolist() == [300.0, 120.0, 600.0, 60.0]
    assert time_min_p.tolist() == [0.2, 0.1, 0.05, 0.22]


# --- the CLI --------------------------------------------------------------------------------

def test_csv_and_json_carry_the_time_min_and_null_without_it(kth_cli, advice_at) -> None:  # type: ignore[no-untyped-def]
    result = kth_cli("--time-min-kill-risk", "0.25", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    columns = list(rows[0])
    after = columns.index("request_above_queue_limit") + 1  # after the columns there were
    assert columns[after:after + 4] == list(TIME_MIN_COLUMNS)
    for row, expected in zip(rows, advice_at(0.25).rows, strict=True):
        assert float(row["time_min_s"]) == expected["time_min_s"]
        assert row["time_min_slurm"] == expected["time_min_slurm"]
        assert float(row["time_min_kill_probability"]) == expected["time_min_kill_probability"]
    assert "Time-min at --time-min-kill-risk 0.25 (Slurm --time-min" in result.stderr
    plain_csv = kth_cli("--format", "csv")
    assert plain_csv.exit_code == 0, plain_csv.output
    plain_rows = list(csv.DictReader(io.StringIO(plain_csv.stdout)))
    assert all(row[key] == "" for row in plain_rows for key in TIME_MIN_COLUMNS)
    assert "Time-min" not in plain_csv.stderr
    doc = json.loads(kth_cli("--time-min-kill-risk", "0.25", "--format", "json").stdout)
    assert [r["time_min_s"] for r in doc] == [r["time_min_s"] for r in advice_at(0.25).rows]
    plain_doc = json.loads(kth_cli("--format", "json").stdout)
    assert all(key in row and row[key] is None for row in plain_doc for key in TIME_MIN_COLUMNS)


def test_the_table_shows_the_time_min_only_when_asked(  # type: ignore[no-untyped-def]
        kth_cli, advice_at, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = kth_cli("--time-min-kill-risk", "0.25")
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "--time-min" in result.stdout and "…" not in result.stdout
    first = advice_at(0.25).rows[0]
    assert f"{first['time_min_kill_probability']:.1%}" in result.stdout
    summary = " ".join(result.stdout.split("Time-min at", 1)[1].split())
    shorter = advice_at(0.25).summary["n_time_min_shorter"]
    assert summary.startswith(
        "--time-min-kill-risk 0.25 (Slurm --time-min: the shortest limit the scheduler may "
        f"cut a walltime to, to start the job sooner): below the walltime for {shorter} of "
        f"{N_ADVISED} jobs; expected kill share if every job is cut to it: ")
    assert "--time-min" not in kth_cli().stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--time-min-kill-risk", "0.05"),
     "Error: --time-min-kill-risk must be larger than --kill-risk (0.05), got 0.05"),
    (("--kill-risk", "0.2", "--time-min-kill-risk", "0.1"),
     "Error: --time-min-kill-risk must be larger than --kill-risk (0.2), got 0.1"),
    (("--time-min-kill-risk", "0.5"),
     "Error: --time-min-kill-risk must be above 0 and below 0.5 (a share of jobs killed), "
     "got 0.5"),
    # the example is a time-min risk the same command takes, not the default --kill-risk
    (("--time-min-kill-risk", "0.7"),
     "Error: --time-min-kill-risk must be above 0 and below 0.5 (a share of jobs killed), got "
     "0.7; 0.25 accepts that one run in four is killed if the job is given only that long"),
    (("--kill-risk", "0.3", "--time-min-kill-risk", "0.7"),
     "Error: --time-min-kill-risk must be above 0 and below 0.5 (a share of jobs killed), got "
     "0.7; give one above 0.3 and below 0.5"),
])
def test_a_time_min_risk_not_above_the_kill_risk_or_from_one_half_is_refused(  # type: ignore[no-untyped-def]
        kth_cli, args: tuple[str, ...], message: str) -> None:
    result = kth_cli(*args)
    assert result.exit_code == 2
    assert one_error_line(result).startswith(message)


def test_advise_and_advise_walltime_refuse_a_time_min_risk_alike(  # type: ignore[no-untyped-def]
        kth_cli, cli) -> None:
    """One check for both commands: the same line for the same mistake."""
    args = ("--kill-risk", "0.1", "--time-min-kill-risk", "0.1")
    walltime, plan = kth_cli(*args), cli("advise", "--app", "bert", *args)
    assert walltime.exit_code == plan.exit_code == 2
    assert one_error_line(walltime) == one_error_line(plan)
