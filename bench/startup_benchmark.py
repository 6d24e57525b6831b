"""Start-up time of ``perfpredict estimate`` and ``perfpredict --help``, as ratios.

Shared machines are noisy, so every figure is the median of interleaved runs divided by
the median of a reference measured in the same loop: ``python -c "import numpy"`` in the
same interpreter, the least any estimate can cost (the trees are evaluated with numpy).
The estimate runs against an empty SQLite store in a temporary ``PERFPREDICT_HOME``, so
it answers from the bundled predictor, as a first-time user's would; ``--store URL --app
APP`` adds an estimate from a trained store (for example the 1M-run store of
``bench/train_benchmark.py``), which reads only the entries of the application asked.

Run: python bench/startup_benchmark.py [--repeats 15] [--store URL --app APP]
     (prints a markdown table)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: An estimate target in the bundled predictor (measured in nodes, so no layout needed).
ESTIMATE_ARGS = ("estimate", "--app", "bert", "--nodes", "64", "--format", "json")


def _perfpredict() -> list[str]:
    """The installed console script beside this interpreter, as a user would run it."""
    script = Path(sys.executable).with_name("perfpredict")
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from perfpredict.cli.app import main; main()"]


def commands(store: str | None = None, app: str | None = None) -> dict[str, list[str]]:
    cmds = {
        "python -c 'import numpy' (reference)": [sys.executable, "-c", "import numpy"],
        "perfpredict estimate (bundled predictor)": [*_perfpredict(), *ESTIMATE_ARGS],
        "perfpredict --help": [*_perfpredict(), "--help"],
    }
    if store:
        cmds[f"perfpredict estimate (trained store {store})"] = [
            *_perfpredict(), "--db", store, "estimate", "--app", app or "", "--nodes", "64",
            "--format", "json"]
    return cmds


def _wall_s(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def benchmark(repeats: int = 15, store: str | None = None,
              app: str | None = None) -> list[dict[str, float | str]]:
    """Median wall time of each command and its ratio to the numpy reference."""
    cmds = commands(store, app)
    with tempfile.TemporaryDirectory() as home:
        # PYTHONDONTWRITEBYTECODE (set on some machines) would stop the warm-up from
        # writing perfpredict's .pyc files, as a pip install writes them, while numpy's
        # were written by pip: every timed estimate would then compile perfpredict's
        # modules from source (about 15 ms) and the reference would not.
        env = {k: v for k, v in os.environ.items()
               if k not in ("PERFPREDICT_DB", "PYTHONDONTWRITEBYTECODE")}
        env["PERFPREDICT_HOME"] = home
        for argv in cmds.values():  # warm the page cache and .pyc files
            _wall_s(argv, env)
        times: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(repeats):  # interleaved, so load spikes hit every command alike
            for name, argv in cmds.items():
                times[name].append(_wall_s(argv, env))
    reference = statistics.median(next(iter(times.values())))
    return [{"command": name, "median_s": statistics.median(t),
             "ratio_to_import_numpy": statistics.median(t) / reference}
            for name, t in times.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--store", help="also estimate from this trained store's URL")
    parser.add_argument("--app", help="the application to estimate with --store")
    args = parser.parse_args()
    if args.store and not args.app:
        parser.error("--store needs --app")
    if args.store:
        from perfpredict.store.artifacts import trained_applications

        # an untrained store's series are fitted at every estimate: seconds, not start-up
        if args.app not in trained_applications(args.store):
            parser.error(f"--store {args.store} has no trained predictor of {args.app!r}; "
                         f"train it first: perfpredict --db {args.store} train")
    rows = benchmark(args.repeats, args.store, args.app)
    print("| command | median wall s | ratio to import numpy |\n|---|---:|---:|")
    for row in rows:
        print(f"| {row['command']} | {row['median_s']:.3f} | {row['ratio_to_import_numpy']:.2f} |")


if __name__ == "__main__":
    main()
