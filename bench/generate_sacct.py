"""Write a realistic ``sacct -P`` dump for the ingest benchmark.

Every job has the four rows sacct prints for a batch job that ran one ``srun``: the
allocation, ``.batch``, ``.extern`` and ``.0``; so 250k jobs make 1M lines after the
header. Field values follow what Slurm writes (local timestamps, ``Elapsed`` as
``[D-]HH:MM:SS``, ``MaxRSS`` with a K suffix, TRES lists with ``fs/disk``), with a few
percent of failed, cancelled and timed-out jobs and array tasks, so that every branch
of the parser is on the hot path in its real proportion.

Run: python -m bench.generate_sacct OUT.txt [--jobs 250000]
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from bench.generator_cli import generator_main, write_lines

COLUMNS = ("JobID", "JobIDRaw", "Cluster", "Partition", "QOS", "Account", "User", "Submit",
           "Start", "End", "Elapsed", "ElapsedRaw", "ExitCode", "State", "NNodes", "NCPUS",
           "NTasks", "ReqMem", "AllocTRES", "Timelimit", "MaxRSS", "TRESUsageInTot",
           "TRESUsageOutTot", "JobName")
APPS = ("lammps", "gromacs", "vasp_std", "cp2k.psmp", "wrf.exe", "nekrs", "openfoam",
        "python", "namd2", "quantum_espresso")
STATES = (("COMPLETED", "0:0", 0.90), ("FAILED", "1:0", 0.04), ("CANCELLED by 4242", "0:15", 0.03),
          ("TIMEOUT", "0:0", 0.03))
EPOCH = datetime(2024, 1, 1)


def _hms(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    text = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{text}" if days else text


def _time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def job_lines(job_id: int, rng: random.Random) -> list[str]:
    """The four sacct rows of one job."""
    nodes = 2 ** rng.randrange(0, 8)
    cpus = nodes * 128
    limit_min = rng.choice((30, 60, 120, 240, 720, 1440))
    state, code, _ = rng.choices(STATES, weights=[s[2] for s in STATES])[0]
    elapsed = limit_min * 60 if state == "TIMEOUT" else rng.randrange(30, limit_min * 60)
    submit = EPOCH + timedelta(seconds=job_id * 97 + rng.randrange(0, 3600))
    start = submit + timedelta(seconds=rng.randrange(0, 7200))
    end = start + timedelta(seconds=elapsed)
    display = f"{job_id - 7}_{rng.randrange(100)}" if rng.random() < 0.05 else str(job_id)
    app = rng.choice(APPS)
    user = f"u{rng.randrange(400):04d}"
    account = f"proj{rng.randrange(60):03d}"
    common = (f"{_time(submit)}|{_time(start)}|{_time(end)}|{_hms(elapsed)}|{elapsed}|{code}|"
              f"{state}")
    tres = f"billing={cpus},cpu={cpus},mem={nodes * 256}G,node={nodes}"
    rss = f"{rng.randrange(10_000, 90_000_000)}K"
    disk_in = f"cpu=00:{rng.randrange(60):02d}:00,energy=0,fs/disk={rng.randrange(10**6, 10**11)}"
    disk_out = f"energy=0,fs/disk={rng.randrange(10**5, 10**10)}"
    step_state = state.split()[0]
    return [
        f"{display}|{job_id}|frontier|batch|normal|{account}|{user}|{common}|{nodes}|{cpus}|"
        f"|{nodes * 256}G|{tres}|{_hms(limit_min * 60)}||||{app}",
        f"{display}.batch|{job_id}.batch|frontier|||{account}||{common.replace(state, step_state)}"
        f"|1|128|1||cpu=128,mem=256G,node=1||{rng.randrange(1000, 90000)}K|{disk_in}|{disk_out}"
        "|batch",
        f"{display}.extern|{job_id}.extern|frontier|||{account}||"
        f"{common.replace(state, 'COMPLETED')}|{nodes}|{cpus}|{nodes}||{tres}||0|"
        "cpu=00:00:00,fs/disk=2012|fs/disk=0|extern",
        f"{display}.0|{job_id}.0|frontier|||{account}||{common.replace(state, step_state)}|"
        f"{nodes}|{cpus}|{nodes * rng.choice((8, 64, 128))}||{tres}||{rss}|{disk_in}|{disk_out}|"
        f"{app}",
    ]


def write_dump(path: Path, n_jobs: int = 250_000, seed: int = 0) -> int:
    """Write the header and ``n_jobs`` jobs to ``path``; returns the number of lines."""
    rng = random.Random(seed)
    return write_lines(path, "|".join(COLUMNS) + "\n", (
        job_lines(job_id, rng) for job_id in range(1_000_000, 1_000_000 + n_jobs)))


def main() -> None:
    generator_main(__doc__, write_dump, default_jobs=250_000)


if __name__ == "__main__":
    main()
