"""Start-up targets of issue 5, measured as ratios by bench/startup_benchmark.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


@pytest.mark.bench
def test_estimate_within_twice_import_numpy() -> None:
    from bench.startup_benchmark import benchmark

    ratios = {row["command"]: row["ratio_to_import_numpy"] for row in benchmark(repeats=9)}
    assert ratios["perfpredict estimate (bundled predictor)"] < 2.0, ratios
    assert ratios["perfpredict --help"] < 2.0, ratios


def test_an_untrained_store_is_refused_before_anything_is_timed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its estimates fit the series from the runs each time (4 s where a trained store's
    took 0.6 s), which the row, labelled a trained store, read as start-up."""
    from bench.startup_benchmark import main
    from bench.train_benchmark import write_store

    url = write_store(tmp_path / "runs.db", 200)
    monkeypatch.setattr(sys, "argv", ["startup_benchmark", "--store", url, "--app", "app0"])
    with pytest.raises(SystemExit) as stopped:
        main()
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"error: --store {url} has no trained predictor of 'app0'; train it first: "
        f"perfpredict --db {url} train")
