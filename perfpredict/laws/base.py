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
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


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
    def from_state(cls, state: dict[str, float]) -> ScalingLaw:
        law = cls()
        for key, value in state.items():
            setattr(law, key, value)
        return law


def relative_nnls(columns: list[FloatArray], t: FloatArray) -> FloatArray:
    """Non-negative coefficients c minimising sum(((X c) - t) / t)^2.

    Dividing each row by its runtime turns relative error into ordinary least squares;
    non-negativity keeps every term physical (no negative serial time).
    """
    from scipy.optimize import nnls

    design = np.column_stack(columns) / t[:, None]
    coef, _ = nnls(design, np.ones_like(t))
    return np.asarray(coef, dtype=float)
