"""The one rule by which every public function takes a store (:class:`Store`): open, or
named by its URL or a SQLite file's path, as ``--db`` names it.

A library caller holds whichever it has, and the functions took either one or the
other: ``train(url)`` failed with an AttributeError, ``estimate(store, ...)`` said it
wanted a URL. Now each takes both (:func:`takes_store`, :func:`store_url_of`); a store
named must be there, as one ``--db`` names must, but for the ingest calls
(:func:`fills_store`), which create it as ``perfpredict ingest`` does.
Importable without SQLAlchemy, so that an estimate, which reads a SQLite store through
``sqlite3``, can tell a Store from a URL for free.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeAlias, TypeVar

from perfpredict.config import store_url
from perfpredict.store.lost import lost_connection
from perfpredict.store.opened import Store

#: What a public function takes as its store: an open one, a URL, or a SQLite file's path.
StoreLike: TypeAlias = Store | str | os.PathLike[str]

P = ParamSpec("P")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


def store_url_of(store: StoreLike) -> str:
    """The URL of ``store``: an open Store's own, else the URL its name gives
    (:func:`perfpredict.config.store_url`, which refuses anything else in one line)."""
    return store.url if isinstance(store, Store) else store_url(store)


class TakingStore(Protocol[P, R_co]):
    """What :func:`takes_store` makes of a function: its parameters, the first (``store``)
    taking a store open or named, by position or by name. Typed as ``Callable[Concatenate[
    StoreLike, P], R]`` it was positional-only to mypy, so a user's ``advise_plan(store=s,
    request=r)``, as the user guide writes it and as it runs, failed ``mypy`` with
    'Unexpected keyword argument "store"'."""

    def __call__(self, store: StoreLike, *args: P.args, **kwargs: P.kwargs) -> R_co: ...


@contextmanager
def opened(store: StoreLike, *, create: bool = False) -> Iterator[Store]:
    """``store`` itself when it is open; else the store it names, opened and disposed of
    on the way out (the caller's own Store is the caller's to dispose of).

    A store named that is not there is created only with ``create`` (the calls that fill
    one, as ``perfpredict ingest`` creates the store ``--db`` names); else it is "no
    store at ...", as for every other command. ``runs_frame("runs.dbb")`` created an
    empty store and returned no runs, and ``train`` or ``evaluate`` said that the store
    held none, where ``estimate`` said there was no such store."""
    if isinstance(store, Store):
        yield store
        return
    from perfpredict.store.database import open_store

    with open_store(store, create=create) as named:
        yield named


def takes_store(function: Callable[Concatenate[Store, P], R]) -> TakingStore[P, R]:
    """``function(store, ...)``, written for an open Store, taking a URL or a SQLite
    file's path as well (:func:`opened`): the store named must be there."""
    return _taking_store(function, create=False)


def fills_store(function: Callable[Concatenate[Store, P], R]) -> TakingStore[P, R]:
    """:func:`takes_store` for a call that fills a store (ingest): a store named that is
    not there is created, as ``perfpredict ingest`` creates it."""
    return _taking_store(function, create=True)


def _taking_store(function: Callable[Concatenate[Store, P], R], *,
                  create: bool) -> TakingStore[P, R]:
    """``function`` taking a store open or named (:func:`opened` with ``create``). A
    generator keeps the store it opened open until it is exhausted or closed."""
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def generate(*args: Any, **kwargs: Any) -> Any:
            store, rest = _store_given(function, args, kwargs)
            with opened(store, create=create) as open_one:
                yield from function(open_one, *rest, **kwargs)

        return generate

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> R:
        store, rest = _store_given(function, args, kwargs)
        with opened(store, create=create) as open_one:
            try:
                return function(open_one, *rest, **kwargs)
            except Exception as exc:
                lost = lost_connection(open_one, exc)
                if lost is None:
                    raise
                raise lost from exc

    return call


def _store_given(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 ) -> tuple[StoreLike, tuple[Any, ...]]:
    """The store ``function`` was given, first or by its parameter's name, and the
    other positional arguments. ``help()`` shows the parameter (``advise_plan(store,
    request)``), and ``advise_plan(store=s, request=r)`` was "missing 1 required
    positional argument: 'store'", the store given."""
    if args:
        return args[0], args[1:]
    name = next(iter(inspect.signature(function).parameters))
    if name not in kwargs:
        raise TypeError(f"{function.__name__}() missing its first argument, {name!r}: a "
                        "store open (perfpredict.store.open_store), its URL or a SQLite "
                        "file's path")
    return kwargs.pop(name), ()
