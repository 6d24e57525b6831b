"""Scaling series: the runs of one application, system, problem size and layout, at
several scales.

A series is the unit every law is fitted to. Its scale is the node count when every run
records it, else the total rank count (RELeARN logs ranks, not nodes). Only runs that
measure the work count: failed and cancelled jobs are not runtimes of the work, and a
TIMEOUT is a lower bound, not a measurement.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from perfpredict.laws.base import FloatArray

SERIES_KEY = ("app", "system", "problem_size", "ranks_per_node", "threads_per_rank")
GOOD_STATES = {"", "COMPLETED", "SUCCESS", "SUCCESSFUL"}
_WEAK_LABEL = re.compile(r"(per|/)\s*(rank|node|gpu|process|proc|core)\b",
                         re.IGNORECASE)


def key_part(value: Any) -> str:
    """Series key parts as text: '' for unknown, '36' for 36.0."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass
class Series:
    """The usable runs of one series, sorted by scale."""

    key: tuple[str, ...]
    scale_unit: str  # "nodes" or "ranks"
    scale: FloatArray  # one entry per run
    runtime_s: FloatArray
    weak: bool
    problem_size_num: float | None = None
    ranks_per_node: float | None = None
    threads_per_rank: float | None = None
    io_share: float | None = None  # measured I/O (data staging) share of runtime

    @property
    def name(self) -> str:
        app, system, size, rpn, threads = self.key
        layout = f", {rpn} ranks/node" if rpn else ""
        layout += f", {threads} threads/rank" if threads else ""
        return f"{app} on {system} [{size or 'default size'}{layout}]"

    @property
    def scales(self) -> FloatArray:
        """Distinct measured scales, ascending."""
        return np.unique(self.scale)

    def medians(self) -> tuple[FloatArray, FloatArray]:
        """(distinct scales, median runtime at each): what laws are fitted to, so that
        repetitions do not outweigh scales."""
        scales = self.scales
        return scales, np.array([np.median(self.runtime_s[self.scale == s]) for s in scales])

    def subset(self, keep_scales: Iterable[float]) -> Series:
        mask = np.isin(self.scale, np.asarray(list(keep_scales), dtype=float))
        return Series(self.key, self.scale_unit, self.scale[mask], self.runtime_s[mask],
                      self.weak, self.problem_size_num, self.ranks_per_node,
                      self.threads_per_rank, self.io_share)


def _is_weak(label: str, scaling_hint: str) -> bool:
    if scaling_hint:
        return scaling_hint.lower().startswith("weak")
    return bool(_WEAK_LABEL.search(label))


def usable_runs(frame):  # type: ignore[no-untyped-def]
    """Runs that measure the work: positive runtime, not censored, completed."""
    if frame.empty:
        return frame
    # first word only: "CANCELLED by 123" is CANCELLED
    state = (frame["state"].astype(object).where(frame["state"].notna(), "").astype(str)
             .str.strip().str.upper().str.partition(" ")[0])
    censored = frame["censored"].fillna(False).astype(bool)
    return frame[(frame["runtime_s"] > 0) & ~censored & state.isin(GOOD_STATES)]


def build_series(frame) -> list[Series]:  # type: ignore[no-untyped-def]
    """Group a runs DataFrame (``perfpredict.store.queries.runs_frame``) into series.

    The columns are taken out of pandas once and each series is cut from numpy arrays:
    a pandas groupby pays about 2 ms of overhead per group, minutes for the tens of
    thousands of series a center's store holds.
    """
    runs = usable_runs(frame)
    if runs.empty:
        return []
    rows_of: dict[tuple[str, ...], list[int]] = {}
    key_parts = [[key_part(v) for v in runs[c]] for c in SERIES_KEY]
    for row, key in enumerate(zip(*key_parts, strict=True)):
        rows_of.setdefault(key, []).append(row)
    nodes, total_ranks, runtime_all, size_num_all = (
        runs[c].to_numpy(dtype=float, na_value=np.nan)
        for c in ("nodes", "total_ranks", "runtime_s", "problem_size_num"))
    extra_all = runs["extra"].to_numpy(dtype=object)
    series: list[Series] = []
    for key in sorted(rows_of):  # the order of groupby(sort=True) on the key parts
        rows = np.asarray(rows_of[key])
        use_nodes = not np.isnan(nodes[rows]).any()
        scale = (nodes if use_nodes else total_ranks)[rows]
        ok = ~np.isnan(scale) & (scale > 0)
        rows, scale = rows[ok], scale[ok]
        if not rows.size:
            continue
        order = np.argsort(scale, kind="stable")
        extras = [e if isinstance(e, dict) else {} for e in extra_all[rows]]
        hint = next((str(e["scaling"]) for e in extras if e.get("scaling")), "")
        staging = [float(e["staging_s"]) for e in extras
                   if _finite(e.get("staging_s"))]
        runtime = runtime_all[rows]
        io_share = (float(np.median(np.asarray(staging) / runtime[: len(staging)]))
                    if len(staging) == len(runtime) else None)
        size_num = size_num_all[rows][~np.isnan(size_num_all[rows])]
        series.append(Series(
            key=key,
            scale_unit="nodes" if use_nodes else "ranks",
            scale=scale[order],
            runtime_s=runtime[order],
            weak=_is_weak(key[2], hint),
            problem_size_num=float(size_num[0]) if size_num.size else None,
            ranks_per_node=_float_or_none(key[3]),
            threads_per_rank=_float_or_none(key[4]),
            io_share=io_share,
        ))
    return series


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _float_or_none(text: str) -> float | None:
    return float(text) if text else None
