"""Start-up guard (house style habit 6): ``perfpredict --help`` and a single estimate
import nothing they do not need. Each check runs in a fresh interpreter, because this
test process has long since imported everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

#: Too slow to import for a command a user runs many times a day (xgboost + sklearn alone
#: take about 2 s here), and not needed to print help or evaluate stored trees. pydantic
#: comes in with Typer 0.29's option coercion, which pyproject.toml keeps out.
HEAVY = ("pandas", "sklearn", "matplotlib", "xgboost", "scipy", "alembic", "dask",
         "pydantic")

#: Runs the CLI in-process, then reports which top-level packages got imported.
_RUNNER = """
import json, sys
from perfpredict.cli.app import app
try:
    app(sys.argv[1:], prog_name="perfpredict")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted({name.split(".")[0] for name in sys.modules})
submodules = sorted(name for name in sys.modules if name.startswith(("perfpredict.", "numpy.")))
dataclasses = sorted(f"{name}.{value.__qualname__}" for name in submodules
                     for value in vars(sys.modules[name]).values()
                     if isinstance(value, type) and value.__module__ == name
                     and "__dataclass_fields__" in vars(value))
print(json.dumps({"exit": code, "loaded": loaded, "submodules": submodules,
                  "dataclasses": dataclasses}), file=sys.stderr)
"""

#: The dataclasses a plain estimate makes at import: its query, its answer, and the series,
#: its context and the model it answers from. Python 3.11 compiles each generated method of a
#: dataclass apart, about a millisecond a class, and an estimate's budget is twice
#: ``import numpy`` (issue 5): its other records are named tuples, made in about a third of
#: that (docs/performance.md, "Start-up").
ESTIMATE_DATACLASSES = {
    "perfpredict.estimate.estimates.Estimate", "perfpredict.estimate.lookup.Query",
    "perfpredict.model.series.Series",
    "perfpredict.overhead.contexts.SeriesContext", "perfpredict.model.runtime.RuntimeModel"}


def _report(*args: str, home: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PERFPREDICT_DB"}
    env["PERFPREDICT_HOME"] = str(home)
    done = subprocess.run([sys.executable, "-c", _RUNNER, *args], capture_output=True,
                          text=True, timeout=120, env=env)
    return dict(json.loads(done.stderr.strip().splitlines()[-1]))


def _imports_of(*args: str, home: Path) -> tuple[int, set[str]]:
    report = _report(*args, home=home)
    return report["exit"], set(report["loaded"])


def test_help_imports_nothing_heavy(tmp_path: Path) -> None:
    code, loaded = _imports_of("--help", home=tmp_path)
    assert code == 0
    assert loaded.isdisjoint({*HEAVY, "sqlalchemy", "numpy"}), loaded & {*HEAVY, "sqlalchemy"}


def test_help_builds_no_ingest_records(tmp_path: Path) -> None:
    """``--help`` names the ingest formats (``perfpredict.ingest.registry``) but makes no
    record: the records' dataclasses, which the registry needs only for its type aliases,
    cost every help about 3 ms to build."""
    report = _report("--help", home=tmp_path)
    assert report["exit"] == 0
    assert "perfpredict.ingest.registry" in report["submodules"]  # the check sees the formats
    assert report["dataclasses"] == [], report["dataclasses"]


@pytest.mark.parametrize("store", ["empty", "absent", "trained", "trained-explain"])
def test_estimate_imports_neither_training_libraries_nor_sqlalchemy(
        tmp_path: Path, store: str) -> None:
    """The bundled predictor answers; an empty SQLite store (schema, no artifact) is read
    through the standard library's sqlite3, and so is a trained one's predictor (its
    document and the asked application's series entries), the store a user estimates
    from every day, which no check held to this before; ``--explain`` adds its chain of
    steps and nothing heavy. Nor does it load the advice (its node selection was
    imported to print an efficiency), the batch of ``--input`` or the fitting of series
    the predictor was not trained with."""
    explain = ["--explain"] if store == "trained-explain" else []
    if store != "absent":
        from perfpredict.store import open_store

        opened = open_store(f"sqlite:///{tmp_path / 'perfpredict.db'}")
        if store.startswith("trained"):
            from perfpredict import artifact
            from perfpredict.estimate import load_predictor
            from perfpredict.store.artifacts import save_artifact
            from tests.conftest import bundled_doc_as_trained

            save_artifact(opened, artifact.seal(bundled_doc_as_trained()))
            assert load_predictor(opened).origin == "the store"  # not the bundled file
        opened.dispose()
    report = _report("estimate", "--app", "bert", "--nodes", "64", "--format", "json",
                     *explain, home=tmp_path)
    loaded = set(report["loaded"])
    assert report["exit"] == 0
    assert "numpy" in loaded  # the check sees what ran: the trees are evaluated
    assert loaded.isdisjoint({*HEAVY, "sqlalchemy"}), loaded & {*HEAVY, "sqlalchemy"}
    assert not [name for name in report["submodules"] if name.startswith("perfpredict.advise")]
    assert not {"perfpredict.estimate.batch", "perfpredict.estimate.untrained",
                "perfpredict.model.fit"} & set(report["submodules"])
    assert ("perfpredict.estimate.explain" in report["submodules"]) == bool(explain)


@pytest.mark.parametrize("extra", [["--io-bytes", "1e12"], ["--nodes", "65536"]],
                         ids=["io-bytes", "beyond-the-machine"])
def test_estimate_reads_the_shipped_catalog_without_sqlalchemy(
        tmp_path: Path, extra: list[str]) -> None:
    """The roofline's bandwidths (``--io-bytes``) and the machine's size (a note beyond
    it) come from the shipped catalog when there is no store: its entries, not the
    store's side of the catalog, which needs SQLAlchemy (it was imported for both,
    about 0.14 s)."""
    args = ["estimate", "--app", "Castro-wdmerger", "--system", "Frontier", "--nodes",
            "1024", "--format", "json", *extra]
    report = _report(*args, home=tmp_path)
    assert report["exit"] == 0
    assert "perfpredict.catalog.entries" in report["submodules"]  # the catalog was read
    assert set(report["loaded"]).isdisjoint({*HEAVY, "sqlalchemy"})


def test_estimate_reads_the_stores_catalog_entry_without_sqlalchemy(tmp_path: Path) -> None:
    """A SQLite store's entry of the machine (here a file-system bandwidth 'systems add'
    gave Frontier) is read through the standard library's sqlite3, as the predictor is:
    the roofline reads it without the store's side of the catalog (SQLAlchemy)."""
    from dataclasses import replace

    from perfpredict.catalog import add_system, bundled_system
    from perfpredict.store import open_store

    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    frontier = bundled_system("Frontier")
    assert frontier is not None
    add_system(store, replace(frontier, fs_bw_bytes_per_s=1e13,
                              sources={**frontier.sources, "fs_bw_bytes_per_s": "Orion"}))
    store.dispose()
    report = _report("--db", url, "estimate", "--app", "Castro-wdmerger", "--system",
                     "Frontier", "--nodes", "1024", "--io-bytes", "1e12", "--format", "json",
                     home=tmp_path)
    assert report["exit"] == 0
    assert "perfpredict.catalog.rows" in report["submodules"]  # the store's entry was read
    assert set(report["loaded"]).isdisjoint({*HEAVY, "sqlalchemy"})


