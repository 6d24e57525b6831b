"""Generated inputs for the reliability tests: benchmark CSVs big enough to take seconds
to ingest, and a small store a predictor can be trained on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEADER = "app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s,job_id\n"
#: Applications of the training CSV, each measured at these node counts.
APPS = ("lulesh", "hacc", "nekrs", "amg2023")
NODES = (1, 2, 4, 8, 16)


def amdahl_runtime_s(app_index: int, nodes: int, serial: float = 0.05) -> float:
    t1 = 1000.0 * (app_index + 1)
    return t1 * (serial + (1 - serial) / nodes)


def training_csv(path: Path, repeats: int = 3) -> Path:
    """A few strong-scaling series (Amdahl with a little deterministic jitter)."""
    rows = []
    for a, app in enumerate(APPS):
        for nodes in NODES:
            for r in range(repeats):
                runtime = amdahl_runtime_s(a, nodes) * (1 + 0.02 * ((r * 7 + nodes) % 5 - 2))
                rows.append(f"{app},testbox,size{a},{nodes},32,1,{runtime:.3f},{app}-{nodes}-{r}\n")
    path.write_text(HEADER + "".join(rows))
    return path


def bulk_csv(path: Path, n_rows: int, prefix: str = "job") -> Path:
    """``n_rows`` distinct jobs (natural key: system + job_id), one per line."""
    with path.open("w") as fh:
        fh.write(HEADER)
        for i in range(n_rows):
            nodes = 1 << (i % 6)
            fh.write(f"bulk{i % 7},bulkbox,p{i % 3},{nodes},16,2,{10 + (i % 997) * 0.5},"
                     f"{prefix}{i}\n")
    return path


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PERFPREDICT_")}
    env["PERFPREDICT_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    # XGBoost's default of one thread per core oversubscribes a busy CI machine badly.
    env["OMP_NUM_THREADS"] = "1"
    return env


def perfpredict_argv(*args: str) -> list[str]:
    """The installed console script's equivalent, run by this interpreter."""
    return [sys.executable, "-c", "from perfpredict.cli.app import main; main()", *args]


def run_cli(home: Path, *args: str, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(perfpredict_argv(*args), env={**cli_env(home), **(env or {})},
                          capture_output=True, text=True, timeout=timeout, check=False)
