"""Ingest a center's Slurm accounting dump and get walltime advice for new jobs.

    python examples/02_sacct_walltime.py

Data: examples/data/synthetic_sacct.psv, a SYNTHETIC `sacct -P` dump of a fictional
64-node cluster "demo-cluster" (530 jobs of 6 users over March-May 2024, with their
.batch/.extern/.0 steps; TIMEOUT, FAILED and CANCELLED jobs included), and
examples/data/pending_jobs.csv, 8 jobs about to be submitted with the users' habitual
requests. Both are written by examples/data/make_synthetic_sacct.py (seeded, so they are
the same on every run); the runtimes of its `relearn` jobs are real RELeARN measurements
from the bundled data set, everything else is invented. Runs in 7 s of CPU (10-40 s
wall on a shared 2-core machine, depending on its load; examples/README.md) in a
throw-away PERFPREDICT_HOME.

What it prints, and the output to expect:

1. The ingest summary: 530 records, 530 stored, 0 rejected; "demo-cluster" is reported as
   a new system (not in the catalog yet). Steps are folded into their job: 2120 lines,
   530 jobs. TIMEOUT jobs are kept as censored runtimes (they ran at least their limit).

2. ``runs stats``: runs 530, apps 5, censored 4, one row per application series
   (relearn at 1-16 nodes, lammps 2-8, openfoam 4-16, gromacs 1-4, postproc 1).

3. ``advise walltime --kill-risk 0.05`` (fits the advisor on the store), and the
   same at 0.01, next to what each user asked for:

       job_id   user   app       nodes  requested   advised@5%  advised@1%  P(kill)@5%
       4190001  alice  relearn       4  0-02:00:00  0-00:20:00  0-02:00:00  0.027
       4190002  bob    relearn      16  0-08:00:00  0-01:15:00  0-08:00:00  0.027
       4190003  carol  lammps        4  1-00:00:00  0-05:00:00  0-06:00:00  0.0
       4190004  carol  lammps        8  1-00:00:00  0-03:30:00  1-00:00:00  0.027
       4190005  dave   openfoam     16  0-12:00:00  0-05:00:00  0-12:00:00  0.027
       4190006  erin   postproc      1  0-01:00:00  0-00:20:00  0-01:00:00  0.027
       4190007  frank  gromacs       2  1-00:00:00  0-15:00:00  1-00:00:00  0.027
       4190008  frank  gromacs       4  1-00:00:00  0-15:00:00  1-00:00:00  0.027

   Requests shrink 1.6-7x at a 5% kill risk. At 1% most advice is the request: the store's
   calibration window holds 133 recent jobs, and ``(kills + 1) / (n + 1) <= 0.01`` then
   allows no kill at all, which only the requests meet. Advice never exceeds the user's
   own request (unless ``--allow-above-request``). ``kill_probability`` is calibrated: the
   model's raw probability mapped to the share of such choices killed among the recent
   jobs (see docs/walltime.md); on 133 jobs it takes few distinct values.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path

from _cli import perfpredict  # examples/_cli.py: runs the CLI as a shell would

DATA = Path(__file__).resolve().parent / "data"
DUMP = DATA / "synthetic_sacct.psv"
PENDING = DATA / "pending_jobs.csv"


def advice(kill_risk: float) -> dict[str, dict[str, str]]:
    text = perfpredict("advise", "walltime", "--input", str(PENDING), "--input-format", "csv",
                       "--kill-risk", str(kill_risk), "--format", "csv")
    return {row["job_id"]: row for row in csv.DictReader(io.StringIO(text))}


def slurm_time(seconds: float) -> str:
    minutes = int(-(-seconds // 60))
    return f"{minutes // 1440}-{minutes % 1440 // 60:02d}:{minutes % 60:02d}:00"


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["PERFPREDICT_HOME"] = home  # nothing touches the user's own store
        print("$ perfpredict ingest sacct examples/data/synthetic_sacct.psv")
        print(perfpredict("ingest", "sacct", str(DUMP)))
        print("$ perfpredict runs stats")
        print(perfpredict("runs", "stats"))

        at_5, at_1 = advice(0.05), advice(0.01)
        with PENDING.open(newline="") as fh:
            pending = list(csv.DictReader(fh))
        print("$ perfpredict advise walltime --input examples/data/pending_jobs.csv "
              "--input-format csv --kill-risk 0.05 (and 0.01) --format csv")
        print("job_id   user   app       nodes  requested   advised@5%  advised@1%  "
              "P(kill)@5%")
        for job in pending:
            five, one = at_5[job["job_id"]], at_1[job["job_id"]]
            print(f"{job['job_id']:<8} {job['user']:<6} {job['app']:<9} {job['nodes']:>5}  "
                  f"{slurm_time(float(job['requested_walltime_s']))}  "
                  f"{five['slurm_time']}  {one['slurm_time']}  {five['kill_probability']}")


if __name__ == "__main__":
    main()
