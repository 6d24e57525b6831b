"""The walk-throughs in examples/ run on a fresh checkout (bundled data only). Each runs
for tens of seconds, so all of them are in the slow group CI runs."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_examples_run(tmp_path: Path) -> None:
    # Each example makes its own PERFPREDICT_HOME; this one only catches a stray default.
    env = {**os.environ, "PERFPREDICT_HOME": str(tmp_path / "home"), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "run_all.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, (
        f"examples/run_all.py failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    assert "examples passed" in done.stdout


#: Examples that print the perfpredict commands they run, answered by the bundled
#: predictor in an empty store, so a reader can run them again.
TRANSCRIPTS = ["01_plan_strong_scaling.py", "03_allocation_proposal.py"]


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """What an example prints, each run once for the module's tests (tens of seconds
    each: they train or load the bundled predictor and plot)."""
    outputs: dict[str, str] = {}

    def run(name: str) -> str:
        if name not in outputs:
            cwd = tmp_path_factory.mktemp(name.removesuffix(".py"))
            env = {**os.environ, "PERFPREDICT_HOME": str(cwd / "home"), "MPLBACKEND": "Agg"}
            done = subprocess.run([sys.executable, str(ROOT / "examples" / name)], cwd=cwd,
                                  env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr
            outputs[name] = done.stdout
        return outputs[name]

    return run


@pytest.mark.parametrize("name", TRANSCRIPTS)
def test_the_commands_an_example_prints_paste_into_a_shell(
        sqlite_url: str, printed: Callable[[str], str], name: str) -> None:
    """Each complete ``$ perfpredict ...`` line an example prints, split as a shell
    splits it, prints what the example printed for it: "--system XE8545x4A100-SXM-40GB
    (Dell)" was printed unquoted, which a shell refuses at the parenthesis."""
    from perfpredict.cli.app import app
    from perfpredict.store import open_store

    open_store(sqlite_url).dispose()  # an empty store, as the example's own
    stdout = printed(name)
    commands = [line.removeprefix("$ perfpredict ") for line in stdout.splitlines()
                if line.startswith("$ perfpredict ") and "..." not in line]
    assert commands
    for command in commands:
        args = shlex.split(command)
        args = args[:args.index(">")] if ">" in args else args  # the file it writes
        result = CliRunner().invoke(app, ["--db", sqlite_url, *args], env={"COLUMNS": "100"})
        assert result.exit_code == 0, (command, result.output)
        assert result.stdout in stdout, command


def test_example_01_quotes_its_extrapolated_estimate_as_printed(
        printed: Callable[[str], str]) -> None:
    """The header of 01 quotes the estimate beyond the measured range (64 nodes) and its
    overhead coefficient; they had gone stale when the bundled predictor was retrained,
    while the user guide's block of the same query was kept."""
    name = "01_plan_strong_scaling.py"
    lines = printed(name).splitlines()
    (line,) = [x for x in lines if x.startswith("  64 nodes: ")]
    (law,) = [x for x in lines if "the pooled slope drift" in x]
    header = " ".join((ROOT / "examples" / name).read_text(
        encoding="utf-8").split("What it prints")[1].split())
    assert line.removeprefix("  64 nodes: ") in header
    assert f"overhead coefficient {law.rsplit(' ', 1)[1]}" in header


def test_example_02_quotes_the_calibration_window_it_runs_on(sqlite_cli) -> None:  # type: ignore[no-untyped-def]
    """The header of 02 explains its 1% advice by the size of the window of recent jobs
    that calibrates it; it said 132 where the example's store holds 133 (the refusal of
    a rarer --kill-risk, and docs/walltime.md, say 133)."""
    data = ROOT / "examples" / "data"
    assert sqlite_cli("ingest", "sacct", str(data / "synthetic_sacct.psv")).exit_code == 0
    refused = sqlite_cli("advise", "walltime", "--input", str(data / "pending_jobs.csv"),
                         "--kill-risk", "0.001")
    assert refused.exit_code == 2
    n_jobs = refused.stderr.split(" recent jobs that calibrate")[0].rsplit(" ", 1)[1]
    header = " ".join((ROOT / "examples" / "02_sacct_walltime.py").read_text(
        encoding="utf-8").split("What it prints")[1].split())
    assert f"window holds {n_jobs} recent jobs" in header
    assert f"on {n_jobs} jobs it takes" in header
