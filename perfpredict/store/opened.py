"""An open run store (:class:`Store`): what :func:`perfpredict.store.database.open_store`
returns and every function that reads or writes runs takes (:mod:`perfpredict.store.handle`).

A module of its own, importing neither SQLAlchemy nor the module that opens stores, so
that an estimate can tell a Store from a URL for free and the opener and the functions
that take a store each import it without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from perfpredict.config import redact_url

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


class Store:
    """An open run store. ``url`` is kept for messages (use :attr:`safe_url` to print).
    ``read_only``: the user may read but not write it (a shared store: a SQLite file they
    cannot write, a PostgreSQL role that may not write all of it); reads never try to
    write to it.
    ``upgraded_from``: the schema revision an older store was migrated from on opening
    (``open_store(upgrade=True)``), None when it was not."""

    def __init__(self, engine: Engine, url: str, read_only: bool = False,
                 upgraded_from: str | None = None) -> None:
        self.engine = engine
        self.url = url
        self.read_only = read_only
        self.upgraded_from = upgraded_from

    @property
    def safe_url(self) -> str:
        return redact_url(self.url)

    def __repr__(self) -> str:
        # what a notebook shows of ``store`` (and SQLAlchemy's own Engine repr hides): the
        # URL without its password, which the generated repr printed in full
        return (f"Store(url={self.safe_url!r}, read_only={self.read_only}, "
                f"upgraded_from={self.upgraded_from!r})")

    def dispose(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        """``with open_store(url) as store:`` disposes of the engine on the way out."""
        self.dispose()
