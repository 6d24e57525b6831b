"""What the benchmark's log generators share: writing a log job by job, and the
command line ``OUT [--jobs N]``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path


def generator_main(doc: str, write: Callable[[Path, int], int], default_jobs: int) -> None:
    """Parse ``OUT [--jobs N]``, call ``write(OUT, N)`` and say how many lines it wrote."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--jobs", type=int, default=default_jobs)
    args = parser.parse_args()
    print(f"{write(args.out, args.jobs)} lines written to {args.out}")


def write_lines(path: Path, header: str, jobs: Iterable[list[str]]) -> int:
    """Write ``header`` and the lines of each job; returns the number of lines."""
    n_lines = header.count("\n")
    with path.open("w", encoding="utf-8") as out:
        out.write(header)
        for lines in jobs:
            out.write("\n".join(lines) + "\n")
            n_lines += len(lines)
    return n_lines
