"""Deferred imports of optional and heavy dependencies.

Heavy libraries (pandas, scikit-learn, xgboost, matplotlib, darshan, dask) are imported
inside the functions that need them, so that ``perfpredict --help`` and a single estimate
stay fast. Optional extras go through :func:`require`, which turns a missing package into
an actionable message instead of a traceback.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from perfpredict.errors import MissingDependencyError


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or fail with the pip command that installs the ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"this feature needs the '{module}' package ({exc}); "
            f"install it with: pip install 'perfpredict[{extra}]'"
        ) from exc


def lazy_attribute(package: str, name: str, names: Mapping[str, str],
                   modules: Iterable[str] = ()) -> Any:
    """A package's ``__getattr__`` (PEP 562): ``name`` from the module ``names`` maps it
    to, or the submodule ``package.name`` when ``modules`` holds it, each imported then.
    The submodules are reachable by their dotted names after ``import perfpredict``
    alone, as the package docstring writes each call (``perfpredict.store.queries.
    runs_frame``), which was "module 'perfpredict.store' has no attribute 'queries'"
    unless a notebook had imported the submodule itself."""
    if name in names:
        return getattr(importlib.import_module(names[name]), name)
    if name in modules:
        return importlib.import_module(f"{package}.{name}")
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
