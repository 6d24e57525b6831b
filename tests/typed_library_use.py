"""A user's script as the user guide's "From Python" writes it, type-checked by
tests/test_library_api.py (``mypy --strict``), never run: each call that takes a store,
given it by position and by name (``store=``), and answers used as their types."""

from __future__ import annotations

from perfpredict import datasets
from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.advise.walltime import advise_walltime, fit_walltime_advisor
from perfpredict.estimate import Query, estimate, estimate_batch, estimate_batches, load_predictor
from perfpredict.evaluate import evaluate
from perfpredict.ingest import ingest_file, ingest_paths
from perfpredict.store import open_store
from perfpredict.store.batches import delete_batches, list_batches, list_deleted_batches
from perfpredict.store.queries import export_runs, iter_rejects, iter_runs, runs_frame
from perfpredict.train import train

store = open_store("sqlite:///runs.db")
stored: int = ingest_file(store, "csv", "runs.csv").n_stored
stored = ingest_file(store="runs.db", fmt="csv", path="runs.csv").n_stored
stored = ingest_paths(store, "csv", ["a.csv", "b.csv"])[0].n_stored
stored = ingest_paths(store=store, fmt="csv", paths="a.csv")[0].n_stored
stored = datasets.ingest(store, "castro_scaling")[0].n_stored
stored = datasets.ingest(store=store, names=["castro_scaling"])[0].n_stored

runs = runs_frame(store)
runs = runs_frame(store=store, app="bert")
rejects = list(iter_rejects(store)) + list(iter_rejects(store=store, path="a.csv"))
batches = list_batches(store) + list_batches(store=store)
deleted = delete_batches(store, [2]), delete_batches(store=store, batch_ids=2, dry_run=True)
gone = list_deleted_batches(store) + list_deleted_batches(store=store)
rows = list(iter_runs(store, batch=2)) + list(iter_runs(store=store, batch=2))
exported = export_runs(store, batch=2), export_runs(store=store, batch=2)

series: int = train(store).n_series
series = train(store=store, app=["LULESH"]).n_series
advisors = fit_walltime_advisor(store), fit_walltime_advisor(store=store, app="bert")

runtime_s: float = estimate(store, Query(app="bert", nodes=64)).predicted_runtime_s
runtime_s = estimate(store=store, query=Query(app="bert", nodes=64)).predicted_runtime_s
runtime_s = load_predictor(store).estimate(Query(app="bert", nodes=64)).predicted_runtime_s
runtime_s = load_predictor(store=store).estimate(Query(app="bert", nodes=64)).upper_runtime_s
answers = list(estimate_batch(store, "queries.csv").records())
answers = list(estimate_batch(store=store, path="queries.csv").records())
answers = list(estimate_batches(store=store, path="queries.csv").records())

nodes: int = advise_plan(store, PlanRequest(app="bert")).recommended.nodes
nodes = advise_plan(store=store, request=PlanRequest(app="bert")).recommended.nodes
walltimes = advise_walltime(store, "jobs.csv").rows
walltimes = advise_walltime(store=store, path="jobs.csv", kill_risk=0.05).rows

table = evaluate(store, "extrapolate") + evaluate(store=store, split="extrapolate")
