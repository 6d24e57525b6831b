"""Outputs the docs quote, as the tool prints them now. A retrained predictor or a changed
rule moves such numbers, and a quote must move with them: the allocation proposal's row
had gone stale in the user guide and in example 03 while every test passed."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import REPO

MASKRCNN = ["--app", "maskrcnn", "--system", "XE8545x4A100-SXM-40GB (Dell)",
            "--problem-size", "v2.0", "--runs", "50", "--format", "markdown"]


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_allocation_proposal_row_is_quoted_as_printed(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("advise", *MASKRCNN)
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.stdout.splitlines()
              if line.startswith("| production (recommended)")]
    assert row in (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    example = (REPO / "examples" / "03_allocation_proposal.py").read_text(encoding="utf-8")
    assert _words(row.strip("| ")) in _words(example)  # wrapped in its docstring


#: The user guide's blocks that the bundled predictor answers in an empty store (the page
#: says every output was printed so): run as quoted, each printed line as quoted. A block
#: may leave lines out with "..."; the advise block quotes only the lines above its table.
BUNDLED_PREDICTOR_BLOCKS = [
    '$ perfpredict estimate --app bert --nodes 512 --system "dgxa100_ngc22.04_pytorch (NVIDIA)"',
    '$ perfpredict estimate --app Castro-flame_wave --system Frontier --problem-size "He 25cm"',
    '$ perfpredict estimate --app bert --system "XE8545x4A100-SXM-40GB (Dell)" --problem-size v2.0 --nodes 64 --explain',
    '$ perfpredict advise --app bert --system "dgxa100_ngc22.04_pytorch (NVIDIA)"\n',
    '$ perfpredict advise --app bert --system "XE8545x4A100-SXM-40GB (Dell)" --problem-size v2.0 --min-speedup',
    '$ perfpredict advise --app bert --system "XE8545x4A100-SXM-40GB (Dell)" --problem-size v2.0 --threads-per-rank 16 --time-min-kill-risk 0.25 --signal-lead 5:00 --emit sbatch',
    '$ perfpredict advise --app bert --system "XE8545x4A100-SXM-40GB (Dell)" --problem-size v2.0 --threads-per-rank 16 --time-min-kill-risk 0.25 --signal-lead 5:00 --emit pbs',
    '$ perfpredict advise --app bert --system "XE8545x4A100-SXM-40GB (Dell)" --problem-size v2.0 --threads-per-rank 16 --nodes 8 --emit sbatch',
    "$ perfpredict estimate --app nosuch --nodes 4",
    "$ perfpredict estimate --app Castro-wdmerger --system Frontier --problem-size 1024^3",
    '$ perfpredict advise --app maskrcnn --system "XE8545x4A100-SXM-40GB (Dell)" --problem-size v2.0 --run-class',
]


def _quoted_block(page: str, start: str) -> tuple[str, list[str]]:
    """The command of the ```text block of ``page`` whose first line starts with
    ``start``, and the output lines quoted under it."""
    (block,) = [b for b in page.split("```text\n")[1:] if b.startswith(start)]
    command, *output = block.split("\n```")[0].splitlines()
    return command, output


@pytest.mark.parametrize(("page", "start"), [
    *[("docs/user-guide.md", start) for start in BUNDLED_PREDICTOR_BLOCKS],
    ("README.md", "$ perfpredict estimate --app bert --system"),  # the README's first answer
])
def test_the_docs_quote_the_bundled_predictor_as_printed(  # type: ignore[no-untyped-def]
        cli, page: str, start: str) -> None:
    command, quoted = _quoted_block((REPO / page).read_text(encoding="utf-8"), start)
    result = cli(*shlex.split(command.removeprefix("$ perfpredict ")))
    printed = (result.stdout + result.stderr).splitlines()
    shown = [line for line in quoted if line.strip() != "..."]
    assert shown and all(line in printed for line in shown), (command, printed)


WALLTIME_BLOCK = ("$ perfpredict advise walltime --input examples/data/pending_jobs.csv "
                  "--input-format csv --format csv")


