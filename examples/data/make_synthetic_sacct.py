"""Write the SYNTHETIC Slurm accounting dump used by examples/02_sacct_walltime.py.

    python examples/data/make_synthetic_sacct.py          # rewrites the two files below
    python examples/data/make_synthetic_sacct.py OUT_DIR  # writes them to OUT_DIR instead

Outputs (both clearly synthetic: the cluster, users, accounts, submit times, time limits,
states and the non-RELeARN applications are invented):

* ``synthetic_sacct.psv``: what ``sacct -P --format=<the header line> -S 2024-03-01 -E
  2024-06-01`` prints on a fictional 64-node cluster ``demo-cluster`` (48 cores per node):
  one allocation row per job followed by its ``.batch``, ``.extern`` and ``.0`` (srun)
  steps, times in UTC, TIMEOUT, FAILED and CANCELLED jobs included.
* ``pending_jobs.csv``: eight jobs about to be submitted, in the ``ingest csv`` columns,
  for ``perfpredict advise walltime --input-format csv``: no ``runtime_s``, since they
  have not run (nothing measured after submission is used).

The runtimes of the ``relearn`` jobs are real: each is one measured RELeARN run from the
bundled data set (``perfpredict datasets list``: ``relearn``, Slurm jobs on Lichtenberg,
TU Darmstadt, 2019) plus a few seconds of start-up; its rank count becomes nodes x 32
ranks per node. Everything else is drawn from a seeded random generator, so the files are
identical on every run (``random.Random(20240301)``) and the example's output is stable.

Habits built in, because they are what walltime advice learns from: every user requests
the same round limit for the same kind of job, mostly far above what the job needs
(median request/runtime about 3-6x), and a few users sometimes ask too little and are
killed (TIMEOUT).
"""

from __future__ import annotations

import csv
import gzip
import math
import random
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path

HERE = Path(__file__).resolve().parent
CLUSTER = "demo-cluster"
CORES_PER_NODE = 48
SEED = 20240301
START = datetime(2024, 3, 1, tzinfo=timezone.utc)
DAYS = 92
HEADER = (
    "JobID", "JobIDRaw", "Cluster", "Partition", "Account", "User", "JobName", "Submit",
    "Start", "End", "Elapsed", "Timelimit", "State", "ExitCode", "NNodes", "NCPUS",
    "NTasks", "ReqTRES", "AllocTRES", "MaxRSS", "TRESUsageInTot", "TRESUsageOutTot",
)

# user: (account, application, jobs over the period, node counts, median runtime (s) or
# None for RELeARN, lognormal sigma, requested limit (s) per node count or one for all)
USERS = {
    "alice": ("neuro", "relearn", 70, None, None, 0.0, 2 * 3600),
    "bob": ("neuro", "relearn", 50, None, None, 0.0, 8 * 3600),
    "carol": ("chem", "lammps", 110, (2, 4, 8), 3.0 * 3600, 0.35, 24 * 3600),
    "dave": ("eng", "openfoam", 80, (4, 8, 16), 5.0 * 3600, 0.6, 12 * 3600),
    "erin": ("eng", "postproc", 160, (1,), 600.0, 0.5, 3600),
    "frank": ("chem", "gromacs", 60, (1, 2, 4), 18.0 * 3600, 0.25, 24 * 3600),
}


def relearn_runs() -> list[dict[str, str]]:
    """The bundled RELeARN runs (real measurements), in their original job order."""
    path = resources.files("perfpredict.datasets").joinpath("relearn/runs.csv.gz")
    with gzip.open(str(path), "rt", newline="") as fh:
        return list(csv.DictReader(fh))


