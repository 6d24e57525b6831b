"""Deleting an ingested file (``perfpredict runs delete --batch ID``) from a large store,
as a ratio.

The store is ``bench/train_benchmark.py``'s: ``--runs`` generated runs (1M by default)
in one batch, then a second file of ``--file-runs`` runs (10k by default), the one read
by mistake. Each case deletes one of them from its own copy of the store: the small file
(the usual case: one wrong file in a center's store) and the large one.

The reference, measured in the same run on an identical copy, is SQLite deleting the same
batch with a raw ``sqlite3`` connection: its runs, its rejects and its record, in one
transaction, the least any delete must do. What perfpredict does beyond it is finding
the batches that share Darshan I/O with it and the systems only it named, each a scan of
the runs, counting what it deletes, and recording the deletion (the runs of each
application it held).

Run: python -m bench.delete_benchmark [--runs 1000000] [--file-runs 10000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bench.train_benchmark import add_batch, write_store
from perfpredict.store.batches import delete_batches


def _raw_delete_s(path: Path, batch_id: int) -> float:
    start = time.perf_counter()
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("DELETE FROM runs WHERE batch_id = ?", (batch_id,))
        conn.execute("DELETE FROM rejects WHERE batch_id = ?", (batch_id,))
        conn.execute("DELETE FROM ingest_batches WHERE id = ?", (batch_id,))
    return time.perf_counter() - start


def _runs_left(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


def benchmark(n_runs: int = 1_000_000, n_file_runs: int = 10_000) -> list[dict[str, Any]]:
    """One row per case: the batch deleted, seconds for perfpredict and the reference,
    their ratio, and the runs each copy kept (the same, or the benchmark is wrong)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        built = Path(tmp) / "built.db"
        write_store(built, n_runs)
        batches = {"the small file": add_batch(built, n_file_runs, "wrong-file", seed=1),
                   "the large file": 1}
        for case, batch_id in batches.items():
            raw, ours = Path(tmp) / "raw.db", Path(tmp) / "ours.db"
            shutil.copyfile(built, raw)
            shutil.copyfile(built, ours)
            reference_s = _raw_delete_s(raw, batch_id)
            start = time.perf_counter()
            deleted = delete_batches(f"sqlite:///{ours}", [batch_id])
            delete_s = time.perf_counter() - start
            rows.append({"case": case, "runs_deleted": deleted.n_runs,
                         "reference_s": reference_s, "delete_s": delete_s,
                         "ratio_to_raw_delete": delete_s / reference_s,
                         "runs_left": _runs_left(ours), "raw_runs_left": _runs_left(raw),
                         "load_average_1min": os.getloadavg()[0]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--file-runs", type=int, default=10_000)
    args = parser.parse_args()
    print("| deleted | runs deleted | raw sqlite3 delete s (reference) | delete s | ratio | "
          "load average |\n|---|---:|---:|---:|---:|---:|")
    for row in benchmark(args.runs, args.file_runs):
        print(f"| {row['case']} | {row['runs_deleted']} | {row['reference_s']:.2f} | "
              f"{row['delete_s']:.2f} | {row['ratio_to_raw_delete']:.1f} | "
              f"{row['load_average_1min']:.1f} |")


if __name__ == "__main__":
    main()
