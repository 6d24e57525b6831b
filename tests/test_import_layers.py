"""The library's layers import downward only, and no modules import one another in a
circle (issue 15): model <- estimate <- advise <- report. Read from the source, so every
import counts: those inside functions, and those for type checking only (a type that
two modules each need of the other says they are one concern, or that the type belongs
lower down)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "perfpredict"
#: Each layer and what it must not import (perfpredict.X prefixes).
FORBIDDEN = {
    "perfpredict.model": ("perfpredict.estimate", "perfpredict.advise", "perfpredict.report",
                          "perfpredict.store", "perfpredict.train", "perfpredict.cli"),
    "perfpredict.estimate": ("perfpredict.advise", "perfpredict.report", "perfpredict.train",
                             "perfpredict.cli"),
    "perfpredict.advise": ("perfpredict.report", "perfpredict.cli"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The perfpredict modules ``path`` imports (at any depth)."""
    found: set[str] = set()

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {name for name in found if name.startswith("perfpredict.")}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")
               if "migrations" not in p.parts}
    return {name: {m for m in _imports(path) if m in modules and m != name}
            for name, path in modules.items()}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(graph: dict[str, set[str]], layer: str) -> None:
    wrong = {f"{module} imports {target}"
             for module, targets in graph.items()
             if module == layer or module.startswith(layer + ".")
             for target in targets if target.startswith(FORBIDDEN[layer])}
    assert not wrong, sorted(wrong)


def _circles(graph: dict[str, set[str]], layers: tuple[str, ...]) -> list[str]:
    """The import circles among the modules under ``layers`` (perfpredict.X prefixes)."""
    local = {m: {t for t in ts if t.startswith(layers)} for m, ts in graph.items()
             if m.startswith(layers)}
    circles = []

    def walk(module: str, path: list[str]) -> None:
        for target in sorted(local.get(module, ())):
            if target in path:
                circles.append(" -> ".join([*path[path.index(target):], target]))
            elif len(path) < 12:
                walk(target, [*path, target])

    for module in sorted(local):
        walk(module, [module])
    return circles


def test_no_modules_of_the_answering_layers_import_one_another_in_a_circle(
        graph: dict[str, set[str]]) -> None:
    circles = _circles(graph, ("perfpredict.model", "perfpredict.estimate", "perfpredict.advise"))
    assert not circles, circles[:5]


def test_the_ingest_records_and_field_readers_import_one_another_in_no_circle(
        graph: dict[str, set[str]]) -> None:
    """records validated its options with readers of fields, which imports records for
    them, by an import inside a function; the options' own checks are theirs now."""
    circles = _circles(graph, ("perfpredict.ingest.records", "perfpredict.ingest.fields"))
    assert not circles, circles[:5]
