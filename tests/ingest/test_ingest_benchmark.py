"""The pyarrow what-if of bench/ingest_benchmark.py (``--pyarrow-split``) is timed
against the ingest as it is, so it must store the same runs, or the comparison that
keeps the hand-written tokenizer (docs/performance.md) would compare unequal work."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.generate_sacct import write_dump
from bench.ingest_benchmark import _INGEST, _PYARROW_SPLIT

pytest.importorskip("pyarrow")


def _stored_runs(tmp_path: Path, name: str, child: str, dump: Path) -> list[tuple[object, ...]]:
    db = tmp_path / f"{name}.db"
    subprocess.run([sys.executable, "-c", child, f"sqlite:///{db}", "sacct", str(dump),
                    "frontier"], check=True, capture_output=True)
    with sqlite3.connect(db) as con:
        columns = [row[1] for row in con.execute("PRAGMA table_info(runs)")
                   if row[1] not in ("id", "batch_id")]
        return sorted(con.execute(f"SELECT {', '.join(columns)} FROM runs"), key=repr)


def test_pyarrow_split_stores_what_the_ingest_stores(tmp_path: Path) -> None:
    dump = tmp_path / "sacct.txt"
    write_dump(dump, n_jobs=5_000)  # 4.9 MB: two blocks, so the second block's rows count
    ours = _stored_runs(tmp_path, "handwritten", _INGEST, dump)
    arrow = _stored_runs(tmp_path, "pyarrow", _PYARROW_SPLIT, dump)
    assert len(ours) == 5_000
    assert arrow == ours
