"""The wheel ships every package of the library: setuptools' ``packages`` list in
pyproject.toml is explicit (the CLI, data sets and models are mapped from other folders),
so a new subpackage left off it installs in an editable checkout and is missing from a
wheel."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def test_every_library_package_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())
                 ["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(REPO).parts)
             for init in (REPO / "perfpredict").rglob("__init__.py")}
    assert found - listed == set()


def test_the_wheel_marks_the_library_as_typed() -> None:
    """Without a ``py.typed`` marker (PEP 561) mypy treats an installed perfpredict as
    untyped: a user's script that imports ``Query`` or ``estimate`` failed ``mypy`` with
    "module is installed, but missing library stubs or py.typed marker", and with
    ``--ignore-missing-imports`` every answer was ``Any``, so ``x: str =
    estimate(...).predicted_runtime_s`` passed."""
    assert (REPO / "perfpredict" / "py.typed").is_file()
    package_data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    assert "py.typed" in package_data["perfpredict"]
