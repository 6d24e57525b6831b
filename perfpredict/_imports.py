"""Deferred imports of optional and heavy dependencies.

Heavy libraries (pandas, scikit-learn, xgboost, matplotlib, darshan, dask) are imported
inside the functions that need them, so that ``perfpredict --help`` and a single estimate
stay fast. Optional extras go through :func:`require`, which turns a missing package into
an actionable message instead of a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

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
