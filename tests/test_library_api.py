"""The library as a notebook meets it: what ``dir()`` and tab completion list."""

from __future__ import annotations

import importlib

import pytest

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
