"""Run every example; exit non-zero when any of them fails.

    python examples/run_all.py            # all examples, in order
    python examples/run_all.py 02 04      # only those whose file name starts so

Each example makes its own throw-away PERFPREDICT_HOME, so this touches neither the
user's store nor the repository. It also checks that examples/data/ is what its
generator writes (so the synthetic sacct dump cannot drift from the documented script).
CI runs this through tests/test_examples.py.
"""

from __future__ import annotations

import filecmp
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATED = ("synthetic_sacct.psv", "pending_jobs.csv")


def check_data() -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(HERE / "data" / "make_synthetic_sacct.py"), tmp],
                       check=True, capture_output=True)
        stale = [name for name in GENERATED
                 if not filecmp.cmp(Path(tmp) / name, HERE / "data" / name, shallow=False)]
    if stale:
        print(f"FAIL examples/data/{', '.join(stale)} differ from what "
              "examples/data/make_synthetic_sacct.py writes; rerun it", flush=True)
    return not stale


def main(prefixes: list[str]) -> int:
    examples = sorted(p for p in HERE.glob("[0-9][0-9]_*.py")
                      if not prefixes or p.name.startswith(tuple(prefixes)))
    failed = [] if check_data() else ["examples/data"]
    for path in examples:
        print(f"=== {path.name}", flush=True)
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(path)])
        seconds = time.monotonic() - started
        status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        print(f"=== {path.name}: {status} in {seconds:.0f} s\n", flush=True)
        if done.returncode != 0:
            failed.append(path.name)
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    print(f"all {len(examples)} examples passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
