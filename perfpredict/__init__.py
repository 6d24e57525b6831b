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
- ``perfpredict.advise.walltime.advise_walltime(store, "jobs.csv")``:
  ``perfpredict advise walltime``
- ``perfpredict.evaluate.evaluate(store, "extrapolate")``: ``perfpredict evaluate``
- ``perfpredict.datasets.ingest(store, "castro_scaling")``: the bundled data sets

Every error derives from ``perfpredict.errors.PerfPredictError``; bad input is a
``perfpredict.errors.BadInputError`` naming the file and line.
"""

__version__ = "0.1.0"