def test_estimate_builds_only_its_own_command(tmp_path: Path) -> None:
    """Commands are built when invoked (``cli/app.py``): the other command modules, and
    the ingest parsers they name, stay unimported."""
    report = _report("estimate", "--app", "bert", "--nodes", "64", "--format", "json",
                     home=tmp_path)
    assert report["exit"] == 0
    cli_modules = {name for name in report["submodules"] if name.startswith("perfpredict.cli.")}
    assert cli_modules == {"perfpredict.cli.app", "perfpredict.cli.estimate_commands",
                           "perfpredict.cli.render"}, cli_modules
    assert not any(name.startswith("perfpredict.ingest") for name in report["submodules"])
    # answering imports nothing of training (issue 15): the model's fit, the trees'
    # trainer, the train and evaluate layers
    training = {"perfpredict.model.fit", "perfpredict.overhead.regressor", "perfpredict.train",
                "perfpredict.evaluate", "perfpredict.distributed"}
    assert "perfpredict.model.runtime" in report["submodules"]
    assert training.isdisjoint(report["submodules"]), training & set(report["submodules"])
    # np.unique and np.nanmedian import numpy.ma on first use: about 12 ms of a 2x budget
    assert "numpy.ma" not in report["submodules"]
    assert "perfpredict.estimate.lookup.Query" in report["dataclasses"]  # the scan sees them
    assert set(report["dataclasses"]) <= ESTIMATE_DATACLASSES, (
        set(report["dataclasses"]) - ESTIMATE_DATACLASSES)
