"""Batch estimate (``perfpredict estimate --input``) of 100k queries, as a ratio.

The queries are drawn at random (fixed seed) over the bundled predictor's series, at node
counts from 1 to 4x the largest measured scale, so most series get thousands of queries
and many are extrapolations. The reference is reading the same CSV with the ``csv``
module into a list of rows, measured in the same loop, interleaved: the least a batch
estimate that reads its input can cost. ``--io-bytes`` gives every query an I/O volume of
its own (100 GB to 10 TB), as a batch of jobs read from their Darshan logs would: their
series on a machine with a file-system bandwidth in the catalog answer with the
roofline's breakdown and notes.

``--memory N,N,...`` measures peak resident memory instead: ``perfpredict estimate
--input`` of N queries (the bundled predictor, an empty ``PERFPREDICT_HOME``, the CSV
written to /dev/null), each in a child, against a child that reads the same file with
the ``csv`` module into a list of rows, run right before it: what a batch that held its
input whole could not go below. A batch answered a chunk at a time falls below 1x as the
file grows; one that holds every query's row and answer stays above it.

Run: python -m bench.estimate_benchmark [--queries 100000] [--repeats 3] [--io-bytes]
     python -m bench.estimate_benchmark --memory 100000,1000000
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
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


#: The reference of :func:`peak_memory`: the query file read into a list of rows.
_READ_ROWS = ("import csv, sys\n"
              "with open(sys.argv[1], newline='', encoding='utf-8') as fh:\n"
              "    rows = list(csv.DictReader(fh))\n")
#: The batch estimate as the command line runs it.
_ESTIMATE = ("import sys\nfrom perfpredict.cli.app import main\n"
             "sys.argv = ['perfpredict', 'estimate', '--input', sys.argv[1]]\nmain()\n")


#: Prefixed to a child's code: its peak resident memory (``VmHWM``, KiB) written at exit
#: to the file named by its second argument. Not ``wait4``'s ``ru_maxrss``: Linux carries
#: the parent's high-water mark into a child across ``exec``, so every child of a parent
#: of 60 MiB peaked at 60 MiB or more.
_PEAK_AT_EXIT = ("import atexit, sys\n"
                 "def _peak(out=sys.argv[2]):\n"
                 "    with open('/proc/self/status') as status, open(out, 'w') as fh:\n"
                 "        fh.write(next(line for line in status\n"
                 "                      if line.startswith('VmHWM:')).split()[1])\n"
                 "atexit.register(_peak)\n")


def _peak_rss_mib(code: str, path: Path, home: Path) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MiB) of a child running ``code`` on
    ``path`` with ``home`` as its ``PERFPREDICT_HOME``, its output discarded."""
    peak = home / "peak-kib"
    start = time.perf_counter()
    env = {**os.environ, "PERFPREDICT_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", _PEAK_AT_EXIT + code, str(path), str(peak)],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode:
        raise RuntimeError(f"the child failed: {done.stderr.decode(errors='replace').strip()}")
    return time.perf_counter() - start, int(peak.read_text()) / 1024


def peak_memory(sizes: list[int]) -> list[dict[str, float]]:
    """For each number of queries, the peak RSS of ``estimate --input`` and of reading
    the same file with the ``csv`` module (run right before it), and their ratio."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"  # no store: the bundled predictor answers
        home.mkdir()
        for n_queries in sizes:
            path = Path(tmp) / f"queries-{n_queries}.csv"
            write_queries(path, n_queries)
            _, reference_mib = _peak_rss_mib(_READ_ROWS, path, home)
            estimate_s, estimate_mib = _peak_rss_mib(_ESTIMATE, path, home)
            rows.append({"queries": n_queries, "file_mib": path.stat().st_size / 2**20,
                         "reference_mib": reference_mib, "estimate_mib": estimate_mib,
                         "ratio": estimate_mib / reference_mib, "estimate_s": estimate_s})
            path.unlink()
    return rows


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
    parser.add_argument("--memory", metavar="N,N,...",
                        help="peak RSS of batches of these many queries against reading "
                             "their file with the csv module")
    args = parser.parse_args()
    if args.memory:
        print("| queries | file MiB | csv read peak MiB (reference) | batch estimate peak MiB "
              "| ratio | batch estimate s |\n|---:|---:|---:|---:|---:|---:|")
        for r in peak_memory([int(n) for n in args.memory.split(",")]):
            print(f"| {r['queries']:.0f} | {r['file_mib']:.0f} | {r['reference_mib']:.0f} | "
                  f"{r['estimate_mib']:.0f} | {r['ratio']:.2f} | {r['estimate_s']:.1f} |")
        return
    row = benchmark(args.queries, args.repeats, args.io_bytes)
    print("| queries | csv read s (reference) | batch estimate s | ratio |\n|---:|---:|---:|---:|")
    print(f"| {row['queries']} | {row['reference_s']:.3f} | {row['estimate_s']:.2f} | "
          f"{row['ratio_to_csv_read']:.1f} |")


if __name__ == "__main__":
    main()
