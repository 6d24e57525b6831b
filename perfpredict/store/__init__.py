"""The run store: schema, migrations and the queries the rest of perfpredict uses.

``Store``, ``StoreLike`` and ``open_store`` are resolved on first use (PEP 562) rather
than imported here: an estimate reads its artifact through
:mod:`perfpredict.store.artifacts`, and importing that submodule runs this file, which
must not pull in SQLAlchemy (it costs about as long to import as numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict._imports import lazy_attribute
from perfpredict._listing import listing

if TYPE_CHECKING:
    from perfpredict.store import batches as batches
    from perfpredict.store import queries as queries
    from perfpredict.store.database import open_store
    from perfpredict.store.handle import StoreLike
    from perfpredict.store.opened import Store

_LAZY = {"Store": "perfpredict.store.opened", "StoreLike": "perfpredict.store.handle",
         "open_store": "perfpredict.store.database"}
__all__ = ["Store", "StoreLike", "open_store"]


#: The submodules the user guide's calls live in (``perfpredict.store.queries.runs_frame``).
_MODULES = ("batches", "queries")


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, name, _LAZY, _MODULES)


__dir__ = listing(globals(), [*__all__, *_MODULES])
