"""Calibrating the kill risk on the recent jobs the advisor did not train on: the price of
a kill that keeps the kills within ``--kill-risk`` (a split-conformal count), and the maps
from raw probabilities to the shares of jobs that were killed or outran their request."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perfpredict.advise.walltime.distribution import (
    candidates,
    choose,
    expected_fit,
    raw_kill_p,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: Prices of a kill, in units of expected runtime/walltime, that the calibration chooses
#: from: the higher the price, the safer the advice.
KILL_PRICES: tuple[float, ...] = tuple(0.01 * 10 ** (k / 32) for k in range(161))
#: Fewer recent out-of-training jobs than this cannot calibrate a risk of a few percent.
MIN_CALIBRATION_JOBS = 50


@dataclass(frozen=True)
class Calibration:
    """What the recent out-of-training jobs say at one ``--kill-risk``, for one window.

    ``price_index`` points into :data:`KILL_PRICES`; ``report`` maps the raw kill
    probability of a chosen walltime shorter than the request (or of a job without one)
    to the share of such choices that were killed, ``report_at_request`` that of a
    choice capped at the request, ``overrun`` the raw probability of outrunning the
    request to the share that did (each isotonic, fitted on the window's jobs of its
    kind). One map for every choice gave a job advised its own request two probabilities
    for one event, kill and overrun (KTH-SP2 at a 5% risk: 0.044 and 0.027 on average,
    where 0.033 of those jobs were killed), and the choices shorter than a request 0.085
    where 0.155 were killed; the requests of every job (``overrun``) are another kind
    again: the jobs the advice leaves at their request outrun it more often than others
    of the same raw probability.

    ``report_any_walltime`` (only when asked for: a time-min) maps the raw kill
    probability of any walltime below the request, chosen or not, to the share of the
    window's jobs it would have killed, fitted on every such candidate of every job
    whose outcome there is known. ``report`` cannot stand in for it: fitted on the
    choices at one price, it saw few walltimes as risky as a time-min, and a time-min is
    the shortest walltime it reads at most the risk, the edge of its step. On KTH-SP2
    (the first 70% stored, the last 30% advised, ``--kill-risk 0.05``) the time-mins it
    gave at a risk of 0.15, 0.25, 0.35 and 0.45 killed 18%, 23%, 35% and 42% of the
    jobs they shortened where it reported 10%, 17%, 25% and 31% (at ``--kill-risk
    0.1``, 47% and 57% at 0.35 and 0.45, above the risk); through this map, 13%, 23%,
    26% and 33% where it reported 11%, 20%, 27% and 33% (``--kill-risk 0.1``: 13%, 22%,
    26% and 35%, reported 11%, 21%, 27% and 34%).
    """

    price_index: int
    report: ShareMap
    report_at_request: ShareMap
    overrun: ShareMap
    report_any_walltime: ShareMap | None = None

    def below_request(self, any_walltime: bool) -> ShareMap:
        """The map of walltimes other than the request: :attr:`report`, or with
        ``any_walltime`` :attr:`report_any_walltime` (a calibration fitted without it
        cannot read a time-min)."""
        if not any_walltime:
            return self.report
        if self.report_any_walltime is None:
            raise ValueError("this calibration was fitted without any_walltime")
        return self.report_any_walltime


@dataclass(frozen=True)
class Outcomes:
    """The recent out-of-training jobs, as the calibration needs them.

    ``critical`` is, per job, the index into :data:`KILL_PRICES` from which on the advice
    would have let it finish (0: never killed; ``len(KILL_PRICES)``: always killed, as when
    even the cap, its request, was shorter than its runtime, or when it was censored and
    the advice may exceed its request: its true runtime is unknown above what was recorded,
    so it counts as killed, an upper bound). ``censored`` says which jobs ran into their
    limit (TIMEOUT): their runtime is a lower bound.
    """

    raw_p: np.ndarray
    gain: np.ndarray
    walltimes_s: np.ndarray
    requests_s: np.ndarray
    runtime_s: np.ndarray
    critical: np.ndarray
    request_raw_p: np.ndarray
    overran_request: np.ndarray
    censored: np.ndarray

    @classmethod
    def of(cls, recent: pd.DataFrame, log_q: np.ndarray,
           allow_above_request: bool) -> Outcomes:
        """The outcomes of ``recent`` jobs, given their log runtime quantiles."""
        import numpy as np

        requests_s = recent["requested_walltime_s"].to_numpy()
        runtime_s = recent["runtime_s"].to_numpy()
        walltimes_s = candidates(requests_s, allow_above_request)
        raw_p = raw_kill_p(log_q, walltimes_s)
        gain = expected_fit(log_q, walltimes_s)
        rows = np.arange(len(raw_p))
        critical = np.zeros(len(raw_p), dtype=int)
        for index, price in enumerate(KILL_PRICES):
            chosen_s = walltimes_s[rows, choose(gain, raw_p, np.full(len(rows), price))]
            critical[runtime_s > chosen_s] = index + 1
        always_killed = walltimes_s[:, -1] < runtime_s
        if allow_above_request:
            always_killed |= recent["censored"].to_numpy()
        critical[always_killed] = len(KILL_PRICES)
        request_raw_p = raw_kill_p(log_q, np.fmax(requests_s, 1.0)[:, None])[:, 0]
        return cls(raw_p, gain, walltimes_s, requests_s, runtime_s, critical, request_raw_p,
                   np.where(np.isnan(requests_s), np.nan, runtime_s > requests_s),
                   recent["censored"].to_numpy(dtype=bool))

    def calibrate(self, lo: int, hi: int, kill_risk: float,
                  any_walltime: bool = False) -> Calibration:
        """The price of a kill and the reporting maps of the window ``[lo, hi)``; with
        ``any_walltime``, :attr:`Calibration.report_any_walltime` too."""
        import numpy as np

        window = slice(lo, hi)
        price_index = conformal_index(self.critical[window], kill_risk)
        raw_p = self.raw_p[window]
        rows = np.arange(len(raw_p))
        pick = choose(self.gain[window], raw_p,
                       np.full(len(rows), KILL_PRICES[price_index]))
        killed = self.critical[window] > price_index
        chosen_p = raw_p[rows, pick]
        at_request = self.walltimes_s[window][rows, pick] == self.requests_s[window]
        with_request = ~np.isnan(self.overran_request[window])
        return Calibration(
            price_index,
            _isotonic_of_kind(chosen_p, killed, ~at_request),
            _isotonic_of_kind(chosen_p, killed, at_request),
            _isotonic(self.request_raw_p[window][with_request],
                      self.overran_request[window][with_request].astype(bool)),
            self._any_walltime(window) if any_walltime else None)

    def _any_walltime(self, window: slice) -> ShareMap:
        """:attr:`Calibration.report_any_walltime` of ``window``: every candidate walltime
        of its jobs that is not their request (the request has its own map), whose outcome
        is known: any below a censored job's recorded runtime killed it, and above it its
        true runtime is unknown."""
        walltimes_s = self.walltimes_s[window]
        runtime_s = self.runtime_s[window][:, None]
        killed = runtime_s > walltimes_s
        known = ((walltimes_s != self.requests_s[window][:, None])
                 & (killed | ~self.censored[window][:, None]))
        return _isotonic(self.raw_p[window][known], killed[known])


@dataclass(frozen=True)
class ShareMap:
    """The share of events as a non-decreasing function of the raw probability, fitted
    on a window's walltimes (:func:`_isotonic`), and the highest raw probability among
    them (``highest_raw_p``; -inf when the window held none).

    Above ``highest_raw_p`` the fit only repeats its top value, which no walltime of the
    window showed, so there the share read is the raw probability itself where that is
    higher: the window holds no evidence to correct it with. Read as the top value, a
    window of jobs that all asked for 12 hours and never came near it said a 1-minute
    request of a job predicted at 17 minutes had no chance of being killed."""

    share: Callable[[np.ndarray], np.ndarray]
    highest_raw_p: float

    def __call__(self, raw_p: np.ndarray) -> np.ndarray:
        import numpy as np

        share = self.share(raw_p)
        # np.maximum keeps NaN: a window of none reads unknown everywhere
        return np.where(raw_p > self.highest_raw_p, np.maximum(share, raw_p), share)


def _isotonic_of_kind(raw_p: np.ndarray, happened: np.ndarray,
                      kind: np.ndarray) -> ShareMap:
    """:func:`_isotonic` on the window's choices of one kind; on every choice where the
    window holds none of that kind."""
    return _isotonic(raw_p[kind], happened[kind]) if kind.any() else _isotonic(raw_p, happened)


def _isotonic(raw_p: np.ndarray, happened: np.ndarray) -> ShareMap:
    """The share of events as a non-decreasing function of the raw probability (isotonic
    regression: on the window it averages exactly to the window's share of events)."""
    import numpy as np
    from sklearn.isotonic import IsotonicRegression

    if len(raw_p) == 0:
        return ShareMap(lambda p: np.full(len(p), np.nan), -math.inf)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(raw_p, happened.astype(float))
    return ShareMap(lambda p: np.asarray(iso.predict(p), dtype=float), float(raw_p.max()))


def conformal_index(critical: np.ndarray, kill_risk: float) -> int:
    """The smallest index into :data:`KILL_PRICES` that kills at most ``kill_risk`` of the
    window, counted as split conformal prediction does: ``(kills + 1) / (n + 1) <=
    kill_risk``, a job being killed at index ``k`` when its critical index exceeds ``k``."""
    import numpy as np

    allowed_kills = math.floor(kill_risk * (len(critical) + 1)) - 1
    if allowed_kills < 0:
        return len(KILL_PRICES) - 1
    if allowed_kills >= len(critical):
        return 0
    ranked = np.sort(critical)[::-1]
    return int(min(ranked[allowed_kills], len(KILL_PRICES) - 1))
