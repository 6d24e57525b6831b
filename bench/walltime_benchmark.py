"""Walltime advice against the users' own requests and the "last-2" predictor.

Time-ordered split of each shared SWF log: the advisor is fitted on the first 70% of jobs by
submit time and advises the last 30%. While advising, the history it reads is the whole log,
but only jobs that *ended before* each advised job was submitted are visible (the store as
it would stand if accounting were ingested as jobs finish; ``advise walltime`` reads a
replayed log the same way); the model is not refitted.

Reported per log and method, over all advised jobs (failed and cancelled included, as in
the users' figure): the share killed (runtime > walltime), the mean of min(runtime /
walltime, 1) over the jobs that fit, the mean reported kill probability, and the share of
jobs whose advice is their request. "last-2" is Tsafrir et al.'s mean of the user's two
previous runtimes (capped at the request, the request when the user has no history), to
show what a point prediction without a risk margin does.

Outputs (``--out``, default ``docs/``): ``walltime-tradeoff.csv`` (one row per log, method
and risk) and ``walltime-tradeoff.png`` (killed share against mean runtime/walltime), and
on stdout the same table plus a reliability table (reported kill probability in bins
against the share of those jobs killed).

Only the KTH-SP2 log among the shared ones has both requests and enough jobs to learn
from; NASA-iPSC has no requests (advice is uncapped there); the sacct, PBS, LSF and SGE
samples hold 1 to 16 jobs each.

Run: python -m bench.walltime_benchmark [--out DIR]
     python -m bench.walltime_benchmark --speed   (advise 100k generated jobs, timed)
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfpredict.advise.walltime import WalltimeAdvisor
from perfpredict.advise.walltime.features import history_features
from perfpredict.ingest.records import IngestOptions, RunRecord
from perfpredict.ingest.swf import parse

SHARED = Path(__file__).resolve().parents[2] / "shared" / "logs" / "swf"
DOCS = Path(__file__).resolve().parents[1] / "docs"
LOGS = ("KTH-SP2-1996-2.1-cln.swf.gz", "NASA-iPSC-1993-3.1-cln.swf")
TRAIN_FRACTION = 0.7
RISKS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.125, 0.15, 0.175, 0.20)
#: Risks at which --allow-above-request is measured too.
ABOVE_REQUEST_RISKS = (0.05, 0.10)
RELIABILITY_BINS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


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


def reliability(runtime_s: np.ndarray, advice: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Advised jobs binned by reported kill probability: predicted against realised."""
    reported = np.array([row["kill_probability"] for row in advice])
    killed = runtime_s > np.array([row["walltime_s"] for row in advice])
    bins = np.digitize(reported, RELIABILITY_BINS[1:-1], right=True)
    rows = []
    for b in range(len(RELIABILITY_BINS) - 1):
        mine = bins == b
        if mine.any():
            rows.append({"bin": f"{RELIABILITY_BINS[b]:.2f}-{RELIABILITY_BINS[b + 1]:.2f}",
                         "n_jobs": int(mine.sum()), "predicted": float(reported[mine].mean()),
                         "killed": float(killed[mine].mean())})
    return rows


def benchmark(path: Path, kill_risks: tuple[float, ...] = RISKS,
              above_request_risks: tuple[float, ...] = ABOVE_REQUEST_RISKS,
              advisor: WalltimeAdvisor | None = None,
              reliability_risks: tuple[float, ...] = ()) -> dict[str, Any]:
    """The results of one log: ``rows`` of the trade-off table and, per risk in
    ``reliability_risks``, a reliability table."""
    log = load_log(path)
    n_train = int(len(log) * TRAIN_FRACTION)
    train, test = log.iloc[:n_train], log.iloc[n_train:]
    runtime = test["runtime_s"].to_numpy(dtype=float)
    rows: list[dict[str, Any]] = []
    tables: dict[float, list[dict[str, Any]]] = {}

    def add(method: str, walltime_s: np.ndarray, kill_risk: float | None = None,
            advice: list[dict[str, Any]] | None = None, seconds: float | None = None) -> None:
        killed, ratio = score(runtime, walltime_s)
        rows.append({
            "log": path.name, "method": method, "kill_risk": kill_risk, "killed": killed,
            "ratio": ratio, "n_jobs": len(test), "seconds": seconds,
            "mean_kill_probability": (None if advice is None else float(np.mean(
                [r["kill_probability"] for r in advice]))),
            "at_request": (None if advice is None else float(np.mean(
                [r["capped_at_request"] for r in advice])))})

    request = test["requested_walltime_s"].to_numpy(dtype=float)
    has_requests = not np.isnan(request).all()
    if has_requests:
        add("users' requests", np.where(np.isnan(request), np.inf, request))
    add("last-2 (Tsafrir)", last2_walltimes(log, test))
    fitted = (advisor or WalltimeAdvisor()).fit(train)
    modes = [(False, kill_risks)] + ([(True, above_request_risks)] if has_requests else [])
    for allow_above, risks in modes:
        for kill_risk in risks:
            started = time.perf_counter()
            advice = fitted.advise(log, test, kill_risk, allow_above_request=allow_above)
            walltime = np.array([row["walltime_s"] for row in advice])
            add("perfpredict, above request allowed" if allow_above else "perfpredict",
                walltime, kill_risk, advice, time.perf_counter() - started)
            if not allow_above and kill_risk in reliability_risks:
                tables[kill_risk] = reliability(runtime, advice)
    return {"rows": rows, "reliability": tables}


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| log | method | kill risk asked | killed | mean min(run/walltime, 1) of jobs "
             "that fit | mean reported kill probability | advice = request | jobs advised |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        risk = "" if row["kill_risk"] is None else f"{row['kill_risk']:.3f}"
        mean_p = ("" if row["mean_kill_probability"] is None
                  else f"{row['mean_kill_probability']:.2%}")
        at_request = "" if row["at_request"] is None else f"{row['at_request']:.0%}"
        lines.append(f"| {row['log']} | {row['method']} | {risk} | {row['killed']:.2%} | "
                     f"{row['ratio']:.3f} | {mean_p} | {at_request} | {row['n_jobs']} |")
    return "\n".join(lines)


