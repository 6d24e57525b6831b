"""Peer curves: the speed-up that other series of the same application and input measured
between two node counts.

A center often holds one code's input measured more than once: on another system, in
another build or parallel layout (VASP's NCORE and KPAR), by another MLPerf submitter.
Where one of those series has measured both the largest scale of the series asked about
and the scale asked for, its measured speed-up between the two is direct evidence of
what lies beyond the series' own range, evidence no law fitted to the series' own runs
has. :class:`PeerCurves` keeps those curves per (application, input, unit of scale) and
answers with the median speed-up over the peers that cover a query
(:meth:`RuntimeModel.predict_columns <perfpredict.model.runtime.RuntimeModel.predict_columns>`
weighs it with the hybrid's own prediction).

Only strong scaling with a known input takes part: a weak-scaling curve is flat by
design, and series whose input is unknown ('') may run different inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from perfpredict.laws.base import FloatArray
from perfpredict.model.series import SeriesKey

#: What a series shares with its peers: application, input and unit of scale. Not the
#: layout: peers of the same ranks per node and threads per rank only helped VASP's and
#: Castro's median errors but lost MLPerf Training the other systems' runs, its best
#: evidence (docs/accuracy.md, "Tried and rejected").
PeerGroup = tuple[str, str, str]
#: The scales a peer has measured at least: as many as a series the hybrid trains on, so
#: that a backtest's peers (training series) and an estimate's (every series of the
#: trained store) are the same. Peers of two scales too lowered the acceptance store's
#: MAPE but raised it in the other two stores of ``--across-stores`` (docs/accuracy.md).
MIN_SCALES = 3


def _group(key: SeriesKey, scale_unit: str) -> PeerGroup:
    """The :data:`PeerGroup` of a series: where its peers are kept and looked up."""
    return key.app, key.problem_size, scale_unit


@dataclass(frozen=True)
class Curve:
    """One peer's measured curve: log of its distinct scales (ascending) and of the
    median runtime at each."""

    key: SeriesKey
    log_scale: FloatArray
    log_runtime: FloatArray


@dataclass
class PeerCurves:
    """The measured strong-scaling curves of a store, grouped by :data:`PeerGroup`."""

    curves: dict[PeerGroup, list[Curve]] = field(default_factory=dict)

    @classmethod
    def of(cls, measured: Iterable[tuple[SeriesKey, str, bool, ArrayLike, ArrayLike]]
           ) -> PeerCurves:
        """The curves of ``measured``: per series its key, unit of scale, whether it
        scales weakly, its distinct scales (ascending) and the median runtime at each.
        Series that cannot be a peer (weak scaling, an unknown input, fewer than
        :data:`MIN_SCALES` scales) are left out."""
        out = cls()
        for key, scale_unit, weak, scales, medians_s in measured:
            log_scale = np.log(np.asarray(scales, dtype=float))
            if weak or not key.problem_size or log_scale.size < MIN_SCALES:
                continue
            out.curves.setdefault(_group(key, scale_unit), []).append(
                Curve(key, log_scale, np.log(np.asarray(medians_s, dtype=float))))
        return out

    def log_speedup(self, key: SeriesKey, scale_unit: str, scale_from: float,
                    scales: FloatArray) -> tuple[FloatArray, np.ndarray]:
        """At each of ``scales``: the median over the peers of the series ``key`` (the
        other series of its group) whose measured range holds both ``scale_from`` and
        that scale of log T(scale) - log T(scale_from), each read off the peer's curve
        between its measured scales (linear in log-log); NaN where no peer holds both.
        And the number of peers each median is over."""
        log_to = np.log(np.asarray(scales, dtype=float))
        log_from = float(np.log(scale_from))
        rows = []
        for curve in self.curves.get(_group(key, scale_unit), []):
            x, y = curve.log_scale, curve.log_runtime
            if curve.key == key or not x[0] <= log_from <= x[-1]:
                continue
            covered = (log_to >= x[0]) & (log_to <= x[-1])
            rows.append(np.where(covered, np.interp(log_to, x, y) - np.interp(log_from, x, y),
                                 np.nan))
        ratios = np.array(rows).reshape(len(rows), log_to.size)
        return _nan_median(ratios)


def _nan_median(values: FloatArray) -> tuple[FloatArray, np.ndarray]:
    """Per column of ``values``, the median of its finite entries (NaN where none), and
    how many there are.

    ``np.nanmedian`` says the same, but on few rows it goes through ``numpy.ma``, whose
    import was a tenth of a single ``perfpredict estimate`` (about 12 ms of 0.15 s;
    issue 5's budget is twice ``import numpy``). Sorting puts the NaNs last, so the
    middle of each column's first ``count`` entries is its median."""
    ordered = np.sort(values, axis=0)
    count = np.sum(np.isfinite(values), axis=0)
    columns = np.arange(values.shape[1])
    median = np.full(values.shape[1], np.nan)
    some = count > 0
    low, high = (count[some] - 1) // 2, count[some] // 2
    median[some] = 0.5 * (ordered[low, columns[some]] + ordered[high, columns[some]])
    return median, count


__all__ = ["Curve", "PeerCurves", "PeerGroup"]
