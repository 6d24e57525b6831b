"""Batch estimate (``perfpredict estimate --input``) of 100k queries, as a ratio.

The queries are drawn at random (fixed seed) over the bundled predictor's series, at node
counts from 1 to 4x the largest measured scale, so most series get thousands of queries
and many are extrapolations. The reference is reading the same CSV with the ``csv``
module into a list of rows, measured in the same loop, interleaved: the least a batch
estimate that reads its input can cost. ``--io-bytes`` gives every query an I/O volume of
its own (100 GB to 10 TB), as a batch of jobs read from their Darshan logs would: their
series on a machine with a file-system bandwidth in the catalog answer with the
roofline's breakdown and notes.

Run: python -m bench.estimate_benchmark [--queries 100000] [--repeats 3] [--io-bytes]
"""

from __future__ import annotations

import argparse
import csv
import io
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from perfpredict import artifact
from perfpredict.estimate import bundled_artifact_path, estimate_batch
from perfpredict.model.series import SeriesKey
from perfpredict.report.csv_rows import write_csv_cells

COLUMNS = ("app", "system", "problem_size", "ranks_per_node", "nodes")


def write_queries(path: Path, n_queries: int, seed: int = 0, io_bytes: bool = False) -> None:
    """``n_queries`` random queries over the bundled predictor's series (``io_bytes``:
    each with an I/O volume of its own, in a last column)."""
    rng = np.random.default_rng(seed)
    entries = artifact.series_entries(artifact.read_file(bundled_artifact_path()))
    picks = rng.integers(0, len(entries), n_queries)
    volumes = None
    if io_bytes:  # from a generator of their own: the same queries with or without them
        volumes = 10 ** np.random.default_rng([seed, 1]).uniform(11, 13, n_queries)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([*COLUMNS, "io_bytes"] if io_bytes else COLUMNS)
        for row, index in enumerate(picks):
            entry = entries[index]
            key = SeriesKey(*entry["key"])
            app, system, size, rpn = key.app, key.system, key.problem_size, key.ranks_per_node
            # series measured in ranks need a layout to turn nodes into ranks
            rpn = rpn or ("4" if entry["scale_unit"] == "ranks" else "")
            top_nodes = max(1.0, entry["scales"][-1] / float(rpn or 1))
            cells = [app, system, size, rpn, int(rng.integers(1, 4 * top_nodes + 2))]
            writer.writerow(cells if volumes is None else [*cells, f"{volumes[row]:.6g}"])


def _read_csv_s(path: Path) -> float:
    start = time.perf_counter()
    with path.open(newline="", encoding="utf-8") as fh:
        list(csv.DictReader(fh))
    return time.perf_counter() - start


def _estimate_s(path: Path) -> float:
    start = time.perf_counter()
    batch = estimate_batch(None, path)
    write_csv_cells(io.StringIO(), batch.columns, batch.rows, float_format=".6g")
    return time.perf_counter() - start


def benchmark(n_queries: int = 100_000, repeats: int = 3,
              io_bytes: bool = False) -> dict[str, float]:
    """Median seconds of the batch estimate and of the reference, and their ratio."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queries.csv"
        write_queries(path, n_queries, io_bytes=io_bytes)
        _estimate_s(path)  # warm: imports and the artifact's first read
        reference, estimate = [], []
        for _ in range(repeats):
            reference.append(_read_csv_s(path))
            estimate.append(_estimate_s(path))
    ref_s, est_s = statistics.median(reference), statistics.median(estimate)
    return {"queries": n_queries, "reference_s": ref_s, "estimate_s": est_s,
            "ratio_to_csv_read": est_s / ref_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--io-bytes", action="store_true",
                        help="give every query an I/O volume of its own")
    args = parser.parse_args()
    row = benchmark(args.queries, args.repeats, args.io_bytes)
    print("| queries | csv read s (reference) | batch estimate s | ratio |\n|---:|---:|---:|---:|")
    print(f"| {row['queries']} | {row['reference_s']:.3f} | {row['estimate_s']:.2f} | "
          f"{row['ratio_to_csv_read']:.1f} |")


if __name__ == "__main__":
    main()
