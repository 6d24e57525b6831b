"""The runtime distribution the advisor predicts per job, and what follows from it for
each walltime a job could be given: its raw kill probability, the tightness it buys, the
choice at a price of a kill. Pure numpy on arrays of log runtime quantiles (one row per job,
one column per level of :data:`QUANTILE_LEVELS`), so training, calibration and advice share
the same arithmetic."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_MINUTES = (1, 2, 3, 4, 5, 7, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60, 75, 90, 105, 120, 150,
            180, 210, 240, 300, 360, 420, 480, 600, 720, 900, 1080, 1200, 1440, 1800, 2160,
            2880, 3600, 4320, 5760, 7200, 10080, 14400, 20160, 43200)
#: Walltimes the advice chooses from: round values a person would type, 1 min to 30 days.
CANDIDATE_WALLTIMES_S: tuple[float, ...] = tuple(60.0 * m for m in _MINUTES)
#: The levels of the runtime distribution the trees learn (log runtime quantiles); dense at
#: the top, where the kill risks asked for (1-20%) fall.
QUANTILE_LEVELS: tuple[float, ...] = (0.25, 0.5, 0.75, 0.85, 0.9, 0.95, 0.98,
                                      0.99)


def candidates(requests_s: np.ndarray, allow_above_request: bool) -> np.ndarray:
    """Per job, the walltimes advice chooses from, ascending: the round candidates,
    capped at the job's request unless ``allow_above_request`` (the cap repeats)."""
    import numpy as np

    grid = np.broadcast_to(np.asarray(CANDIDATE_WALLTIMES_S), (len(requests_s),
                                                               len(CANDIDATE_WALLTIMES_S)))
    if allow_above_request:
        return np.array(grid)
    return np.fmin(grid, requests_s[:, None])


def choose(gain: np.ndarray, raw_p: np.ndarray, prices: np.ndarray) -> np.ndarray:
    """Per job (row), the candidate (column) that maximises the expected fit minus the
    price of a kill times the kill probability: one price for all jobs spends a risk
    budget where it buys the most tightness (a Lagrange multiplier), instead of giving
    every job the same quantile.

    Among candidates worth the same, the longest: where the job outruns every candidate
    (all certain kills, nothing fits), the first had been chosen, and on KTH-SP2 two jobs
    whose runtime the model put above their requests of 10 and 15 h were advised 1 minute,
    and killed, where their requests would have held them."""
    score = gain - prices[:, None] * raw_p
    return score.shape[1] - 1 - score[:, ::-1].argmax(axis=1)


def raw_kill_p(log_q: np.ndarray, walltimes_s: np.ndarray) -> np.ndarray:
    """``P(runtime > walltime)`` per job (row) and walltime (column), before calibration:
    linear in log time between the job's quantiles, 1 below the lowest, and above the
    highest a tail that keeps falling (so that risks beyond the top level still order the
    candidates)."""
    import numpy as np

    levels = np.asarray(QUANTILE_LEVELS)
    n_levels = len(levels)
    log_w = np.log(walltimes_s)
    above = (log_q[:, None, :] <= log_w[:, :, None]).sum(axis=2)
    lo, hi = np.clip(above - 1, 0, n_levels - 1), np.clip(above, 0, n_levels - 1)
    rows = np.arange(len(log_q))[:, None]
    q_lo, q_hi = log_q[rows, lo], log_q[rows, hi]
    width = q_hi - q_lo
    frac = np.clip(np.divide(log_w - q_lo, width, out=np.zeros_like(log_w),
                             where=width > 0), 0.0, 1.0)
    survival = 1.0 - (levels[lo] + frac * (levels[hi] - levels[lo]))
    survival = np.where(above == 0, 1.0, survival)
    top, below_top = log_q[:, -1:], log_q[:, -2:-1]
    tail = (1.0 - levels[-1]) * np.exp(-(log_w - top) / np.maximum(top - below_top, 0.05))
    return np.where(above == n_levels, tail, survival)


def log_quantile_at(log_q: np.ndarray, level: float) -> np.ndarray:
    """Per job, log runtime at ``level`` (interpolated between the fitted levels)."""
    import numpy as np

    return np.array([np.interp(level, QUANTILE_LEVELS, row) for row in log_q])


def expected_ratio(log_q: np.ndarray, walltime_s: np.ndarray) -> np.ndarray:
    """E[min(runtime / walltime, 1)] per job, the runtime spread evenly over the levels of
    its quantile curve (:data:`QUANTILE_LEVELS`, held flat beyond the outer ones)."""
    import numpy as np

    grid = (np.arange(40) + 0.5) / 40
    log_runtime = np.stack([np.interp(grid, QUANTILE_LEVELS, row) for row in log_q])
    return np.minimum(np.exp(log_runtime) / walltime_s[:, None], 1.0).mean(axis=1)


def expected_fit(log_q: np.ndarray, walltimes_s: np.ndarray) -> np.ndarray:
    """Per job and candidate, E[runtime / walltime; runtime <= walltime]: the tightness a
    walltime buys on the jobs it lets finish, the runtime spread evenly over the levels of
    the job's quantile curve. Computed in blocks of jobs to bound the memory."""
    import numpy as np

    grid = (np.arange(20) + 0.5) / 20
    out = np.empty(walltimes_s.shape)
    for lo in range(0, len(log_q), 5000):
        block = slice(lo, lo + 5000)
        runtime_s = np.exp(np.stack([np.interp(grid, QUANTILE_LEVELS, row)
                                     for row in log_q[block]]))
        ratio = runtime_s[:, None, :] / walltimes_s[block][:, :, None]
        out[block] = np.where(ratio <= 1.0, ratio, 0.0).mean(axis=2)
    return out
