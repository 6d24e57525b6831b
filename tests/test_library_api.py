"""The library as a notebook meets it: what help(), dir() and tab completion show, and
the user guide's Python as it runs."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import perfpredict
from tests.conftest import REPO

#: The packages that load their names on first use (PEP 562 ``__getattr__``), found in
#: the source so that a new one is held to the same.
LAZY_PACKAGES = sorted(
    ".".join(path.relative_to(REPO).parent.parts)
    for path in (REPO / "perfpredict").rglob("__init__.py")
    if "\ndef __getattr__(" in path.read_text(encoding="utf-8"))


def test_lazy_packages_are_found() -> None:
    assert {"perfpredict.estimate", "perfpredict.store", "perfpredict.ingest",
            "perfpredict.catalog"} <= set(LAZY_PACKAGES)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_dir_of_a_lazy_package_lists_its_public_names(name: str) -> None:
    """``dir(perfpredict.estimate)``, which a notebook's tab completion lists, named
    ``importlib`` and ``TYPE_CHECKING`` but none of ``estimate``, ``Query`` or
    ``load_predictor``, the names loaded only when first asked for."""
    package = importlib.import_module(name)
    listed = dir(package)
    assert set(package.__all__) <= set(listed)
    assert listed == sorted(listed)
    for public in package.__all__:
        assert getattr(package, public) is not None


@pytest.mark.parametrize("name", ["perfpredict", "perfpredict.advise.walltime",
                                  *(f"perfpredict.{m}" for m in perfpredict._MODULES)])
def test_dir_of_a_public_module_lists_its_public_api_only(name: str) -> None:
    """``dir(perfpredict.datasets)``, which a notebook's tab completion lists, named
    ``Path``, ``annotations``, ``fills_store`` and ``given_names`` beside ``ingest`` and
    ``load``; ``dir(perfpredict.evaluate)`` ``np``, ``functools`` and ``takes_store``,
    and ``dir(perfpredict.store)`` its helper modules ``handle`` and ``lost``. Now a
    name it lists is one of its ``__all__``, or a submodule it names (the package's
    dunders aside)."""
    package = importlib.import_module(name)
    public = set(getattr(package, "__all__", ()))
    listed = [n for n in dir(package) if not (n.startswith("__") and n.endswith("__"))]
    assert public <= set(listed)
    for listed_name in set(listed) - public:
        value = getattr(package, listed_name)
        assert isinstance(value, ModuleType) and value.__name__ == f"{name}.{listed_name}", (
            listed_name)


def _names_a_type_checker_sees(path: Path) -> set[str]:
    """The names a module binds at its top level, with those imported under ``if
    TYPE_CHECKING:``, which is all a type checker knows of a name loaded on first use."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            body += node.body
    names: set[str] = set()
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_a_lazy_packages_names_are_typed(name: str) -> None:
    """A name loaded on first use is typed only if the package also imports it for type
    checking: ``perfpredict.ingest`` did not, so mypy took ``from perfpredict.ingest
    import ingest_file`` as ``Any`` (its ``__getattr__``'s type) and passed ``s: str =
    ingest_file(...).n_stored``."""
    package = importlib.import_module(name)
    untyped = set(package.__all__) - _names_a_type_checker_sees(Path(package.__file__ or ""))
    assert not untyped, sorted(untyped)


