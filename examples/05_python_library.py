"""perfpredict from Python (a notebook, a workflow script): each command is one call.

    python examples/05_python_library.py

Data: the bundled Castro data set (Castro on Summit and Frontier, BSD-3; 197 runs of two
applications, 35 series) in a throw-away SQLite store. Every call below is the library
function its command calls (the CLI only parses and renders), so what works on the
command line works here, with Python objects instead of tables.

What it prints, and the output to expect:

1. ``ingest_file``: "197 runs stored", and the store's runs as a pandas DataFrame
   (``runs_frame``), counted per application and system.
2. ``train``: the predictor trained on the store ("trained on 197 runs, 34 series can be
   estimated"), saved in the store as ``perfpredict train`` saves it.
3. ``estimate``: Castro's white-dwarf merger (1024^3 base grid) on Frontier at 4,096
   nodes, three doublings beyond its largest measured scale (512 nodes): about 106 s,
   with a 90% interval of about 17-960 s (a planning figure, not a walltime), and the
   notes an estimate carries ("4 series match; using the best measured one",
   "extrapolating 3 doublings beyond the largest measured scale (512 nodes)"); then
   the sweep from 512 to 4,096 nodes in one call (``load_predictor(url).estimate_many``)
   as a pandas DataFrame, one row per node count.
4. ``advise_plan``: the node count to ask for under a 70% efficiency floor (64 nodes,
   about 570 s), its walltime (780 s) and node-hours, and why.
5. ``evaluate``: the store-cut backtest of that application, the hybrid against the best
   single law (about 27% MAPE against Amdahl + log's 30%; the intervals held every run).
6. Bad input raises :class:`perfpredict.errors.BadInputError`, whose message names the
   file and line, as the CLI prints it; nothing is stored from the file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from perfpredict.advise.plan import PlanRequest, advise_plan
from perfpredict.errors import BadInputError
from perfpredict.estimate import Query, estimate, load_predictor
from perfpredict.evaluate import evaluate
from perfpredict.ingest import ingest_file
from perfpredict.store import open_store
from perfpredict.store.queries import runs_frame
from perfpredict.train import train

CASTRO = Path(__file__).resolve().parents[1] / "datasets" / "castro_scaling" / "runs.csv.gz"
WDMERGER = dict(app="Castro-wdmerger", system="Frontier",
                problem_size="1024^3 base+AMR (stop_time=0.2)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PERFPREDICT_HOME"] = tmp  # never the user's own store or settings
        url = f"sqlite:///{Path(tmp) / 'castro.db'}"
        store = open_store(url)
        try:
            report = ingest_file(store, "csv", CASTRO)
            print(f"1. {report.n_stored} runs stored")
            runs = runs_frame(store)
            print(runs.groupby(["app", "system"]).size().to_string(), "\n")

            trained = train(store)
            print(f"2. trained on {trained.n_runs} runs, {trained.n_series} series can be "
                  "estimated\n")

            est = estimate(url, Query(nodes=4096, **WDMERGER))
            print(f"3. {est.series} at {est.nodes:g} nodes: {est.predicted_runtime_s:.0f} s "
                  f"(90% interval {est.lower_runtime_s:.0f}-{est.upper_runtime_s:.0f} s)")
            for note in est.notes:
                print(f"   note: {note}")
            sweep = load_predictor(url).estimate_many(
                Query(nodes=n, **WDMERGER) for n in (512, 1024, 2048, 4096))
            frame = pd.DataFrame([e.as_dict() for e in sweep])
            print(frame[["nodes", "predicted_runtime_s", "lower_runtime_s", "upper_runtime_s",
                         "efficiency"]].round(2).to_string(index=False))

            plan = advise_plan(store, PlanRequest(min_efficiency=0.7, **WDMERGER))
            chosen = plan.recommended
            print(f"\n4. ask for {chosen.nodes} nodes: {chosen.predicted_runtime_s:.0f} s "
                  f"predicted, walltime {plan.walltime_s:.0f} s, "
                  f"{chosen.node_hours_p90:.1f} node-hours at P90 ({plan.reason})\n")

            table = evaluate(store, "extrapolate", app=[WDMERGER["app"]])
            pooled = {r["method"]: r for r in table if r["group"] == "all"}
            best = min((r for m, r in pooled.items() if m != "hybrid"),
                       key=lambda r: r["mape_pct"])
            print(f"5. extrapolating to the upper half of each series: hybrid "
                  f"{pooled['hybrid']['mape_pct']:.1f}% MAPE, coverage "
                  f"{pooled['hybrid']['coverage']:.2f}; best single law {best['method']} "
                  f"{best['mape_pct']:.1f}%\n")

            bad = Path(tmp) / "bad.csv"
            bad.write_text("app,system,nodes,runtime_s\nCastro-wdmerger,Frontier,2,-5\n")
            try:
                ingest_file(store, "csv", bad)
            except BadInputError as exc:
                print(f"6. refused: {exc}")
            print(f"   still {len(runs_frame(store))} runs in the store")
        finally:
            store.dispose()


if __name__ == "__main__":
    main()
