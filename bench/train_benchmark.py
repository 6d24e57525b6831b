"""Training (``perfpredict train``) on a store of 1M generated runs, as a ratio.

The runs look like a center's benchmark history: many series (application, system,
problem size) of 3 to 8 doubling node counts, each following Amdahl's law, Amdahl's law
with a log2(p) communication term, or a power law, with 1 to 6 repetitions per scale
and 2-8% log-normal noise. They are bulk-inserted straight into a fresh SQLite store
(one ingest batch), since ingest speed is measured separately (``bench/ingest_benchmark.py``).

The reference, measured in the same run, is reading every run's series key, scale and
runtime with a raw ``sqlite3`` cursor: the least any training on the store must do.

Run: python -m bench.train_benchmark [--runs 1000000]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from perfpredict.store import open_store
from perfpredict.train import TrainReport, train

_SHAPES = ("amdahl", "amdahl_log", "power")
_RUN_COLUMNS = ("natural_key", "batch_id", "app", "system", "problem_size", "nodes",
                "ranks_per_node", "threads_per_rank", "runtime_s", "state", "censored")


def _series_runtimes(rng: np.random.Generator, nodes: np.ndarray) -> np.ndarray:
    """Noise-free runtimes of one series at ``nodes``, in one of the scaling shapes."""
    parallel_s = rng.uniform(100.0, 20_000.0)
    serial_s = parallel_s * rng.uniform(0.001, 0.05)
    shape = _SHAPES[rng.integers(len(_SHAPES))]
    if shape == "power":
        return parallel_s * nodes ** -rng.uniform(0.5, 1.0)
    runtime = serial_s + parallel_s / nodes
    if shape == "amdahl_log":
        runtime = runtime + serial_s * rng.uniform(0.05, 0.5) * np.log2(nodes)
    return runtime


def generate_runs(n_runs: int, batch_id: int, seed: int = 0,
                  key_prefix: str = "bench") -> Iterator[tuple[Any, ...]]:
    """``n_runs`` completed runs as rows of :data:`_RUN_COLUMNS`, series after series,
    keyed ``key_prefix:N``."""
    rng = np.random.default_rng(seed)
    made, series_no = 0, 0
    while made < n_runs:
        n_scales = int(rng.integers(3, 9))
        nodes = 2.0 ** (int(rng.integers(0, 6)) + np.arange(n_scales))
        repeats = rng.integers(1, 7, n_scales)
        scale = np.repeat(nodes, repeats)
        noise = rng.normal(0.0, rng.uniform(0.02, 0.08), scale.size)
        runtime = np.repeat(_series_runtimes(rng, nodes), repeats) * np.exp(noise)
        app, system = f"app{series_no % 400}", f"system{series_no % 13}"
        size = f"size {series_no}"
        for p, t in zip(scale.tolist(), runtime.tolist(), strict=True):
            if made == n_runs:
                return
            yield (f"{key_prefix}:{made}", batch_id, app, system, size, int(p), 4.0, 1, t,
                   "COMPLETED", 0)
            made += 1
        series_no += 1


def write_store(path: Path, n_runs: int) -> str:
    """A fresh SQLite store at ``path`` holding ``n_runs`` generated runs; its URL."""
    url = f"sqlite:///{path}"
    open_store(url).engine.dispose()  # creates the schema at the current revision
    add_batch(path, n_runs)
    return url


def add_batch(path: Path, n_runs: int, name: str = "generated", seed: int = 0) -> int:
    """``n_runs`` generated runs (``seed``) added to the SQLite store at ``path`` as one
    ingest batch, as if from a file called ``name``; the batch's id. The connection is
    closed on the way out, so that the store's file holds the runs (not only its WAL)
    for a copy of it."""
    with closing(sqlite3.connect(path)) as conn, conn:
        batch_id = conn.execute(
            "INSERT INTO ingest_batches (path, sha256, format, started_epoch_s, n_records,"
            " n_stored, n_duplicates, n_rejected) VALUES (?, ?, ?, ?, ?, ?, 0, 0)",
            (name, hashlib.sha256(name.encode()).hexdigest(), "bench", time.time(), n_runs,
             n_runs)).lastrowid
        assert batch_id is not None
        conn.executemany(
            f"INSERT INTO runs ({', '.join(_RUN_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(_RUN_COLUMNS))})",
            generate_runs(n_runs, batch_id, seed, key_prefix=name))
    return batch_id


def _read_raw_s(path: Path) -> float:
    start = time.perf_counter()
    with sqlite3.connect(path) as conn:
        conn.execute("SELECT app, system, problem_size, ranks_per_node, threads_per_rank,"
                     " nodes, runtime_s FROM runs").fetchall()
    return time.perf_counter() - start


def benchmark(n_runs: int = 1_000_000) -> dict[str, Any]:
    """Seconds to train on ``n_runs`` stored runs, the reference, and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runs.db"
        url = write_store(path, n_runs)
        reference_s = _read_raw_s(path)
        start = time.perf_counter()
        report: TrainReport = train(open_store(url))
        train_s = time.perf_counter() - start
    return {"runs": n_runs, "series": report.n_series, "reference_s": reference_s,
            "train_s": train_s, "ratio_to_raw_read": train_s / reference_s,
            # seconds on a shared machine depend on what else runs: say how busy it was
            "load_average_1min": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    row = benchmark(parser.parse_args().runs)
    print("| runs | series | raw sqlite3 read s (reference) | train s | ratio | load average |\n"
          "|---:|---:|---:|---:|---:|---:|")
    print(f"| {row['runs']} | {row['series']} | {row['reference_s']:.2f} | "
          f"{row['train_s']:.1f} | {row['ratio_to_raw_read']:.0f} | "
          f"{row['load_average_1min']:.1f} |")


if __name__ == "__main__":
    main()
