"""The store's series that a predictor was not trained with, fitted at the estimate: a
code's runs ingested after ``train`` (or any of a store the shipped predictor answers for)
answer at once, where none of the predictor's series does
(:meth:`perfpredict.estimate.estimates.LoadedPredictor.find_series`).

Imported on that path only: it reads the application's runs through SQLAlchemy and
pandas, which an estimate of a trained series never imports.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfpredict.errors import NotFoundError
from perfpredict.estimate.lookup import SeriesEntries
from perfpredict.model.entry import SeriesEntry
from perfpredict.names import resolve_name


@dataclass(frozen=True)
class StoreSeries:
    """An application's series in a store that its predictor was not trained with, fitted
    as ``train`` fits them (:meth:`SeriesEntry.each_of`): runs ingested after ``train``,
    or any of a store answered by the shipped predictor. Where there are none, why the
    store's runs of it give none (``why_none``; None: the store holds no runs of it, and
    ``stored_apps`` names those it holds, which a mistyped name may have meant)."""

    entries: list[SeriesEntry]
    why_none: str | None = None
    stored_apps: tuple[str, ...] = ()

    def of_app(self, app: str) -> list[SeriesEntry]:
        return [e for e in self.entries if e.key.app.casefold() == app.casefold()]

    def holds(self, entry: SeriesEntry) -> bool:
        return any(entry is mine for mine in self.entries)

    def beside(self, trained: SeriesEntries) -> WithStoreSeries:
        """These series and ``trained``'s, looked up as one."""
        return WithStoreSeries(trained, self)


def store_series(db_url: str, app: str, trained: SeriesEntries) -> StoreSeries:
    """The series of two or more scales that the store at ``db_url`` holds of ``app``
    (found as every command finds a name) and ``trained`` has not, fitted now; none where
    there is no store (asking must not create one)."""
    from perfpredict.model.series import build_series, why_no_series
    from perfpredict.store import open_store
    from perfpredict.store.queries import runs_frame, stored_apps

    try:
        store = open_store(db_url, create=False)
    except NotFoundError:
        return StoreSeries([])
    with store:
        names = stored_apps(store)
        stored = resolve_name(app, names, "application")
        if stored is None:
            return StoreSeries([], stored_apps=tuple(names))
        frame = runs_frame(store, app=stored)
    known = {e.key for e in trained.of_app(stored)}
    series = [s for s in build_series(frame) if s.key not in known]
    entries = SeriesEntry.each_of(series)
    return StoreSeries(entries, None if entries or known else why_no_series(frame))


class WithStoreSeries:
    """A predictor's trained entries and the store's series it was not trained with
    (:class:`StoreSeries`), looked up as one."""

    def __init__(self, trained: SeriesEntries, untrained: StoreSeries) -> None:
        self.trained, self.untrained = trained, untrained

    def of_app(self, app: str) -> list[SeriesEntry]:
        return self.trained.of_app(app) + self.untrained.of_app(app)

    def apps(self) -> list[str]:
        return sorted({*self.trained.apps(), *(e.key.app for e in self.untrained.entries)})

    @property
    def n_applications(self) -> int:
        return len({app.casefold() for app in self.apps()})