def test_the_user_guides_frame_of_estimates_runs_as_quoted() -> None:
    """The user guide's "As pandas frames" block, run as it stands on the bundled
    predictor (``store = None``): how to get many estimates as a DataFrame, which the
    guide had not said, from a frame of queries with an empty cell."""
    page = (REPO / "docs" / "user-guide.md").read_text(encoding="utf-8")
    section = page.split("### As pandas frames", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {"store": None}
    exec(block, namespace)  # noqa: S102 - the documented code itself
    frame = namespace["frame"]
    assert list(frame["nodes"]) == [16, 64, 256]  # type: ignore[index]
    assert (frame["lower_runtime_s"] < frame["predicted_runtime_s"]).all()  # type: ignore[index]
    for call in ("candidate_rows()", "records()", "as_dict()"):
        assert call in section.split("\n## ", 1)[0]


def test_help_of_the_package_names_the_calls_where_they_are() -> None:
    """``help(perfpredict)`` said one sentence and ``dir(perfpredict)`` listed nothing,
    so a notebook had to find the calls in the docs: the docstring maps each command to
    the call that does it, each name resolving where it says."""
    doc = perfpredict.__doc__ or ""
    named = re.findall(r"``(perfpredict(?:\.\w+)+)\(", doc)
    assert len(named) >= 9
    for dotted in named:
        module, _, name = dotted.rpartition(".")
        if name == "estimate_many":  # a method of what load_predictor returns
            continue
        assert callable(getattr(importlib.import_module(module), name)), dotted
    for command in ("ingest", "train", "estimate", "advise", "evaluate"):
        assert f"``perfpredict {command}``" in doc


def test_the_package_reaches_each_call_by_its_dotted_name_when_named() -> None:
    """``import perfpredict`` then ``perfpredict.store.open_store(...)``, as
    ``help(perfpredict)`` writes each call, was "module 'perfpredict' has no attribute
    'store'" (and ``perfpredict.advise.plan``, ``perfpredict.store.queries`` likewise
    until imported by hand). Each module is imported when first named, so ``import
    perfpredict`` still imports nothing else. Run in a fresh interpreter: this one has
    imported them all."""
    script = """
import re, sys, perfpredict
print(sorted(m for m in sys.modules if m.startswith(("perfpredict", "numpy"))))
for dotted in re.findall(r"``perfpredict((?:[.]\\w+)+)[(]", perfpredict.__doc__):
    value = perfpredict
    for part in dotted.strip(".").split("."):
        if part != "estimate_many":  # a method of what load_predictor returns
            value = getattr(value, part)
    print(dotted, callable(value))
print({"store", "estimate", "advise"} <= set(dir(perfpredict)))
try:
    perfpredict.stor
except AttributeError as exc:
    print(exc)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr[-2000:]
    assert lines[0] == "['perfpredict']"
    assert len(lines) >= 13 and all(line.endswith(" True") for line in lines[1:-2]), lines
    assert {".store.queries.runs_frame True", ".advise.plan.advise_plan True"} <= set(lines)
    assert lines[-2:] == ["True", "module 'perfpredict' has no attribute 'stor'"]


@pytest.mark.parametrize(("call", "names"), [
    ("perfpredict.estimate.Query",
     ["app", "nodes", "system", "problem_size", "variant", "ranks_per_node",
      "threads_per_rank", "io_bytes", "net_bytes", "flops", "mem_bytes"]),
    ("perfpredict.estimate.estimate", ["store", "query", "confidence", "explain"]),
    ("perfpredict.ingest.ingest_file",
     ["fmt", "path", "options", "n_stored", "n_rejected", "already_ingested"]),
    ("perfpredict.advise.plan.advise_plan",
     ["store", "request", "recommended", "walltime_s", "node_hours_p90", "candidate_rows()"]),
])
def test_help_of_a_main_call_names_what_it_takes_and_returns(call: str,
                                                             names: list[str]) -> None:
    """``help(Query)`` said "What a user asks" and nothing of its fields or units;
    ``help(advise_plan)`` sent the reader to the module docstring for what it returns,
    ``help(ingest_file)`` there for the formats, the options and what it returns."""
    module, _, name = call.rpartition(".")
    doc = getattr(importlib.import_module(module), name).__doc__ or ""
    for named in names:
        assert f"``{named}``" in doc, named


def test_a_notebook_shows_an_ingest_and_a_training_report_in_one_line(
        tmp_path: Path, timed_runs_csv: Path) -> None:
    """``ingest_file`` and ``datasets.ingest`` answered with the dataclass's repr of
    twenty fields, most of them zero, and ``train`` with every field of its report
    (900 characters, a checksum among them): now what was stored and learned, and the
    warnings, which a notebook must not scroll past; ``as_dict()`` and the fields keep
    the rest."""
    from perfpredict.ingest import IngestOptions, ingest_file
    from perfpredict.train import TrainReport

    bad = tmp_path / "runs.csv"
    bad.write_text(timed_runs_csv.read_text() + "solver0,Frontier,64,abc\n")
    report = ingest_file(tmp_path / "store.db", "csv", bad, IngestOptions(on_error="skip"))
    assert repr(report) == (
        f"BatchReport(path={str(bad)!r}, format='csv', n_records=60, n_stored=60, "
        f"n_duplicates=0, n_rejected=1, already_ingested=False, warnings=[])")
    assert report.first_rejects  # not shown, still there
    trained = TrainReport(n_runs=441, n_series=59, n_series_learned_from=59,
                          metrics={"nested_mean_abs_log_error_hybrid": 0.1008509493045387},
                          artifact_sha256="cf7f985f" * 8, borrowed_datasets=["relearn"])
    assert repr(trained) == (
        "TrainReport(n_runs=441, n_series=59, n_series_learned_from=59, "
        "metrics={'nested_mean_abs_log_error_hybrid': 0.101}, walltime_jobs=0, "
        "borrowed_datasets=['relearn'])")
    assert trained.as_dict()["artifact_sha256"] == "cf7f985f" * 8
