"""Build the bundled data sets from the raw copies in ../shared/datasets.

Run by maintainers, not users: ``python datasets/prepare.py``. It writes one
``<name>/runs.csv.gz`` per data set in the ``ingest csv`` vocabulary and copies its
SOURCE.txt, and prints each file's checksum: a file that changed is a new release, whose
checksum goes last in its ``RELEASES`` entry (``datasets/__init__.py``) so that
``perfpredict datasets load`` replaces the runs of the earlier ones. What it changes, and
why:

* Only unique, successful runs are kept (MLPerf re-ships earlier results byte-identically
  in later rounds; aborted runs did not train to target).
* ``system`` names the scaling series' machine and software stack: MLPerf's per-submission
  system name carries the node count ("dgxa100_n8_..."), so its ``system_family`` is used,
  with the submitter. The MLPerf round goes into ``problem_size`` because each round has
  its own quality targets and rules.
* Every MLPerf run times training to a target quality, and its ``scaling`` hint says so
  (MLPerf HPC's rounds after the first say only ``strong``): such a series' work changes
  with the batch size at each scale, so perfpredict does not bound its intervals at
  ideal scaling (``perfpredict.model.series.trains_to_target``).
* RELeARN's Barnes-Hut ``theta`` changes the work, so it is part of the problem size.
* LULESH ran with 27 to 36 ranks per node; its scale is the total rank count.
* Castro's measurement campaigns (a date, with the Castro/AMReX and ROCm versions of that
  day) are builds: the campaign joins the ``variant`` (network, integrator, grid size), so
  that tables measured years apart with other software are separate series.
* PencilFFTs' node counts are not measured but derived (ranks / 40, rounded up, so 256
  ranks are "7 nodes" with one partly filled); the rank count is the scale, and the
  derived count is kept as the extra column ``slurm_nodes``.
* Everything else in the raw rows is kept as extra columns.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from perfpredict.ingest._text.lines import file_sha256
from perfpredict.model.series import trains_to_target

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "datasets"


def _mlperf(raw: pd.DataFrame) -> pd.DataFrame:
    df = raw[raw["duplicate_of"].isna() & (raw["run_status"] == "success")].copy()
    df = df[df["nodes"].notna() & (df["runtime_s"] > 0)]
    df["system"] = df["system_family"] + " (" + df["submitter"] + ")"
    df["problem_size"] = df["round"] + " " + df["problem_size"]
    if "scaling" in df and df["scaling"].str.startswith("weak").any():
        # MLPerf HPC "weak" submissions train many model instances at once; a row is one
        # instance at its own node count: a strong-scaling measurement under contention.
        concurrent = df["scaling"].str.startswith("weak")
        df.loc[concurrent, "problem_size"] = (df.loc[concurrent, "problem_size"]
                                              + " (one of many concurrent instances)")
        df.loc[concurrent, "scaling"] = "strong per instance (weak-scaling submission)"
    untold = ~df["scaling"].map(trains_to_target)
    df.loc[untold, "scaling"] = df.loc[untold, "scaling"] + ", time to train to target"
    df["ranks_per_node"] = df["ranks_per_node"].fillna(df["accelerators_per_node"])
    df["gpus"] = (df["nodes"] * df["accelerators_per_node"]).round()
    df["state"] = "COMPLETED"
    return df.drop(columns=["duplicate_of", "run_status", "source_path", "system_family"])


def _relearn(raw: pd.DataFrame) -> pd.DataFrame:
    df = raw.copy()
    df["system"] = "Lichtenberg"  # the catalog entry (TU Darmstadt)
    df["problem_size"] = (df["neurons_per_rank"].astype(str) + " neurons/rank, theta="
                          + df["theta"].astype(str))
    df["problem_size_num"] = df["neurons_per_rank"]
    df["job_id"] = df["slurm_job"].astype(str) + "." + df["repetition"].astype(str)
    return df.drop(columns=["source_path", "slurm_job", "start"])


def _lulesh(raw: pd.DataFrame) -> pd.DataFrame:
    df = raw.copy()
    df["system"] = "opal"  # the catalog entry (LLNL)
    df["problem_size"] = "s=30 per rank"
    df["problem_size_num"] = 27000
    # Ranks per node varied from run to run (27 to 36), so the series is one of total
    # ranks: keep the node layout as extra columns rather than as the series' layout.
    df = df.rename(columns={"nodes": "hosts", "ranks_per_node": "mean_ranks_per_host"})
    return df.drop(columns=["source_path"])


def _castro(raw: pd.DataFrame) -> pd.DataFrame:
    df = raw.copy()
    df["variant"] = df["variant"] + "|campaign=" + df["campaign"]
    return df.drop(columns=["source_path", "series"])


def _pencilffts(raw: pd.DataFrame) -> pd.DataFrame:
    df = raw.rename(columns={"nodes": "slurm_nodes"})
    return df.drop(columns=["source_path", "series"])


PREPARE = {
    "mlperf_training": _mlperf,
    "mlperf_hpc": _mlperf,
    "relearn": _relearn,
    "lulesh_thicket": _lulesh,
    "castro_scaling": _castro,
    "pencilffts_jeanzay": _pencilffts,
}


def bundled_note(name: str, n_raw_rows: int, n_runs: int) -> str:
    """The lines above a bundled SOURCE.txt's copy of the raw one: that text describes the
    raw extraction (MLPerf's ``duplicate_of`` and ``run_status`` columns, its "aborted rows
    kept, flagged"), which this file's runs no longer hold, so it says what was done."""
    kept = (" (unique, successful runs only: no duplicate_of or run_status column)"
            if PREPARE[name] is _mlperf else "")
    return (f"bundled: {name}/runs.csv.gz, made by datasets/prepare.py from the raw rows "
            f"described below ({n_raw_rows} raw rows -> {n_runs} runs{kept}, in the "
            "'ingest csv' columns); its docstring says what it changes and why. The rest of "
            "this file is the raw data's SOURCE.txt.\n\n")


def main() -> int:
    if not SHARED.is_dir():
        print(f"{SHARED} not found: the raw data sets live in the development workspace",
              file=sys.stderr)
        return 1
    for name, prepare in PREPARE.items():
        raw = pd.read_csv(SHARED / name / "runs.csv")
        out_dir = HERE / name
        out_dir.mkdir(exist_ok=True)
        frame = prepare(raw)
        frame.to_csv(out_dir / "runs.csv.gz", index=False,
                     compression={"method": "gzip", "mtime": 0})
        (out_dir / "SOURCE.txt").write_text(
            bundled_note(name, len(raw), len(frame))
            + (SHARED / name / "SOURCE.txt").read_text(encoding="utf-8"), encoding="utf-8")
        print(f"{name}: {len(raw)} raw rows -> {len(frame)} runs, sha256 "
              f"{file_sha256(out_dir / 'runs.csv.gz')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