@pytest.mark.parametrize("start", [WALLTIME_BLOCK + "\n", WALLTIME_BLOCK + " --time-min-kill-risk"])
def test_the_user_guide_quotes_advise_walltime_as_printed(  # type: ignore[no-untyped-def]
        cli, monkeypatch: pytest.MonkeyPatch, start: str) -> None:
    """The ``advise walltime`` blocks, with and without ``--time-min-kill-risk``, on the
    example center, run from the repository as their paths are: the CSV header without
    the option had kept the columns it had before the time-min ones were added."""
    monkeypatch.chdir(REPO)
    assert cli("ingest", "sacct", str(REPO / "examples" / "data" / "synthetic_sacct.psv")
               ).exit_code == 0
    page = (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    command, quoted = _quoted_block(page, start)
    result = cli(*shlex.split(command.removeprefix("$ perfpredict ")))
    assert result.exit_code == 0, result.output
    printed = (result.stdout + result.stderr).splitlines()
    shown = [line for line in quoted if line.strip() != "..."]
    assert len(shown) > 1 and all(line in printed for line in shown), (command, printed)


def test_the_user_guide_quotes_the_batch_estimate_as_printed(  # type: ignore[no-untyped-def]
        cli, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``estimate --input q.csv`` block, with ``q.csv`` as the block's ``cat`` shows it:
    its BERT row had gone stale while the same query's ``--explain`` block was kept."""
    page = (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    _, listed = _quoted_block(page, "$ cat q.csv")
    index = listed.index("$ perfpredict estimate --input q.csv --format csv")
    (tmp_path / "q.csv").write_text("\n".join(listed[:index]) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = cli(*shlex.split(listed[index].removeprefix("$ perfpredict ")))
    assert result.exit_code == 0, result.output
    assert listed[index + 1:] == result.stdout.splitlines()


#: Intervals the docs' prose quotes (what an interval means, the ideal-scaling bound, the
#: ramp past the last measured count, when intervals widen), with the estimate that
#: prints each.
PROSE_INTERVALS = [
    ("user-guide.md", ["--app", "cosmoflow", "--system",
                       "juwelsbooster_gpu_mxnet1.9 (HelmholtzAI)", "--nodes", "1024"]),
    ("user-guide.md", ["--app", "Castro-wdmerger", "--system", "Frontier", "--problem-size",
                       "1024^3", "--variant", "mgs=128|campaign=20240709", "--nodes", "4096"]),
    *[("user-guide.md", ["--app", "relearn", "--problem-size", "5000 neurons",
                         "--ranks-per-node", "1", "--nodes", str(ranks)])
      for ranks in (520, 640, 1024)],
    ("accuracy.md", ["--app", "LULESH 2.0.3", "--ranks-per-node", "1", "--nodes", "720"]),
    ("accuracy.md", ["--app", "cosmoflow", "--system",
                     "juwelsbooster_gpu_mxnet1.9 (HelmholtzAI)", "--nodes", "128"]),
]


@pytest.mark.parametrize(("page", "query"), PROSE_INTERVALS)
def test_the_docs_prose_quotes_intervals_as_printed(  # type: ignore[no-untyped-def]
        cli, page: str, query: list[str]) -> None:
    result = cli("estimate", *query)
    assert result.exit_code == 0, result.output
    interval = result.stdout.split("(90% interval ")[1].split(")")[0]
    text = _words((REPO / "docs" / page).read_text(encoding="utf-8"))
    assert interval in text or interval.replace(" - ", "-") in text, (query, interval)


@pytest.mark.parametrize(("confidence", "interval", "quoted"), [
    ("0.975", "10.3 - 15.2 s", "10.3 - 15.2 s at `--confidence 0.975`"),
    ("0.98", "4.8 - 28.7 s", "4.8 - 28.7 s at 0.98"),
])
def test_the_guide_quotes_the_jump_of_a_repeat_interval_as_printed(  # type: ignore[no-untyped-def]
        cli, confidence: str, interval: str, quoted: str) -> None:
    """At a measured node count the interval is the repeats' own up to the confidence
    their n deviations resolve, n / (n + 1), and the one calibrated between scales above
    it: BERT's 40 repeats at 512 nodes jump between 0.975 and 0.98, which neither the
    guide nor accuracy.md's "When intervals widen" had said."""
    result = cli("estimate", "--app", "bert", "--system", "dgxa100_ngc22.04_pytorch (NVIDIA)",
                 "--nodes", "512", "--confidence", confidence)
    assert result.exit_code == 0, result.output
    assert f"interval {interval})" in result.stdout
    assert quoted in _words((REPO / "docs" / "user-guide.md").read_text(encoding="utf-8"))
    accuracy = _words((REPO / "docs" / "accuracy.md").read_text(encoding="utf-8"))
    assert f"{interval.replace(' - ', '-')} at {confidence}" in accuracy


@pytest.mark.parametrize(("kill_risk", "walltime"), [("0.0125", "0-00:04:00"),
                                                     ("0.012", "0-00:05:00")])
def test_the_guide_quotes_the_jump_of_a_walltime_at_a_measured_count_as_printed(  # type: ignore[no-untyped-def]
        cli, kill_risk: str, walltime: str) -> None:
    """The same jump read as a walltime: below a kill risk of 1 / (2 (n + 1)) BERT's
    advice at 8 nodes, a measured count, comes off the interval calibrated between
    scales."""
    result = cli("advise", "--app", "bert", "--system", "dgxa100_ngc22.04_pytorch (NVIDIA)",
                 "--kill-risk", kill_risk)
    assert result.exit_code == 0, result.output
    assert "Recommendation: 8 nodes." in result.stdout
    assert f"walltime {walltime} (Slurm --time)" in result.stdout
    page = _words((REPO / "docs" / "user-guide.md").read_text(encoding="utf-8"))
    assert ("writes 4 minutes at `--kill-risk 0.0125` and 5 at 0.012" in page)


def test_efficiency_is_the_speedup_over_the_node_ratio_as_the_guide_says(cli) -> None:  # type: ignore[no-untyped-def]
    """The guide reads "speedup 89.60x, parallel efficiency 18% against 1 node" as the
    speedup over the smallest measured scale divided by the ratio of the node counts."""
    result = cli("estimate", "--app", "bert", "--system", "dgxa100_ngc22.04_pytorch (NVIDIA)",
                 "--nodes", "512", "--format", "json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    smallest = min(answer["measured_scales"])
    assert answer["efficiency"] == pytest.approx(answer["speedup"] * smallest / 512)


@pytest.mark.slow
def test_the_own_application_walk_through_prints_as_quoted(  # type: ignore[no-untyped-def]
        cli, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user guide's "Your own application" block, from ``cat runs.csv`` to the
    estimate, run in an empty store: its train and estimate lines had gone stale."""
    page = (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    _, lines = _quoted_block(page, "$ cat runs.csv")
    commands = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    (tmp_path / "runs.csv").write_text("\n".join(lines[:commands[0]]) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    printed: list[str] = []
    for i in commands:
        for command in lines[i].removeprefix("$ ").split(" && "):
            result = cli(*shlex.split(command.removeprefix("perfpredict ")))
            assert result.exit_code == 0, (command, result.output)
            printed += (result.stdout + result.stderr).splitlines()
    quoted = [line for line in lines[commands[0]:] if not line.startswith("$ ")]
    assert [line for line in quoted if line not in printed] == []


def test_the_user_guide_quotes_systems_list_at_the_width_it_names(sqlite_url: str) -> None:
    """The guide's ``systems list`` block is one table of eight columns, as 100 columns
    print it; in an 80-column terminal its last two columns come in a second table, and
    the page did not say at what width its block was printed."""
    from typer.testing import CliRunner

    from perfpredict.cli.app import app
    from perfpredict.store import open_store

    open_store(sqlite_url).dispose()
    page = (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    assert "as printed 100 columns wide" in _words(page)
    _, quoted = _quoted_block(page, "$ perfpredict systems list")
    result = CliRunner().invoke(app, ["--db", sqlite_url, "systems", "list"],
                                env={"COLUMNS": "100"})
    shown = [line for line in quoted if line.strip() != "..."]
    assert result.stdout.splitlines()[:len(shown)] == shown
