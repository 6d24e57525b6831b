"""Training the walltime advisor on a million generated scheduler jobs: time and peak memory.

Issue 14 asked for the advisor to train on 1M jobs within 60 s and 2 GiB peak resident
memory on 2 cores. The jobs come from ``bench/generate_swf.py`` (KTH-SP2's shape), ingested
into a fresh SQLite store by ``perfpredict ingest swf`` (ingest speed is measured apart, in
``bench/ingest_benchmark.py``); then one process reads the store and fits the advisor, as
``perfpredict train`` does, under ``/usr/bin/time -v``, which reports its wall time and
peak resident set size (and CPU time: on a machine shared with other work the wall time
is not the program's alone).

Run: python -m bench.walltime_train_benchmark [--jobs 1000000] [--store DIR]
(``fit URL`` is the measured step, run by the benchmark itself.)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

LIMIT_S = 60.0
LIMIT_BYTES = 2 * 2**30


@dataclass(frozen=True)
class Measurement:
    n_jobs: int
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int

    def line(self) -> str:
        return (f"walltime advisor trained on {self.n_jobs} jobs: {self.wall_s:.1f} s wall "
                f"({self.cpu_s:.1f} s CPU), {self.peak_rss_bytes / 2**30:.2f} GiB peak RSS "
                f"(limits {LIMIT_S:.0f} s, {LIMIT_BYTES / 2**30:.0f} GiB)")


def prepare(folder: Path, n_jobs: int) -> str:
    """Generate ``n_jobs`` SWF jobs and ingest them into a store in ``folder``; its URL."""
    from bench.generate_swf import write_log
    from perfpredict.ingest import ingest_file
    from perfpredict.store import open_store

    log = folder / "jobs.swf"
    write_log(log, n_jobs)
    url = f"sqlite:///{folder / 'store.db'}"
    store = open_store(url)
    ingest_file(store, "swf", log)
    store.dispose()
    log.unlink()
    return url


def fit(url: str) -> int:
    """The measured step: read the store's jobs and fit the advisor (2 threads)."""
    from perfpredict.advise.walltime import fit_walltime_advisor
    from perfpredict.store import open_store

    started = time.perf_counter()
    advisor = fit_walltime_advisor(open_store(url), n_threads=2)
    print(f"fitted on {advisor.n_jobs_} jobs in {time.perf_counter() - started:.1f} s")
    return 0


def measure(url: str, n_jobs: int) -> Measurement:
    """Run :func:`fit` in a child process under ``/usr/bin/time -v``."""
    done = subprocess.run(
        ["/usr/bin/time", "-v", sys.executable, "-m", "bench.walltime_train_benchmark",
         "fit", url], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parents[1])
    rss_kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)",
                     done.stderr)
    cpu_s = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)",
                                             done.stderr))
    if rss_kb is None or wall is None:
        raise RuntimeError(f"/usr/bin/time -v gave no figures:\n{done.stderr}")
    seconds = 0.0
    for part in wall.group(1).split(":"):
        seconds = 60.0 * seconds + float(part)
    return Measurement(n_jobs, seconds, cpu_s, int(rss_kb.group(1)) * 1024)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["fit"]:
        return fit(args[1])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--store", type=Path, help="keep the generated store in this folder")
    options = parser.parse_args(args)
    with tempfile.TemporaryDirectory() as scratch:
        folder = options.store or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        result = measure(prepare(folder, options.jobs), options.jobs)
    print(result.line())
    return 0 if result.wall_s <= LIMIT_S and result.peak_rss_bytes <= LIMIT_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
