"""A store trained once per test run on the bundled data sets, for the advice tests.

Training takes tens of seconds, so the plan, proposal, plot and next-runs tests share one
SQLite store (read-only for them), across pytest-xdist's workers too. It holds the MLPerf Training, RELeARN and LULESH data
sets, a predictor trained on bert, resnet, RELeARN and LULESH, and a catalog entry with queues for
the bert series' machine, so that queue caps and allocation units are exercised on real
predictions. Tests that need an empty store use the ``store`` / ``cli`` fixtures instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner, Result

if TYPE_CHECKING:
    from perfpredict.catalog import SystemSpec

#: The bert series measured at 1, 8, 128 and 512 nodes (MLPerf Training v2.0, NVIDIA).
BERT = ("--app", "bert", "--system", "dgxa100_ngc22.04")
BERT_SYSTEM = "dgxa100_ngc22.04_pytorch (NVIDIA)"
#: A RELeARN weak-scaling series, measured in ranks (32-512).
RELEARN = ("--app", "RELeARN", "--problem-size", "9000 neurons/rank, theta=0.3",
           "--ranks-per-node", "32")
TRAINED_APPS = ["bert", "resnet", "RELeARN", "LULESH 2.0.3"]


@pytest.fixture(scope="session")
def trained_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.conftest import built_once

    return f"sqlite:///{built_once(tmp_path_factory, 'advice-store.db', _train_advice_store)}"


def _train_advice_store(path: Path) -> None:
    from perfpredict import datasets
    from perfpredict.catalog import Queue, SystemSpec, add_system
    from perfpredict.store import open_store
    from perfpredict.train import train

    store = open_store(f"sqlite:///{path}")
    try:
        datasets.ingest(store, ["mlperf_training", "relearn", "lulesh_thicket"])
        train(store, TRAINED_APPS)
        # The bert machine as a center would describe it: Frontier-like node-count bins,
        # the smallest with a limit (10 min) below bert's runtime on one or two nodes,
        # none taking the whole machine, a charge factor and a unit.
        add_system(store, SystemSpec(
            name=BERT_SYSTEM, nodes=2048, charge_factor=2.0, allocation_unit="test units",
            time_granularity_s=300,
            queues=(Queue("small", 1, 2, 600.0), Queue("medium", 3, 256, 10800.0),
                    Queue("large", 257, 1024, 7200.0)),
            sources={k: "test fixture" for k in ("nodes", "charge_factor", "allocation_unit",
                                                 "time_granularity_s", "queues")},
            origin="user"))
        with store.engine.connect() as conn:  # fold the WAL in: one file is the store
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.dispose()


@pytest.fixture
def trained_store(trained_url: str):  # type: ignore[no-untyped-def]
    from perfpredict.store import open_store

    opened = open_store(trained_url)
    yield opened
    opened.dispose()


@pytest.fixture
def advise_cli(trained_url: str) -> Callable[..., Result]:
    """Run ``perfpredict --db <trained store> ARGS...``."""
    from perfpredict.cli.app import app

    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(app, ["--db", trained_url, *args])

    return invoke


def with_bert_machine(trained_url: str, tmp_path: Path,
                      change: Callable[[SystemSpec], SystemSpec]) -> str:
    """A copy of the trained store (its URL) whose bert machine's catalog entry is
    ``change`` d: the shared store stays as every other test reads it."""
    import shutil

    from perfpredict.catalog import add_system, get_system
    from perfpredict.store import open_store

    copy = tmp_path / "store.db"
    shutil.copy(trained_url.removeprefix("sqlite:///"), copy)
    url = f"sqlite:///{copy}"
    store = open_store(url)
    try:
        spec = get_system(store, BERT_SYSTEM)
        assert spec is not None
        add_system(store, change(spec), replace=True)  # a change may drop a fact (queues)
    finally:
        store.dispose()
    return url


def with_queue_charges(trained_url: str, tmp_path: Path,
                       multiplier_of: Callable[[str], float]) -> str:
    """A copy of the trained store whose bert machine charges each queue
    ``multiplier_of(queue name)`` times the machine's rate."""
    import dataclasses

    return with_bert_machine(trained_url, tmp_path, lambda spec: dataclasses.replace(
        spec, queues=tuple(dataclasses.replace(q, charge_multiplier=multiplier_of(q.name))
                           for q in spec.queues)))


def one_error_line(result: Result) -> str:
    """The single ``Error: ...`` line a failing command prints, asserting it is one line."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: "), result.output
    return lines[0]


def kth_files(folder: Path, n_history: int, n_advised: int,
              log: str = "KTH-SP2-1996-2.1-cln.swf.gz") -> tuple[Path, Path]:
    """KTH-SP2's (or the shared SWF ``log``'s) first ``n_history`` jobs as a history log
    to ingest and the next ``n_advised`` as jobs to advise, written in ``folder`` (the
    log's header on both)."""
    import gzip

    from tests.conftest import shared_path

    source = shared_path("logs", "swf", log)
    opened = gzip.open(source, "rt") if log.endswith(".gz") else source.open()
    with opened:
        lines = opened.read().splitlines()
    header = [line for line in lines if line.startswith(";")]
    jobs = [line for line in lines if not line.startswith(";")]
    history, advised = folder / "history.swf", folder / "next.swf"
    history.write_text("\n".join(header + jobs[:n_history]) + "\n")
    advised.write_text("\n".join(header + jobs[n_history:n_history + n_advised]) + "\n")
    return history, advised


def read_csv(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
