"""The wheel ships every package of the library: setuptools' ``packages`` list in
pyproject.toml is explicit (the CLI, data sets and models are mapped from other folders),
so a new subpackage left off it installs in an editable checkout and is missing from a
wheel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def _as_installed(root: Path) -> Path:
    """The package laid out under ``root`` as the wheel installs it (pyproject's
    ``package-dir`` maps ``perfpredict.datasets`` and others from folders of their own),
    by symbolic links: an editable install is found by an import hook, which mypy does
    not follow."""
    mapped = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    package = root / "perfpredict"
    package.mkdir(parents=True)
    for child in (REPO / mapped.pop("perfpredict")).iterdir():
        (package / child.name).symlink_to(child)
    for name, folder in mapped.items():
        (package / name.rpartition(".")[2]).symlink_to(REPO / folder)
    return root


@pytest.mark.slow
def test_a_users_typed_script_passes_mypy_with_the_store_given_by_name(tmp_path: Path) -> None:
    """Every call that takes a store takes it by name as well (``advise_plan(store=s,
    request=r)``, as the user guide writes it), but mypy knew it as positional-only: a
    user's script doing so failed ``mypy`` with 'Unexpected keyword argument "store"'
    for ``train``, ``advise_plan``, ``evaluate``, ``ingest_file`` and eleven more. The
    script (tests/typed_library_use.py) is checked as a user's is, the package installed
    (its own errors not the user's: ``--follow-imports=silent``); two lines added to it
    that are wrong must still fail."""
    script = tmp_path / "script.py"
    script.write_text((REPO / "tests" / "typed_library_use.py").read_text() + (
        'wrong_type: str = train(store=store).n_series\n'
        'misspelt = train(stor=store)\n'))
    n_lines = len(script.read_text().splitlines())
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
         "--no-incremental", "--no-error-summary", "--hide-error-context",
         "--no-pretty", "--cache-dir", str(tmp_path / "cache"), script.name],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MYPYPATH": str(_as_installed(tmp_path / "site"))})
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert [line.split(":")[1] for line in errors] == [str(n_lines - 1), str(n_lines)], (
        done.stdout + done.stderr)
