"""The resource table and scaling figure of an allocation proposal.

    python examples/03_allocation_proposal.py [OUTPUT_DIR]

Data: the bundled predictor; the application is Mask R-CNN training (MLPerf Training
v2.0) on Dell PowerEdge XE8545 nodes (4x A100-SXM-40GB), measured at 1-32 nodes (30 real
runs). The proposal budgets 50 production runs. Runs in a few seconds in a throw-away
PERFPREDICT_HOME; the files go to OUTPUT_DIR (default: a temporary directory, deleted
at the end).

What it writes and prints, and the output to expect:

* proposal.md (``advise --format markdown``): "Requested resources" with one row per run
  class, here "production (recommended) | 50 | 8 | 0.26 | 0.285 | 0-00:19:00 / 00:19:00 |
  2.08 | 2.28 | 104 | 114" (nodes, wallclock per run P50/P90 in hours, walltime request,
  node-hours per run and in total at P50/P90), then "Scaling evidence" in OLCF's shape:
  nodes | time to solution, actual | ideal | predicted [90% interval] | source, from
  5,441 s at 1 node to 431 s at 32 nodes (every node count measured, so the predicted
  column is the measured median with its interval), and footnotes naming the runs and node counts
  every figure rests on and that no charge factor is known for this machine.
* classes.md (``--run-class largest=32x5 --run-class typical=8x40 --run-class
  smallest=2x20 --periods 4 --period-label quarter``): the requested resources as a
  proposal plans them, one row per run class with its source (all three node counts are
  measured), "largest | 5 | 32 | measured | 0.12 | 0.131 | 0-00:09:00 / 00:09:00 | 3.84 |
  4.2 | 19.2 | 21", "typical | 40 | 8 | measured | ... | 83.3 | 91.3", "smallest | 20 |
  2 | measured | ... | 30.1 | 33", then "Total | 65 | ... | 133 | 145" and "Per quarter
  (1/4) | 16.2 | ... | 33.1 | 36.3" (the totals split evenly over four quarters, as
  centers take back hours a period leaves unused); the footnote names the measured node
  counts each class rests on.
* proposal.tex (``--format latex``): the same two tables as booktabs LaTeX.
* scaling.png and scaling.csv (``--plot``): runtime panel (measured points, predicted line
  with its 90% band, dashed ideal line, the recommended scale starred) and efficiency
  panel with the 70% floor; the CSV holds the plotted numbers, one row per node count
  (nodes, measured_runtime_s, predicted_runtime_s, lower/upper, ideal, efficiencies,
  recommended, run_class: the labels of any --run-class at that count).

It prints proposal.md, classes.md, the first lines of
proposal.tex and the CSV's recommended row.
"""

from __future__ import annotations

import csv
import os
import shlex
import sys
import tempfile
from pathlib import Path

from _cli import perfpredict  # examples/_cli.py: runs the CLI as a shell would

APP = ["--app", "maskrcnn", "--system", "XE8545x4A100-SXM-40GB (Dell)",
       "--problem-size", "v2.0", "--runs", "50"]
#: The runs a proposal plans, by class, and its allocation periods.
CLASSES = ["--run-class", "largest=32x5", "--run-class", "typical=8x40",
           "--run-class", "smallest=2x20", "--periods", "4", "--period-label", "quarter"]


def write_proposal(out: Path) -> None:
    (out / "proposal.md").write_text(perfpredict("advise", *APP, "--format", "markdown"))
    classes = perfpredict("advise", *APP[:-2], *CLASSES, "--format", "markdown")
    (out / "classes.md").write_text(classes)
    (out / "proposal.tex").write_text(perfpredict("advise", *APP, "--format", "latex"))
    perfpredict("advise", *APP, "--plot", str(out / "scaling.png"))
    for name in ("proposal.md", "classes.md", "proposal.tex", "scaling.png", "scaling.csv"):
        if not (out / name).is_file():
            sys.exit(f"expected {out / name} to be written")

    print(f"$ perfpredict advise {shlex.join(APP)} --format markdown > proposal.md")
    print((out / "proposal.md").read_text())
    print(f"$ perfpredict advise {shlex.join(APP[:-2] + CLASSES)} --format markdown "
          f"> classes.md")
    print((out / "classes.md").read_text())
    print("$ head -12 proposal.tex   # --format latex")
    print("\n".join((out / "proposal.tex").read_text().splitlines()[:12]))
    with (out / "scaling.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    chosen = [r for r in rows if r["recommended"] == "True"]
    print(f"\n$ --plot scaling.png: wrote scaling.png ({(out / 'scaling.png').stat().st_size} "
          f"bytes) and scaling.csv ({len(rows)} node counts); recommended row:")
    print(chosen[0] if chosen else "(none marked)")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PERFPREDICT_HOME"] = str(Path(tmp) / "home")  # not the user's store
        out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        write_proposal(out)


if __name__ == "__main__":
    main()
