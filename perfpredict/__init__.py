"""perfpredict: predict HPC job runtimes at unseen scales with calibrated uncertainty.

The library does what each command does, one call each, with Python objects in place of
the tables (the user guide's "From Python" lists every call). This package imports none
of them, so that ``import perfpredict`` stays cheap; import each from its module:

- ``perfpredict.store.open_store("sqlite:///runs.db")``: a store, a SQLite file or a
  PostgreSQL URL; every call below takes it open, or named by its URL or path
- ``perfpredict.ingest.ingest_file(store, "csv", path)``: ``perfpredict ingest``
- ``perfpredict.store.queries.runs_frame(store)``: the runs, a pandas DataFrame
- ``perfpredict.train.train(store)``: ``perfpredict train``
- ``perfpredict.estimate.estimate(store, Query(app="bert", nodes=64))``, and for many
  queries ``perfpredict.estimate.load_predictor(store).estimate_many([...])``:
  ``perfpredict estimate``
- ``perfpredict.advise.plan.advise_plan(store, PlanRequest(app="bert"))``:
  ``perfpredict advise``
- ``perfpredict.report.plots.save_scaling_plot(plan, "scaling.png")``, ``plan`` what
  ``advise_plan`` returns: ``perfpredict advise --plot``
- ``perfpredict.advise.walltime.advise_walltime(store, "jobs.csv")``:
  ``perfpredict advise walltime``
- ``perfpredict.evaluate.evaluate(store, "extrapolate")``: ``perfpredict evaluate``
- ``perfpredict.datasets.ingest(store, "castro_scaling")``: the bundled data sets

Every error derives from ``perfpredict.errors.PerfPredictError``; bad input is a
``perfpredict.errors.BadInputError`` naming the file and line.

After ``import perfpredict`` alone, each of those modules is reached by its dotted name
(``perfpredict.store.open_store``), imported then.
"""

from __future__ import annotations

from types import ModuleType

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3 ms); mypy reads it so
if TYPE_CHECKING:
    from perfpredict import advise as advise
    from perfpredict import catalog as catalog
    from perfpredict import datasets as datasets  # type: ignore[attr-defined]
    from perfpredict import errors as errors
    from perfpredict import estimate as estimate
    from perfpredict import evaluate as evaluate
    from perfpredict import ingest as ingest
    from perfpredict import report as report
    from perfpredict import store as store
    from perfpredict import train as train

__version__ = "0.1.0"

#: The modules the calls above live in. ``perfpredict.store.open_store(...)``, as the
#: docstring writes it, was "module 'perfpredict' has no attribute 'store'" in a notebook
#: that had run ``import perfpredict`` only; importing them all here would make every
#: ``perfpredict --help`` and estimate pay for pandas and SQLAlchemy, so each is imported
#: when first named (PEP 562).
_MODULES = ("advise", "catalog", "datasets", "errors", "estimate", "evaluate", "ingest",
            "report", "store", "train")


if not TYPE_CHECKING:  # hidden from mypy, which knows the modules by their imports above
    # and so still reports a misspelt name (``perfpredict.stor``)
    def __getattr__(name: str) -> ModuleType:
        from perfpredict._imports import lazy_attribute  # not at import: it imports typing

        return lazy_attribute(__name__, name, {}, _MODULES)


def __dir__() -> list[str]:
    from perfpredict._listing import listing

    return listing(globals(), _MODULES)()
