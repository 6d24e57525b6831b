"""Ingest time and peak memory against sqlite3's own ``.import`` of the same file, raw.

For each file, two child processes run side by side in the same loop:

* reference: the sqlite3 shell loading the file into one table as it is (``.import``;
  ``|``-separated for sacct, ``--csv`` for CSV, one text column per line for SWF, whose
  gzip is expanded first, outside the timing);
* perfpredict: ``ingest_file`` into a fresh SQLite store (checksum, parse, fold steps,
  natural keys, insert in one transaction).

Figures are the perfpredict/sqlite3 time ratio, perfpredict's rows/s, and the child's
peak resident memory (``ru_maxrss`` from ``os.wait4``), so machine noise cancels out of
the ratio and no measurement includes this script's own memory.

SWF is measured twice: on the real KTH-SP2 log (28.5k lines, where start-up weighs
most) and on a 1M-job log written by bench/generate_swf.py.

Run: python -m bench.ingest_benchmark [--sacct FILE] [--swf FILE] [--csv FILE]
     [--formats sacct,swf,csv]
     (without --sacct a 1M-line dump is generated with bench/generate_sacct.py)
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate_sacct import write_dump
from bench.generate_swf import write_log

KTH_SWF = Path(__file__).resolve().parents[2] / "shared/logs/swf/KTH-SP2-1996-2.1-cln.swf.gz"

_INGEST = """
import sys
from perfpredict.ingest.pipeline import ingest_file
from perfpredict.ingest.records import IngestOptions
from perfpredict.store import open_store

store = open_store(sys.argv[1])
report = ingest_file(store, sys.argv[2], sys.argv[3], IngestOptions(system=sys.argv[4]))
print(report.n_stored + report.n_duplicates + report.n_attached)
"""


def _run(argv: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in bytes (Linux reports KiB) and stdout of one child."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    if proc.returncode:
        raise RuntimeError(f"{argv[:3]} failed: {err.strip()}")
    return elapsed, usage.ru_maxrss * 1024, out


def _sqlite_import(fmt: str, path: Path, db: Path) -> list[str]:
    sqlite3 = shutil.which("sqlite3")
    if sqlite3 is None:
        raise SystemExit("the sqlite3 shell is needed as the reference: apt-get install sqlite3")
    mode = {"sacct": [".separator |"], "csv": [],
            "swf": [".separator \x1f"]}[fmt]  # SWF: a unit separator, so a line is one column
    import_ = f".import --csv {path} t" if fmt == "csv" else f".import {path} t"
    return [sqlite3, str(db), *mode, import_]


def measure(fmt: str, path: Path, system: str, workdir: Path) -> dict[str, object]:
    """One file: the reference and perfpredict, each in a fresh database."""
    raw = path
    if path.suffix == ".gz":  # the reference reads plain text; expanding it is not timed
        raw = workdir / path.stem
        with gzip.open(path, "rb") as src, raw.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    ref_db, store_db = workdir / f"ref-{raw.name}.db", workdir / f"store-{raw.name}.db"
    ref_s, ref_rss, _ = _run(_sqlite_import(fmt, raw, ref_db))
    ours_s, ours_rss, out = _run([sys.executable, "-c", _INGEST, f"sqlite:///{store_db}",
                                  fmt, str(path), system])
    n_lines = sum(1 for _ in raw.open("rb"))
    return {"format": fmt, "file": path.name, "lines": n_lines, "runs": int(out),
            "sqlite3_import_s": ref_s, "perfpredict_s": ours_s, "ratio": ours_s / ref_s,
            "lines_per_s": n_lines / ours_s, "peak_mib": ours_rss / 2**20,
            "sqlite3_peak_mib": ref_rss / 2**20}


def write_csv(path: Path, n_rows: int) -> None:
    """Benchmark rows as ``ingest csv`` reads them (no job ids: keyed by content)."""
    with path.open("w", encoding="utf-8") as out:
        out.write("app,system,problem_size,nodes,ranks_per_node,threads_per_rank,runtime_s,"
                  "io_bytes,note\n")
        for i in range(n_rows):
            nodes = 2 ** (i % 9)
            out.write(f"app{i % 997},sys{i % 7},size{i // 9 % 50},{nodes},{8 * (1 + i % 4)},"
                      f"{1 + i % 2},{1000.0 / nodes + i % 13 * 0.37:.3f},{i * 4096},r{i}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sacct", type=Path)
    parser.add_argument("--swf", type=Path, default=KTH_SWF)
    parser.add_argument("--csv", type=Path)
    parser.add_argument("--csv-rows", type=int, default=500_000)
    parser.add_argument("--swf-jobs", type=int, default=1_000_000,
                        help="jobs of the generated SWF log (0: measure only --swf)")
    parser.add_argument("--formats", default="sacct,swf,csv",
                        help="comma-separated subset of sacct,swf,csv to measure")
    args = parser.parse_args()
    formats = set(args.formats.split(","))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "sacct" in formats:
            sacct = args.sacct or work / "sacct.txt"
            if args.sacct is None:
                write_dump(sacct)
            rows.append(measure("sacct", sacct, "frontier", work))
        if "swf" in formats:
            rows.append(measure("swf", args.swf, "kth-sp2", work))
            if args.swf_jobs:
                generated = work / "generated.swf"
                write_log(generated, args.swf_jobs)
                rows.append(measure("swf", generated, "generated", work))
        if "csv" in formats:
            csv = args.csv or work / "runs.csv"
            if args.csv is None:
                write_csv(csv, args.csv_rows)
            rows.append(measure("csv", csv, "bench", work))
    print("| format | file | lines | runs stored | sqlite3 .import s | perfpredict s | ratio |"
          " lines/s | peak MiB |\n|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['format']} | {r['file']} | {r['lines']} | {r['runs']} | "
              f"{r['sqlite3_import_s']:.2f} | {r['perfpredict_s']:.2f} | {r['ratio']:.2f} | "
              f"{r['lines_per_s']:,.0f} | {r['peak_mib']:.0f} |")


if __name__ == "__main__":
    main()
