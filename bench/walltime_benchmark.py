"""Walltime advice against the users' own requests and the "last-2" predictor.

Time-ordered split of each shared SWF log: the advisor is fitted on the first 70% of jobs by
submit time and advises the last 30%. While advising, the history it reads is the whole log,
but only jobs that *ended before* each advised job was submitted are visible (the store as
it would stand if accounting were ingested as jobs finish); the classifier is not refitted.

Reported per method, over all advised jobs (failed and cancelled included, as in the
users' figure): the share killed (runtime > walltime) and the mean of min(runtime /
walltime, 1) over the jobs that fit. "last-2" is Tsafrir et al.'s mean of the user's two
previous runtimes (capped at the request, the request when the user has no history), to
show what a point prediction without a risk margin does.

Run: python bench/walltime_benchmark.py   (prints a markdown table)
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfpredict.advise.walltime import WalltimeAdvisor
from perfpredict.advise.walltime_features import history_features
from perfpredict.ingest.records import IngestOptions, RunRecord
from perfpredict.ingest.swf import parse

SHARED = Path(__file__).resolve().parents[2] / "shared" / "logs" / "swf"
LOGS = ("KTH-SP2-1996-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf")
TRAIN_FRACTION = 0.7


def load_log(path: Path) -> pd.DataFrame:
    """The log's jobs, sorted by submit time, as the store would hold them."""
    records = [asdict(item) for item in parse(path, IngestOptions(system=path.name))
               if isinstance(item, RunRecord)]
    frame = pd.DataFrame(records)
    frame["system"] = path.name
    return frame.sort_values("submit_epoch_s", kind="stable").reset_index(drop=True)


def score(runtime_s: np.ndarray, walltime_s: np.ndarray) -> tuple[float, float]:
    """(share killed, mean of min(runtime / walltime, 1) over the jobs that fit)."""
    killed = runtime_s > walltime_s
    fits = ~killed
    return float(killed.mean()), float(np.minimum(runtime_s[fits] / walltime_s[fits], 1).mean())


def last2_walltimes(log: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    features = history_features(log, test)
    last2 = np.exp(features["user_last2_mean"].to_numpy())
    request = test["requested_walltime_s"].to_numpy(dtype=float)
    walltime = np.fmin(last2, request)  # fmin: NaN (unknown) loses
    # No history and no request: the longest runtime seen so far is the only safe guess.
    fallback = float(log.loc[: test.index[0] - 1, "runtime_s"].max())
    return np.where(np.isnan(walltime), fallback, walltime)


def benchmark(path: Path, kill_risks: tuple[float, ...] = (0.05,),
              advisor: WalltimeAdvisor | None = None) -> list[dict[str, Any]]:
    """Rows of the results table for one log."""
    log = load_log(path)
    n_train = int(len(log) * TRAIN_FRACTION)
    train, test = log.iloc[:n_train], log.iloc[n_train:]
    runtime = test["runtime_s"].to_numpy(dtype=float)
    rows: list[dict[str, Any]] = []

    def add(method: str, walltime_s: np.ndarray, kill_risk: float | None = None,
            seconds: float | None = None) -> None:
        killed, ratio = score(runtime, walltime_s)
        rows.append({"log": path.name, "method": method, "kill_risk": kill_risk,
                     "killed": killed, "ratio": ratio, "n_jobs": len(test),
                     "seconds": seconds})

    request = test["requested_walltime_s"].to_numpy(dtype=float)
    if not np.isnan(request).all():
        add("users' requests", np.where(np.isnan(request), np.inf, request))
    add("last-2 (Tsafrir)", last2_walltimes(log, test))
    started = time.perf_counter()
    fitted = (advisor or WalltimeAdvisor()).fit(train)
    for kill_risk in kill_risks:
        advice = fitted.advise(log, test, kill_risk)
        walltime = np.array([row["walltime_s"] for row in advice])
        add("perfpredict advisor", walltime, kill_risk, time.perf_counter() - started)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| log | method | kill risk asked | killed | mean min(run/walltime, 1) of jobs "
             "that fit | jobs advised |", "|---|---|---|---|---|---|"]
    for row in rows:
        risk = "" if row["kill_risk"] is None else f"{row['kill_risk']:.3f}"
        lines.append(f"| {row['log']} | {row['method']} | {risk} | {row['killed']:.2%} | "
                     f"{row['ratio']:.3f} | {row['n_jobs']} |")
    return "\n".join(lines)


def main() -> int:
    missing = [name for name in LOGS if not (SHARED / name).exists()]
    if missing:
        print(f"shared logs not found under {SHARED}: {', '.join(missing)}", file=sys.stderr)
        return 1
    rows = []
    for name in LOGS:
        rows += benchmark(SHARED / name, kill_risks=(0.05, 0.028))
    print(markdown(rows))
    return 0 if all(math.isfinite(r["ratio"]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
