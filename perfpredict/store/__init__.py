"""The run store: schema, migrations and the queries the rest of perfpredict uses.

``Store`` and ``open_store`` are resolved on first use (PEP 562) rather than imported
here: an estimate reads its artifact through :mod:`perfpredict.store.artifacts`, and
importing that submodule runs this file, which must not pull in SQLAlchemy (it costs
about as long to import as numpy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from perfpredict.store.database import Store, open_store

__all__ = ["Store", "open_store"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from perfpredict.store import database

        return getattr(database, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
