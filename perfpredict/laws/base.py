"""The estimator contract shared by every scaling law.

A law maps a scale ``p`` (nodes, or ranks where nodes are unknown) to a runtime in
seconds. ``fit`` takes the measured scales and runtimes of one series and returns self;
learned parameters end in ``_`` (scikit-learn's habit), so any law can be swapped,
cross-validated and compared.

Fits weigh relative error: a 10 s miss on a 20 s run matters as much as a 1000 s miss on
a 2000 s run, which is how users judge predictions across scales.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class ScalingLaw(ABC):
    """Base class: subclasses define ``name``, ``_fit`` and ``_predict``."""

    name: str = "law"
    #: Fewest distinct scales the law needs to be determined.
    min_scales: int = 2

    def fit(self, scale: ArrayLike, runtime_s: ArrayLike) -> ScalingLaw:
        p = np.asarray(scale, dtype=float)
        t = np.asarray(runtime_s, dtype=float)
        if p.shape != t.shape or p.size == 0:
            raise ValueError("scale and runtime_s must be non-empty and of equal length")
        if np.any(p <= 0) or np.any(t <= 0):
            raise ValueError("scales and runtimes must be positive")
        self._fit(p, t)
        self.fitted_scale_max_ = float(p.max())
        self.fitted_scale_min_ = float(p.min())
        return self

    def predict(self, scale: ArrayLike) -> FloatArray:
        """Predicted runtime in seconds, floored at a tiny positive value."""
        p = np.asarray(scale, dtype=float)
        return np.maximum(self._predict(p), 1e-9)

    @abstractmethod
    def _fit(self, p: FloatArray, t: FloatArray) -> None: ...

    @abstractmethod
    def _predict(self, p: FloatArray) -> FloatArray: ...

    @abstractmethod
    def params(self) -> dict[str, float]:
        """Learned parameters with units in their names, for cards and messages."""

    @abstractmethod
    def formula(self) -> str:
        """The fitted law as a human-readable formula in p."""

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to rebuild the fitted law without refitting it."""
        state = {k: float(v) for k, v in vars(self).items() if k.endswith("_")}
        return {"law": self.name, "state": state}

    @classmethod
    def fit_rows(cls, scale: FloatArray, runtime_s: FloatArray) -> dict[str, FloatArray]:
        """One fit per row of ``scale`` and ``runtime_s`` (fits x points, each row at
        least :attr:`min_scales` distinct positive scales): the state :meth:`fit` would
        learn on each row, as one array per parameter.

        Training fits every law to tens of thousands of series and cuts of series, where
        a Python-level fit of about 1 ms each took minutes; the laws it uses fit all rows
        in one call.
        """
        state = cls._fit_rows(scale, runtime_s)
        return {**state, "fitted_scale_max_": scale.max(axis=1),
                "fitted_scale_min_": scale.min(axis=1)}

    @classmethod
    def _fit_rows(cls, p: FloatArray, t: FloatArray) -> dict[str, FloatArray]:
        raise NotImplementedError(f"the {cls.name} law is not fitted in bulk")

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> ScalingLaw:
        """The law with the given state. Values may also be arrays (from
        :meth:`fit_rows`) aligned with the scales later predicted: one fitted law per
        element, which is how training evaluates many series' laws in one call."""
        law = cls()
        for key, value in state.items():
            setattr(law, key, value)
        return law


def relative_nnls(columns: list[FloatArray], t: FloatArray) -> FloatArray:
    """Non-negative coefficients c minimising sum(((X c) - t) / t)^2.

    Dividing each row by its runtime turns relative error into ordinary least squares;
    non-negativity keeps every term physical (no negative serial time).
    """
    return relative_nnls_rows(np.stack(columns, axis=-1)[None], t[None])[0]


def relative_nnls_rows(design: FloatArray, t: FloatArray) -> FloatArray:
    """:func:`relative_nnls` of many problems: ``design`` (fits x points x terms) and
    ``t`` (fits x points) give coefficients (fits x terms).

    The rows are scaled at once and solved one by one with scipy's active-set solver, a
    C routine of about 10 us per fit. Solving every subset of terms with batched QR instead
    agrees to about 1e-13, but not to the bit: where a law's log2(p) term is inactive it
    returns exactly Amdahl's fit, and the learned trees, which see the laws' log
    differences, split differently on 0 than on 1e-15 (on the bundled data's backtests
    the intervals narrowed and their coverage fell by up to 0.04).
    """
    from scipy.optimize import nnls

    scaled = design / t[..., None]
    ones = np.ones(design.shape[1])
    coef = [nnls(rows, ones)[0] for rows in scaled]
    return np.array(coef, dtype=float).reshape(design.shape[0], design.shape[2])


def relative_nnls_small(columns: list[FloatArray], t: FloatArray) -> FloatArray:
    """:func:`relative_nnls` without scipy, for a fit an estimate makes (the roofline's
    breakdown of ``--io-bytes``): importing ``scipy.optimize`` took 0.25 s, more than the
    whole estimate. Every subset of the few terms is solved by least squares and the
    best whose coefficients are all non-negative kept: the non-negative optimum is the
    least-squares fit on its own support, so this is exact, in 2^terms small solves.
    Trained laws keep scipy's solver (:func:`relative_nnls_rows` says why)."""
    import itertools

    scaled = np.stack(columns, axis=-1) / t[:, None]
    ones = np.ones(t.size)
    best, best_loss = np.zeros(scaled.shape[1]), float(len(t))  # all-zero: loss n
    for size in range(1, scaled.shape[1] + 1):
        for support in itertools.combinations(range(scaled.shape[1]), size):
            coef, *_ = np.linalg.lstsq(scaled[:, support], ones, rcond=None)
            if (coef < 0).any():
                continue
            loss = float(np.sum((scaled[:, support] @ coef - ones) ** 2))
            if loss < best_loss:
                best_loss = loss
                best = np.zeros(scaled.shape[1])
                best[list(support)] = coef
    return best


def line_fit_rows(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Least-squares slope and intercept of ``y`` on ``x``, one line per row."""
    x_mean, y_mean = x.mean(axis=1), y.mean(axis=1)
    dx = x - x_mean[:, None]
    slope = np.sum(dx * (y - y_mean[:, None]), axis=1) / np.sum(dx * dx, axis=1)
    return slope, y_mean - slope * x_mean
