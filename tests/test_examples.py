"""The walk-throughs in examples/ run on a fresh checkout (bundled data only)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_examples_run(tmp_path: Path) -> None:
    # Each example makes its own PERFPREDICT_HOME; this one only catches a stray default.
    env = {**os.environ, "PERFPREDICT_HOME": str(tmp_path / "home"), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "run_all.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert done.returncode == 0, (
        f"examples/run_all.py failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    assert "examples passed" in done.stdout