def reliability_markdown(log: str, kill_risk: float, table: list[dict[str, Any]]) -> str:
    lines = [f"{log} at --kill-risk {kill_risk:g}:", "",
             "| reported kill probability | jobs | mean reported | share killed |",
             "|---|---|---|---|"]
    lines += [f"| {r['bin']} | {r['n_jobs']} | {r['predicted']:.2%} | {r['killed']:.2%} |"
              for r in table]
    return "\n".join(lines)


def write_curve(rows: list[dict[str, Any]], out: Path) -> tuple[Path, Path]:
    """The trade-off as CSV and PNG: killed share against mean runtime/walltime, per log,
    the advisor's risks as a line, the users' requests and last-2 as points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = out / "walltime-tradeoff.csv", out / "walltime-tradeoff.png"
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    logs = sorted({r["log"] for r in rows})
    fig, axes = plt.subplots(1, len(logs), figsize=(5.5 * len(logs), 4.2), squeeze=False)
    for ax, log in zip(axes[0], logs, strict=True):
        mine = [r for r in rows if r["log"] == log]
        for method, style in (("perfpredict", "o-"), ("perfpredict, above request allowed",
                                                       "s--")):
            line = [r for r in mine if r["method"] == method]
            if line:
                ax.plot([100 * r["killed"] for r in line], [r["ratio"] for r in line], style,
                        label=f"{method} (--kill-risk 0.01-0.20)" if method == "perfpredict"
                        else method)
        for method, marker in (("users' requests", "*"), ("last-2 (Tsafrir)", "x")):
            point = [r for r in mine if r["method"] == method]
            if point:
                ax.plot(100 * point[0]["killed"], point[0]["ratio"], marker, markersize=11,
                        label=method)
        ax.set_title(log)
        ax.set_xlabel("jobs killed (%)")
        ax.set_ylabel("mean min(runtime / walltime, 1) of jobs that fit")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return csv_path, png_path


def advise_speed(n_history: int = 300_000, n_advised: int = 100_000) -> dict[str, float]:
    """Seconds to advise ``n_advised`` generated jobs with a store of ``n_history`` earlier
    ones (the advisor fitted beforehand, as ``train`` leaves it), and to fit it; wall and
    CPU time (the process's, all threads), since a shared machine stretches the wall time."""
    from bench.generate_swf import write_log

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "jobs.swf"
        write_log(path, n_history + n_advised)
        log = load_log(path)
    history, advised = log.iloc[:n_history], log.iloc[n_history:]
    started, started_cpu = time.perf_counter(), time.process_time()
    advisor = WalltimeAdvisor().fit(history)
    fitted, fitted_cpu = time.perf_counter(), time.process_time()
    advisor.advise(log, advised, 0.05)
    return {"fit_s": fitted - started, "fit_cpu_s": fitted_cpu - started_cpu,
            "advise_s": time.perf_counter() - fitted,
            "advise_cpu_s": time.process_time() - fitted_cpu, "n_advised": float(len(advised))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS)
    parser.add_argument("--speed", action="store_true")
    options = parser.parse_args(argv)
    if options.speed:
        result = advise_speed()
        print(f"advised {result['n_advised']:.0f} jobs in {result['advise_s']:.1f} s "
              f"({result['advise_cpu_s']:.1f} s CPU); advisor fitted in "
              f"{result['fit_s']:.1f} s ({result['fit_cpu_s']:.1f} s CPU)")
        return 0
    missing = [name for name in LOGS if not (SHARED / name).exists()]
    if missing:
        print(f"shared logs not found under {SHARED}: {', '.join(missing)}", file=sys.stderr)
        return 1
    rows = []
    for name in LOGS:
        result = benchmark(SHARED / name, reliability_risks=(0.05, 0.10))
        rows += result["rows"]
        for kill_risk, table in result["reliability"].items():
            print(reliability_markdown(name, kill_risk, table) + "\n")
    print(markdown(rows))
    csv_path, png_path = write_curve(rows, options.out)
    print(f"\nwrote {csv_path} and {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
