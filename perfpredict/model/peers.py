"""Peer curves: the speed-up that other series of the same application and input measured
between two node counts.

A center often holds one code's input measured more than once: on another system, in
another build or parallel layout (VASP's NCORE and KPAR), by another MLPerf submitter.
Where one of those series has measured both the largest scale of the series asked about
and the scale asked for, its measured speed-up between the two is direct evidence of
what lies beyond the series' own range, evidence no law fitted to the series' own runs
has. :class:`PeerCurves` keeps those curves per (application, input, unit of scale) and
answers with the median speed-up over the peers that cover a query, a peer fading out
over the doubling beyond its largest scale
(:meth:`RuntimeModel.predict_columns <perfpredict.model.runtime.RuntimeModel.predict_columns>`
weighs it with the hybrid's own prediction).

Only strong scaling with a known input takes part: a weak-scaling curve is flat by
design, and series whose input is unknown ('') may run different inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

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
#: How far beyond the largest scale it measured a peer still weighs in, in doublings:
#: its weight falls linearly from one there to none this far out (:class:`PeerSpeedup`).
#: Cut off at the end of its range, a
#: peer leaving the median stepped estimates between neighbouring node counts (by more
#: than 2% in 36 of the bundled predictor's 215 strong-scaling series, up to 18%); carried
#: on without end, a peer's pull cost Castro's and VASP's extrapolations, whose peers stop
#: where those codes still scale (docs/accuracy.md, "Tried and rejected"). Over the fade
#: a peer reads as its runtime at its largest scale (what np.interp reads beyond a
#: curve's end): no slope it did not measure is made up for it. Node counts that double
#: from the end of its range find it gone, as before.
FADE_DOUBLINGS = 1.0


def _group(key: SeriesKey, scale_unit: str) -> PeerGroup:
    """The :data:`PeerGroup` of a series: where its peers are kept and looked up."""
    return key.app, key.problem_size, scale_unit


class Curve(NamedTuple):
    """One peer's measured curve: log of its distinct scales (ascending) and of the
    median runtime at each."""

    key: SeriesKey
    log_scale: FloatArray
    log_runtime: FloatArray


class PeerCurves:
    """The measured strong-scaling curves of a store, grouped by :data:`PeerGroup`."""

    def __init__(self) -> None:
        self.curves: dict[PeerGroup, list[Curve]] = {}

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
                    scales: FloatArray) -> PeerSpeedup:
        """What the peers of the series ``key`` (the other series of its group whose
        measured range holds ``scale_from`` and reaches beyond it) say of
        log T(scale) - log T(scale_from) at each of ``scales``: each peer's curve read
        between its measured scales (linear in log-log) and, fading, up to
        :data:`FADE_DOUBLINGS` beyond the largest, where it reads as its runtime there."""
        log_to = np.log(np.asarray(scales, dtype=float))
        log_from = float(np.log(scale_from))
        peers = [c for c in self.curves.get(_group(key, scale_unit), [])
                 if c.key != key and c.log_scale[0] <= log_from < c.log_scale[-1]]
        values = np.full((len(peers), log_to.size), np.nan)
        weights = np.zeros(values.shape)
        for i, curve in enumerate(peers):
            x, y = curve.log_scale, curve.log_runtime
            # rounded so that a node count FADE_DOUBLINGS out finds the peer gone
            past_log2 = np.round((log_to - x[-1]) / np.log(2.0), 9)
            weights[i] = np.where(log_to >= x[0],
                                  np.clip(1.0 - past_log2 / FADE_DOUBLINGS, 0.0, 1.0), 0.0)
            # beyond x[-1], np.interp reads the runtime there: nothing the peer did not
            # measure is made up for it
            values[i] = np.where(weights[i] > 0,
                                 np.interp(log_to, x, y) - np.interp(log_from, x, y), np.nan)
        return PeerSpeedup.of(values, weights, tuple(c.key for c in peers))


class PeerSpeedup(NamedTuple):
    """The peers' speed-up at each of some scales, as :meth:`PeerCurves.log_speedup`
    reads it.

    How far beyond its largest scale a peer's measurement still holds is not known:
    taken as anywhere from nought to :data:`FADE_DOUBLINGS`, alike for every peer, a
    peer's weight is the chance that the query lies within that reach of its end, and
    the peers say the expectation, over the reach, of the median over those within it.
    With every weight one or nought that is the plain median over the peers that
    measured both scales; as peers fade, the estimate slides from the median with them to
    the median without them instead of stepping (a peer leaving the median had stepped
    the bundled predictor's estimates by up to 18% between neighbouring node counts)."""

    #: The expected median log speed-up, given that some peer weighs in (NaN where none can).
    log_speedup: FloatArray
    #: Per scale, the peers' weights, largest first: the chance that k or more weigh in
    #: is the k-th.
    ranked_weights: FloatArray
    #: Per scale, the number of peers with any weight there.
    n_peers: np.ndarray
    #: Each peer's series and, per peer (rows) and scale (columns), its log speed-up
    #: (NaN where it has no weight) and its weight: who said what, for an estimate
    #: explained step by step.
    keys: tuple[SeriesKey, ...]
    peer_log_speedups: FloatArray
    peer_weights: FloatArray

    @classmethod
    def of(cls, values: FloatArray, weights: FloatArray,
           keys: tuple[SeriesKey, ...]) -> PeerSpeedup:
        """From the peers' (rows; their series ``keys``) log speed-ups and weights at
        each scale (columns); a value is NaN where its weight is nought."""
        log_speedup, count = _nan_median(values)
        for j in np.flatnonzero(((weights > 0) & (weights < 1)).any(axis=0)):
            # the peers within reach change only where the reach passes a weight; their
            # median by _nan_median, as np.median imports numpy.ma (see there)
            levels = np.unique(weights[:, j][weights[:, j] > 0])[::-1]
            spans = levels - np.append(levels[1:], 0.0)
            medians = [_nan_median(values[weights[:, j] >= level, j][:, None])[0][0]
                       for level in levels]
            log_speedup[j] = spans @ medians / levels[0]
        return cls(log_speedup=log_speedup, ranked_weights=-np.sort(-weights, axis=0).T,
                   n_peers=count, keys=keys, peer_log_speedups=values, peer_weights=weights)

    @property
    def presence(self) -> FloatArray:
        """Per scale, the chance that some peer weighs in: 1 where one measured both
        scales."""
        return self.at_least(1)

    def at_least(self, n_peers: int) -> FloatArray:
        """Per scale, the chance that ``n_peers`` or more peers weigh in."""
        if self.ranked_weights.shape[1] < n_peers:
            return np.zeros(self.ranked_weights.shape[0])
        return np.asarray(self.ranked_weights[:, n_peers - 1])


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


__all__ = ["Curve", "PeerCurves", "PeerGroup", "PeerSpeedup"]
