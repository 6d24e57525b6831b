"""The run store: schema, migrations and the queries the rest of perfpredict uses.

``Store``, ``StoreLike`` and ``open_store`` are resolved on first use (PEP 562) rather
than imported here: an estimate reads its artifact through
:mod:`perfpredict.store.artifacts`, and importing that submodule runs this file, which
must not pull in SQLAlchemy (it costs about as long to import as numpy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from perfpredict._imports import listing

if TYPE_CHECKING:
    from perfpredict.store.database import open_store
    from perfpredict.store.handle import StoreLike
    from perfpredict.store.opened import Store

_LAZY = {"Store": "perfpredict.store.opened", "StoreLike": "perfpredict.store.handle",
         "open_store": "perfpredict.store.database"}
__all__ = ["Store", "StoreLike", "open_store"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__dir__ = listing(globals(), __all__)
