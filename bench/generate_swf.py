"""Write a large Standard Workload Format log for the ingest benchmark.

The real KTH-SP2 log has 28.5k jobs, which sqlite3 imports in about 0.05 s: its ratio
measures start-up more than reading. This writes a log of the same shape at any size:
a KTH-like header (system, ``UnixStartTime``, time zone, queues), then one job per line
in the archive's right-aligned columns, with fractional CPU times, ``-1`` for missing
values, 72% completed, 25% failed (some past their requested time) and 3% cancelled
jobs, and a few partial-execution records, so that every path of the reader is on the
hot path in its real proportion.

Run: python -m bench.generate_swf OUT.swf [--jobs 1000000]
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from bench.generator_cli import generator_main, write_lines

HEADER = """; Version: 2.2
; Computer: IBM SP2
; Installation: Generated Benchmark Center
; UnixStartTime: 843480031
; TimeZoneString: Europe/Stockholm
; MaxProcs: 100
; Queue:  0  interactive
; Queue:  1  batch
; Partition:  1  main
;
"""
STATUSES = ((1, 0.72), (0, 0.25), (5, 0.03))
#: Share of jobs followed by a partial-execution record (status 2, 3 or 4).
PARTIAL_SHARE = 0.001
#: Column widths of KTH-SP2's lines (about 90 bytes a line).
_WIDTHS = (7, 9, 6, 6, 4, 6, 6, 4, 6, 5, 2, 3, 3, 3, 2, 2, 2, 2)


def job_line(job: int, submit_s: int, rng: random.Random, status: int | None = None) -> str:
    """One data line; ``status`` forces a partial-execution record."""
    procs = 2 ** rng.randrange(0, 7)
    requested_s = rng.choice((900, 3600, 14400, 54000, 86400))
    run_s = rng.randrange(1, int(requested_s * 1.1))
    if status is None:
        status = rng.choices([s for s, _ in STATUSES], weights=[w for _, w in STATUSES])[0]
    cpu = f"{rng.uniform(0, run_s):.2f}" if rng.random() < 0.5 else "-1"
    memory = str(rng.randrange(1000, 500_000)) if rng.random() < 0.3 else "-1"
    fields = (job, submit_s, rng.randrange(0, 20_000), run_s, procs, cpu, memory, procs,
              requested_s, -1, status, rng.randrange(1, 400), rng.randrange(1, 30),
              rng.randrange(1, 200) if rng.random() < 0.6 else -1, rng.randrange(0, 2), 1,
              -1, -1)
    return " ".join(f"{value:>{width}}" for value, width in zip(fields, _WIDTHS, strict=True))


def write_log(path: Path, n_jobs: int = 1_000_000, seed: int = 0) -> int:
    """Write the header and about ``n_jobs`` job lines; returns the number of lines."""
    return write_lines(path, HEADER, _jobs(n_jobs, random.Random(seed)))


def _jobs(n_jobs: int, rng: random.Random) -> Iterator[list[str]]:
    """The lines of each job: its summary, sometimes followed by a partial record."""
    submit_s = 0
    for job in range(1, n_jobs + 1):
        submit_s += rng.randrange(0, 120)
        lines = [job_line(job, submit_s, rng)]
        if rng.random() < PARTIAL_SHARE:
            lines.append(job_line(job, submit_s, rng, status=rng.choice((2, 3, 4))))
        yield lines


def main() -> None:
    generator_main(__doc__, write_log, default_jobs=1_000_000)


if __name__ == "__main__":
    main()
