"""Scaling series: the runs of one application, system, problem size and layout, at
several scales.

A series is the unit every law is fitted to. Its scale is the node count when every run
records it, else the total rank count (RELeARN logs ranks, not nodes). Only runs that
measure the work count: failed and cancelled jobs are not runtimes of the work, and a
TIMEOUT is a lower bound, not a measurement.

Jobs from scheduler accounting join a series only with evidence that they are one
workload at several scales: a stated problem size or variant. A job name alone is not
that evidence: one executable runs many inputs, and a law fitted to them (382 unrelated
runs made "T(p) = 10.24 + 0.213 p") describes none. They are left out rather than kept
with a warning, because every series also teaches the pooled correction and the
intervals of all the others.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from perfpredict.counts import counted, plain
from perfpredict.laws.base import FloatArray
from perfpredict.remedies import INGEST, LOAD_DATASETS


class SeriesKey(NamedTuple):
    """What tells one series from another, each part as text ('' for unknown).

    ``variant`` holds what else tells curves of one code apart on one system (a build,
    input parameters such as VASP's NCORE and KPAR, a transport scheme): without it
    their runs mix into one series that no law fits.
    """

    app: str
    system: str
    problem_size: str
    variant: str
    ranks_per_node: str
    threads_per_rank: str

    @property
    def name(self) -> str:
        """The series as users read it: "app on system [problem size, variant, layout]",
        the layout's units singular for one, as a count of one is everywhere else.

        >>> SeriesKey("lulesh", "opal", "s=30", "", "1", "1").name
        'lulesh on opal [s=30, 1 rank/node, 1 thread/rank]'
        >>> SeriesKey("bert", "dgx", "", "v2", "8", "16").name
        'bert on dgx [default size, v2, 8 ranks/node, 16 threads/rank]'
        """
        label = self.problem_size or "default size"
        label += f", {self.variant}" if self.variant else ""
        label += f", {_count(self.ranks_per_node, 'rank')}/node" if self.ranks_per_node else ""
        label += (f", {_count(self.threads_per_rank, 'thread')}/rank" if self.threads_per_rank
                  else "")
        return f"{self.app} on {self.system} [{label}]"


def _count(key_text: str, noun: str) -> str:
    """A layout's count as its key part writes it ('1', '0.5') with ``noun``, plural
    unless one (:func:`~perfpredict.counts.counted`): "1 threads/rank" read as a typo.
    The number reads back as the text it was made from (:func:`key_part`)."""
    return counted(plain(float(key_text)), noun)


#: The run columns that make up a :class:`SeriesKey`, in its order.
SERIES_KEY = SeriesKey._fields
GOOD_STATES = {"", "COMPLETED", "SUCCESS", "SUCCESSFUL"}
#: Ingest formats of runs someone measured as a benchmark; the others (sacct, SWF, PBS,
#: LSF, Darshan) are scheduler accounting and I/O logs, jobs that ran for their own sake.
BENCHMARK_FORMATS = frozenset({"csv"})
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

    key: SeriesKey
    scale_unit: str  # "nodes" or "ranks"
    scale: FloatArray  # one entry per run
    runtime_s: FloatArray
    weak: bool
    #: strong scaling of a fixed amount of work, which cannot run faster than ideal
    #: scaling; False where the runs time a target (MLPerf's time to train to a target
    #: quality: the epochs to converge change with the global batch size, and so with the
    #: node count). See :func:`trains_to_target`.
    fixed_work: bool = True
    problem_size_num: float | None = None
    ranks_per_node: float | None = None
    threads_per_rank: float | None = None
    io_share: float | None = None  # measured I/O (data staging) share of runtime
    # one entry per run: when it was submitted (its start, else its end, where the
    # submission is unknown: both come later, so a run is never dated too early), NaN
    # where no time is known; None when the runs carry no times at all
    submitted_epoch_s: FloatArray | None = None
    # one entry per run: bytes it read and wrote (a Darshan log, or an io_bytes column),
    # NaN where unknown; None when no run of the series records it
    io_bytes: FloatArray | None = None

    @property
    def name(self) -> str:
        return self.key.name

    @property
    def scales(self) -> FloatArray:
        """Distinct measured scales, ascending.

        As ``np.unique``, which imports ``numpy.ma`` on its first call (to ask whether
        the array is masked): about 12 ms of a single ``perfpredict estimate`` of about
        0.15 s, against issue 5's budget of twice ``import numpy``."""
        ordered = np.sort(self.scale)
        first = np.ones(ordered.size, dtype=bool)
        first[1:] = ordered[1:] != ordered[:-1]
        return ordered[first]

    def medians(self) -> tuple[FloatArray, FloatArray]:
        """(distinct scales, median runtime at each): what laws are fitted to, so that
        repetitions do not outweigh scales."""
        scales = self.scales
        return scales, np.array([np.median(self.runtime_s[self.scale == s]) for s in scales])

    def select(self, mask: np.ndarray) -> Series:
        """The runs where ``mask`` (one bool per run) is true, in the same order."""
        def selected(values: FloatArray | None) -> FloatArray | None:
            return None if values is None else values[mask]

        # the per-run fields; replace() carries every per-series one
        return replace(self, scale=self.scale[mask], runtime_s=self.runtime_s[mask],
                       submitted_epoch_s=selected(self.submitted_epoch_s),
                       io_bytes=selected(self.io_bytes))

    def io_bytes_per_node(self) -> FloatArray:
        """Each run's I/O bytes per node (NaN where unknown, or where the series counts
        ranks and its ranks per node are unknown)."""
        unknown = np.full(self.scale.size, np.nan)
        if self.io_bytes is None:
            return unknown
        if self.scale_unit == "nodes":
            return self.io_bytes / self.scale
        if self.ranks_per_node:
            return self.io_bytes / (self.scale / self.ranks_per_node)
        return unknown


#: A scaling hint (the ``scaling`` field of a run) that says the runs time a target
#: rather than a fixed amount of work: "strong (fixed task: train to target quality)" in
#: the bundled MLPerf Training data set, "strong(v0.7: single-model time-to-train)" in
#: MLPerf HPC's first round (its later rounds' hint is "strong" alone).
_TO_TARGET = re.compile(r"time.to.train|to.target", re.IGNORECASE)


def trains_to_target(scaling_hint: str) -> bool:
    """Whether a series' scaling hint says its runs time a target, so that its work may
    change with scale and it may run faster than ideal scaling (MLPerf Training's
    time-to-train did for 8% and 16% of its store-cut test runs in extrapolation and
    few-shot; the HPC codes' fixed work for 0-2%: docs/accuracy.md, "The parts")."""
    return bool(_TO_TARGET.search(scaling_hint))


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


def scaling_study_runs(runs):  # type: ignore[no-untyped-def]
    """The runs that can be part of a scaling study: benchmark runs, and scheduler jobs
    with a stated problem size or variant (see the module docstring). A frame without a
    ``source_format`` column (``runs_frame`` gives one) is taken as benchmark runs."""
    if runs.empty or "source_format" not in runs:
        return runs
    return runs[_studied(runs)]


def unstudied_jobs(frame) -> tuple[int, list[str]]:  # type: ignore[no-untyped-def]
    """How many completed scheduler jobs of a ``runs_frame`` no series takes, for want of a
    stated problem size or variant, and their formats. Only scheduler jobs are looked
    at, so a store of benchmark runs pays nearly nothing (reading a million runs' states
    takes a second)."""
    if frame.empty or "source_format" not in frame:
        return 0, []
    jobs = frame[~frame["source_format"].isin(BENCHMARK_FORMATS)]
    jobs = usable_runs(jobs[~_studied(jobs)])
    return len(jobs), sorted(set(jobs["source_format"]))


def unstudied_phrase(n_jobs: int, formats: list[str]) -> str:
    """:func:`unstudied_jobs` as a user reads it: "382 completed runs are scheduler jobs
    (swf) with no problem size or variant"."""
    return (f"{n_jobs} completed runs are scheduler jobs ({', '.join(formats)}) with no "
            "problem size or variant")


def unstudied_note(n_jobs: int, formats: list[str]) -> str | None:
    """What ``train`` says of the jobs :func:`unstudied_jobs` counts, trained or not; None
    where there are none."""
    if not n_jobs:
        return None
    return (f"{unstudied_phrase(n_jobs, formats)}, not scaling studies, so the runtime "
            "predictor leaves them out")


def _studied(runs):  # type: ignore[no-untyped-def]
    """Which runs :func:`scaling_study_runs` keeps, as a mask."""
    stated = _stated(runs["problem_size"])
    if "variant" in runs:
        stated |= _stated(runs["variant"])
    return runs["source_format"].isin(BENCHMARK_FORMATS) | stated


def _stated(column):  # type: ignore[no-untyped-def]
    return column.astype(object).where(column.notna(), "").astype(str).str.strip() != ""


def why_no_series(frame) -> str:  # type: ignore[no-untyped-def]
    """Why one application's runs (a ``runs_frame``) gave no series of two or more
    measured scales, naming what was found, for a user who asks to estimate it."""
    usable = usable_runs(frame)
    if usable.empty:
        return (f"its {len(frame)} runs in the store measure no completed work (failed, "
                "cancelled, timed out, or no runtime)")
    studied = scaling_study_runs(usable)
    if studied.empty:
        return (f"its {unstudied_phrase(*unstudied_jobs(usable))}, so nothing shows they "
                "are one workload at several scales: they are not a controlled scaling "
                "study; run it on one input at several node counts and ingest those runs "
                "as CSV with a problem_size column")
    series = build_series(studied)
    found = "; ".join(f"{s.name}: {counted(s.runtime_s.size, 'run')} at "
                      f"{counted(plain(s.scales[0]), s.scale_unit.removesuffix('s'))}"
                      for s in series[:6])
    more = f"; and {len(series) - 6} more" if len(series) > 6 else ""
    return ("its runs form no series of 2+ scales (one system, problem size, variant and "
            f"layout at two node counts or more); found {found}{more}; run it at another "
            "node count with the same input and layout")


#: Why an empty store gives nothing to learn from, and what to do: ``train``'s and
#: ``evaluate``'s (which said "none of the store's 0 runs measured completed work").
NO_RUNS = (f"the store holds no runs; ingest some ({INGEST}) or the bundled data sets "
           f"({LOAD_DATASETS})")


def why_no_training_series(frame) -> str:  # type: ignore[no-untyped-def]
    """Why a store's runs (a ``runs_frame``) gave the runtime predictor no series of three
    or more measured scales, for ``train``'s report: a store of scheduler accounting
    lists applications at many node counts (``runs stats``), and without this a user
    reads "no series with 3+ measured scales" as a fault in perfpredict."""
    if frame.empty:
        return NO_RUNS
    usable = usable_runs(frame)
    if usable.empty:
        return (f"none of its {len(frame)} runs measures completed work (failed, "
                "cancelled, timed out, or no runtime)")
    studied = scaling_study_runs(usable)
    why = "no series (application, system, problem size, variant, layout) has 3+ scales"
    if not studied.empty:
        most = max(s.scales.size for s in build_series(studied))
        why += f" (the most any has is {most})"
        if most == 2:  # the predictor answering fits those at the estimate
            why += ("; 'perfpredict estimate' answers its series of two node counts "
                    "without training")
    if note := unstudied_note(*unstudied_jobs(usable)):
        why += f"; {note}"
    return (why + "; ingest runs of one input at three or more node counts as CSV with a "
            "problem_size column, or 'perfpredict datasets load'")


def build_series(frame) -> list[Series]:  # type: ignore[no-untyped-def]
    """Group a runs DataFrame (``perfpredict.store.queries.runs_frame``) into series.

    Series are found and their runs ordered with array operations on the whole frame,
    then cut from the sorted columns: a pandas groupby pays about 2 ms of overhead per
    group, and a Python step per run about as much in total, minutes and tens of seconds
    for the tens of thousands of series and millions of runs a center's store holds.
    """
    runs = scaling_study_runs(usable_runs(frame))
    if runs.empty:
        return []
    group, keys = _series_groups(runs)
    nodes, total_ranks, runtime_all, size_num_all = (
        runs[c].to_numpy(dtype=float, na_value=np.nan)
        for c in ("nodes", "total_ranks", "runtime_s", "problem_size_num"))
    # the scale is the node count where every run of the series records it
    use_nodes = np.bincount(group, weights=np.isnan(nodes), minlength=len(keys)) == 0
    scale_all = np.where(use_nodes[group], nodes, total_ranks)
    rows = np.flatnonzero(~np.isnan(scale_all) & (scale_all > 0))
    size_num = _first_per_group(group[rows], size_num_all[rows], len(keys))
    submitted_all = _submitted(runs)
    io_all = (runs["io_bytes"].to_numpy(dtype=float, na_value=np.nan) if "io_bytes" in runs
              else np.full(len(runs), np.nan))
    # series after series, each by scale, runs of equal scale in frame order
    rows = rows[np.lexsort((scale_all[rows], group[rows]))]
    n_rows = np.bincount(group[rows], minlength=len(keys))
    start = np.cumsum(n_rows) - n_rows
    extra_all = runs["extra"].to_numpy(dtype=object)
    has_extra = np.fromiter((isinstance(e, dict) and bool(e) for e in extra_all), dtype=bool,
                            count=extra_all.size)
    series: list[Series] = []
    for g, key in enumerate(keys):
        mine = rows[start[g]:start[g] + n_rows[g]]
        if not mine.size:
            continue
        hint, io_share = "", None
        if has_extra[mine].any():
            in_frame_order = np.sort(mine)
            hint, io_share = _extras(extra_all[in_frame_order], runtime_all[in_frame_order])
        series.append(Series(
            key=key,
            scale_unit="nodes" if use_nodes[g] else "ranks",
            scale=scale_all[mine],
            runtime_s=runtime_all[mine],
            weak=_is_weak(key.problem_size, hint),
            fixed_work=not trains_to_target(hint),
            problem_size_num=None if np.isnan(size_num[g]) else float(size_num[g]),
            ranks_per_node=_float_or_none(key.ranks_per_node),
            threads_per_rank=_float_or_none(key.threads_per_rank),
            io_share=io_share,
            submitted_epoch_s=None if submitted_all is None else submitted_all[mine],
            io_bytes=None if np.isnan(io_all[mine]).all() else io_all[mine],
        ))
    return series


def _submitted(runs) -> FloatArray | None:  # type: ignore[no-untyped-def]
    """Each run's submission time, else its start, else its end (epoch seconds, NaN when
    none is known); None when the frame has no time columns (benchmark tables)."""
    columns = [c for c in ("submit_epoch_s", "start_epoch_s", "end_epoch_s") if c in runs]
    if not columns:
        return None
    times = runs[columns].to_numpy(dtype=float, na_value=np.nan)
    first_known = np.argmax(~np.isnan(times), axis=1)
    return times[np.arange(times.shape[0]), first_known]


def _series_groups(runs) -> tuple[np.ndarray, list[SeriesKey]]:  # type: ignore[no-untyped-def]
    """Each run's series (an index into the keys) and the series keys, sorted.

    Only each column's distinct values go through :func:`key_part`; runs are matched
    by codes (a hash table per column), not by a Python step per run. A frame without a
    ``variant`` column (data sets that do not tell builds or inputs apart) has none.
    """
    import pandas as pd

    combined = np.zeros(len(runs), dtype=np.int64)
    columns = []
    for name in SERIES_KEY:
        values = runs[name] if name in runs or name != "variant" else np.full(len(runs), "")
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        texts = [key_part(v) for v in uniques]
        # values with the same text ('36' and 36.0) are one key part
        text_code: dict[str, int] = {}
        codes = np.array([text_code.setdefault(t, len(text_code)) for t in texts],
                         dtype=np.int64)[codes]
        columns.append((codes, list(text_code)))
        combined = pd.factorize(combined * len(text_code) + codes)[0].astype(np.int64)
    n_groups = int(combined.max()) + 1
    first = np.zeros(n_groups, dtype=np.int64)
    first[combined[::-1]] = np.arange(len(runs) - 1, -1, -1)  # the first run of each
    keys = [SeriesKey(*(texts[codes[row]] for codes, texts in columns))
            for row in first.tolist()]
    rank = sorted(range(n_groups), key=keys.__getitem__)
    position = np.empty(n_groups, dtype=np.int64)
    position[rank] = np.arange(n_groups)
    return position[combined], [keys[g] for g in rank]


def _first_per_group(group: np.ndarray, values: FloatArray, n_groups: int) -> FloatArray:
    """Per group, the first of its ``values`` (in frame order) that is not NaN, else NaN."""
    known = np.flatnonzero(~np.isnan(values))
    groups, first = np.unique(group[known], return_index=True)
    out = np.full(n_groups, np.nan)
    out[groups] = values[known[first]]
    return out


def _extras(extras: np.ndarray, runtime: FloatArray) -> tuple[str, float | None]:
    """The scaling hint and the I/O share a series' runs (in frame order) record in
    their extra fields: the first hint given, and the median staging share if every
    run records its staging time."""
    fields = [e if isinstance(e, dict) else {} for e in extras]
    hint = next((str(e["scaling"]) for e in fields if e.get("scaling")), "")
    staging = [float(e["staging_s"]) for e in fields if _finite(e.get("staging_s"))]
    io_share = (float(np.median(np.asarray(staging) / runtime))
                if len(staging) == len(runtime) else None)
    return hint, io_share


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _float_or_none(text: str) -> float | None:
    return float(text) if text else None
