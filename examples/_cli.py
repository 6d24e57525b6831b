"""What every example shares: running the perfpredict CLI the way a user's shell would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def perfpredict(*args: str) -> str:
    """Run the perfpredict CLI, fail loudly on a non-zero exit, return its stdout."""
    exe = shutil.which("perfpredict", path=str(Path(sys.executable).parent)) or "perfpredict"
    done = subprocess.run([exe, *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "100"})
    if done.returncode != 0:
        sys.exit(f"perfpredict {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout
