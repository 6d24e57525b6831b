"""Plan a strong-scaling run: estimate, pick a node count, write the Slurm job script.

    python examples/01_plan_strong_scaling.py

Data: the bundled predictor (models/predictor.json, trained on the bundled data sets), so
nothing is ingested or trained. The job is BERT training (MLPerf Training v2.0) on Dell
PowerEdge XE8545 nodes (4x A100-SXM-40GB each), measured at 1, 2, 4, 8, 16 and 32 nodes
(60 real runs). Runs in a few seconds in a throw-away PERFPREDICT_HOME.

What it prints, and the output to expect:

1. ``perfpredict estimate`` at 16, 32 and 64 nodes (table): at 16 and 32 nodes, which were
   measured, the median of the runs there with their own scatter as the interval
   ("234.3 s (90% interval 208.7 - 263.2 s)" at 16 nodes), the base "T(p) = geometric
   mean of [70.34 s + 2880 s / p], [70.34 s + 2880 s / p + 0 s * log2(p)], [2776 s *
   p^(-0.841)]" (Amdahl, Amdahl with a communication
   term, the power law) "moved onto the runs measured at 16 nodes"; at 64 nodes "102.9 s
   (90% interval 53.0 - 180.1 s)", "parallel efficiency 38% against 1 node", the pooled
   slope drift joining the base beyond the measured range with overhead coefficient
   0.992, the note "extrapolating 1 doubling beyond the largest measured scale (32
   nodes)", and the note that another series of BERT on this input weighs in with the
   speed-up it measured from 32 to 64 nodes (NVIDIA's DGX A100 runs, at 1, 8, 128 and
   512 nodes, read between its measured scales).

2. ``perfpredict advise --format json`` under two efficiency rules:

       rule                          nodes  P50_s   walltime    node_h_P90 (20 runs)
       min_efficiency 0.7                2  1641.0  0-00:31:00  19.5
       min_speedup_per_doubling 1.5     16   234.3  0-00:05:00  22.3

   with the sentence saying which rule decided. These runs do not scale smoothly (MLPerf
   time-to-train: each node count trains with its own batch size): measured, 4 nodes
   were 58% efficient, 8 nodes 69.96%, 16 nodes 66%. A 70% efficiency floor therefore
   stops at 2 nodes (76%); a 1.5x-per-doubling floor (Notur's rule for the first
   doubling) goes to 16 nodes and stops there because the runs at 32 nodes gained only
   1.46x.

3. ``perfpredict advise ... --emit sbatch``: the #SBATCH directives for the choice
   (--nodes=16, --ntasks-per-node=4, --cpus-per-task=16, --time=0-00:05:00), which the
   script wraps into a job script (job.sbatch in the temporary directory) and prints;
   the --gpus-per-node line and the srun command are the user's part (advise does not
   emit GPU directives), the training command is a placeholder.

The XE8545 cluster has no catalog entry, so the walltime is rounded to Slurm's minute and
no queue limit is checked (advise warns; ``perfpredict systems add`` fixes that).
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path

from _cli import perfpredict  # examples/_cli.py: runs the CLI as a shell would

APP = ["--app", "bert", "--system", "XE8545x4A100-SXM-40GB (Dell)", "--problem-size", "v2.0"]
RULES = {"min_efficiency 0.7": ["--min-efficiency", "0.7"],
         "min_speedup_per_doubling 1.5": ["--min-speedup-per-doubling", "1.5"]}


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["PERFPREDICT_HOME"] = home  # nothing touches the user's own store
        for nodes in ("16", "32", "64"):
            print(f"$ perfpredict estimate {shlex.join(APP)} --nodes {nodes}")
            print(perfpredict("estimate", *APP, "--nodes", nodes))

        print("$ perfpredict advise ... --threads-per-rank 16 --runs 20 --format json")
        print(f"{'rule':<29} {'nodes':>5}  {'P50_s':<6}  {'walltime':<10}  "
              "node_h_P90 (20 runs)")
        for rule, flags in RULES.items():
            plan = json.loads(perfpredict("advise", *APP, *flags, "--threads-per-rank", "16",
                                          "--runs", "20", "--format", "json"))
            print(f"{rule:<29} {plan['recommended_nodes']:>5}  "
                  f"{plan['predicted_runtime_s']:6.1f}  {plan['walltime_slurm']:<10}  "
                  f"{plan['node_hours_p90']:.1f}")
            print(f"  why: {plan['reason']}")

        directives = perfpredict("advise", *APP, *RULES["min_speedup_per_doubling 1.5"],
                                 "--threads-per-rank", "16", "--emit", "sbatch")
        script = Path(home) / "job.sbatch"
        script.write_text("#!/bin/bash\n" + directives
                          + "#SBATCH --gpus-per-node=4\n\n"
                          "srun python run_pretraining.py --config bert_v2.0.json\n")
        print(f"\n$ cat job.sbatch   # written from 'advise ... --emit sbatch'\n"
              f"{script.read_text()}")


if __name__ == "__main__":
    main()