def slurm_duration(seconds: float) -> str:
    """Slurm's [D-]HH:MM:SS."""
    seconds = int(round(seconds))
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def make_jobs(rng: random.Random) -> list[dict[str, object]]:
    relearn = relearn_runs()
    rng.shuffle(relearn)
    jobs: list[dict[str, object]] = []
    for user, (account, app, n_jobs, node_counts, median_s, sigma, limit_s) in USERS.items():
        for _ in range(n_jobs):
            submit = START + timedelta(seconds=rng.uniform(0, DAYS * 86400))
            if app == "relearn":
                run = relearn.pop()
                ranks = int(run["total_ranks"])
                nodes, tasks = max(1, ranks // 32), ranks
                runtime_s = float(run["runtime_s"]) + rng.uniform(5, 20)
                io_bytes = 0.0
            else:
                nodes = rng.choice(node_counts)
                tasks = nodes * CORES_PER_NODE
                # bigger runs of the same input finish sooner, not perfectly
                scale = (node_counts[0] / nodes) ** 0.8
                runtime_s = median_s * scale * math.exp(rng.gauss(0.0, sigma))
                io_bytes = nodes * rng.uniform(2e9, 8e9)
            state, exit_code = "COMPLETED", "0:0"
            draw = rng.random()
            if draw < 0.05:
                state, exit_code = "FAILED", "1:0"
                runtime_s *= rng.uniform(0.01, 0.3)
            elif draw < 0.08:
                state, exit_code = "CANCELLED by 0", "0:0"
                runtime_s *= rng.uniform(0.05, 0.9)
            if runtime_s > limit_s:
                state, exit_code = "TIMEOUT", "0:0"
                runtime_s = limit_s + rng.uniform(30, 90)
            wait_s = rng.expovariate(1 / 1800)
            jobs.append(dict(user=user, account=account, app=app, nodes=nodes, tasks=tasks,
                             submit=submit, start=submit + timedelta(seconds=wait_s),
                             runtime_s=runtime_s, limit_s=limit_s, state=state,
                             exit_code=exit_code, io_bytes=io_bytes,
                             partition="cpu" if nodes <= 8 else "large"))
    jobs.sort(key=lambda job: job["submit"])  # type: ignore[arg-type, return-value]
    return jobs


def sacct_rows(jobs: list[dict[str, object]], rng: random.Random) -> list[list[str]]:
    rows = []
    for number, job in enumerate(jobs, start=4_180_001):
        start: datetime = job["start"]  # type: ignore[assignment]
        end = start + timedelta(seconds=float(job["runtime_s"]))  # type: ignore[arg-type]
        elapsed = slurm_duration((end - start).total_seconds())
        nodes, tasks = int(job["nodes"]), int(job["tasks"])  # type: ignore[call-overload]
        cpus = nodes * CORES_PER_NODE
        tres = f"billing={cpus},cpu={cpus},mem={nodes * 192}G,node={nodes}"
        state = str(job["state"])
        step_state = "CANCELLED" if state.startswith("CANCELLED") or state == "TIMEOUT" \
            else state
        rss = f"{rng.randint(800_000, 3_000_000)}K"
        io = float(job["io_bytes"])  # type: ignore[arg-type]
        disk_in = f"energy=0,fs/disk={int(io * 0.7)}"
        disk_out = f"energy=0,fs/disk={int(io * 0.3)}"
        common = [str(job["partition"]), str(job["account"])]
        rows.append([str(number), str(number), CLUSTER, *common, str(job["user"]),
                     str(job["app"]), stamp(job["submit"]), stamp(start),  # type: ignore[arg-type]
                     stamp(end), elapsed, slurm_duration(float(job["limit_s"])),  # type: ignore[arg-type]
                     state, str(job["exit_code"]), str(nodes), str(cpus), "", tres, tres,
                     "", "", ""])
        for step, step_tasks, in_, out in (("batch", 1, "", ""), ("extern", nodes, "", ""),
                                            ("0", tasks, disk_in, disk_out)):
            rows.append([f"{number}.{step}", f"{number}.{step}", CLUSTER, "", *common[1:],
                         "", step, stamp(start), stamp(start), stamp(end), elapsed, "",
                         step_state if step != "extern" else "COMPLETED",
                         str(job["exit_code"]), str(1 if step == "batch" else nodes),
                         str(CORES_PER_NODE if step == "batch" else cpus), str(step_tasks),
                         "", tres if step != "batch" else f"cpu={CORES_PER_NODE},node=1",
                         rss, in_, out])
    return rows


def pending_jobs() -> list[dict[str, object]]:
    """Jobs submitted right after the dump ends: one or two per user, with their habitual
    requests (what a user would type into sbatch)."""
    submit = stamp(START + timedelta(days=DAYS, hours=9))
    rows = []
    for i, (user, nodes, tasks) in enumerate((
            ("alice", 4, 128), ("bob", 16, 512), ("carol", 4, 192), ("carol", 8, 384),
            ("dave", 16, 768), ("erin", 1, 48), ("frank", 2, 96), ("frank", 4, 192)),
            start=4_190_001):
        account, app, *_rest, limit_s = USERS[user]
        rows.append(dict(job_id=i, app=app, system=CLUSTER, user=user, account=account,
                         partition="cpu" if nodes <= 8 else "large", nodes=nodes,
                         total_ranks=tasks, requested_walltime_s=limit_s,
                         submit_time=submit))
    return rows


def main() -> None:
    import sys

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    rng = random.Random(SEED)
    rows = sacct_rows(make_jobs(rng), rng)
    with (out / "synthetic_sacct.psv").open("w", newline="") as fh:
        fh.write("|".join(HEADER) + "\n")
        for row in rows:
            fh.write("|".join(row) + "\n")
    pending = pending_jobs()
    with (out / "pending_jobs.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(pending[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(pending)
    print(f"wrote {out / 'synthetic_sacct.psv'} ({len(rows)} lines) and "
          f"{out / 'pending_jobs.csv'} ({len(pending)} jobs)")


if __name__ == "__main__":
    main()
