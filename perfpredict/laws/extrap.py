"""Extra-P's performance-model normal form, as a baseline.

Extra-P (Calotoiu et al., SC'13) models a metric as
``c0 + c1 * p^i * log2(p)^j`` and picks the exponents (i, j) from a fixed search space by
leave-one-out cross-validation (SMAPE), fitting coefficients by least squares; with only
two points, where every hypothesis fits exactly, the simplest one wins. Negative
exponents are included so that strong scaling (runtime falling with p) is expressible, as
with Extra-P's ``allow_negative_exponents`` option.
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING

import numpy as np

from perfpredict.laws.base import FloatArray, ScalingLaw

if TYPE_CHECKING:
    from fractions import Fraction

EXPONENTS_J = [0, 1, 2]


@functools.cache
def exponents_i() -> list[Fraction]:
    """Extra-P's exponents of p, as exact fractions. Built on the first fit, not at
    import: ``fractions`` (with ``decimal``) took about 2 ms of every estimate, which
    only reads fitted laws."""
    from fractions import Fraction

    positive = [Fraction(0), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3),
                Fraction(3, 4), Fraction(1), Fraction(5, 4), Fraction(4, 3), Fraction(3, 2),
                Fraction(5, 3), Fraction(7, 4), Fraction(2), Fraction(9, 4), Fraction(7, 3),
                Fraction(5, 2), Fraction(8, 3), Fraction(11, 4), Fraction(3)]
    return sorted({*positive, *(-e for e in positive if e <= 2)})


def _term(p: FloatArray, i: Fraction, j: int) -> FloatArray:
    return np.power(p, float(i)) * np.power(np.log2(p), j)


def _smape(pred: FloatArray, true: FloatArray) -> float:
    return float(np.mean(2 * np.abs(pred - true) / (np.abs(pred) + np.abs(true) + 1e-12)))


class ExtraP(ScalingLaw):
    """T(p) = c0 + c1 * p^i * log2(p)^j with (i, j) chosen by leave-one-out SMAPE."""

    name = "extrap"

    def _fit(self, p: FloatArray, t: FloatArray) -> None:
        from fractions import Fraction

        best: tuple[float, Fraction, int, FloatArray] | None = None
        # Simplest hypotheses first, so that ties (every two-parameter term fits two
        # points exactly) go to the simplest term, as Extra-P's Occam preference does.
        for i, j in sorted(itertools.product(exponents_i(), EXPONENTS_J),
                           key=lambda ij: (abs(ij[0]) + ij[1], ij[0] > 0)):
            if i == 0 and j == 0:
                continue
            x = _term(p, i, j)
            if np.ptp(x) == 0:
                continue
            score = self._loo_smape(x, t) if p.size > 2 else _smape(self._ls(x, t, x), t)
            if best is None or score < best[0] - 1e-12:
                best = (score, i, j, self._coef(x, t))
        if best is None:  # one distinct scale: a constant
            self.i_, self.j_, self.c0_s_, self.c1_s_ = Fraction(0), 0, float(t.mean()), 0.0
            return
        _, self.i_, self.j_, coef = best
        self.c0_s_, self.c1_s_ = float(coef[0]), float(coef[1])

    @staticmethod
    def _coef(x: FloatArray, t: FloatArray) -> FloatArray:
        design = np.column_stack([np.ones_like(x), x])
        coef, *_ = np.linalg.lstsq(design, t, rcond=None)
        return np.asarray(coef, dtype=float)

    def _ls(self, x_fit: FloatArray, t: FloatArray, x_new: FloatArray) -> FloatArray:
        c = self._coef(x_fit, t)
        return np.asarray(c[0] + c[1] * x_new, dtype=float)

    def _loo_smape(self, x: FloatArray, t: FloatArray) -> float:
        preds = np.empty_like(t)
        for k in range(t.size):
            keep = np.arange(t.size) != k
            if np.ptp(x[keep]) == 0:
                return float("inf")
            preds[k] = self._ls(x[keep], t[keep], x[k : k + 1])[0]
        return _smape(preds, t)

    def _predict(self, p: FloatArray) -> FloatArray:
        return self.c0_s_ + self.c1_s_ * _term(p, self.i_, self.j_)

    def params(self) -> dict[str, float]:
        return {"c0_s": self.c0_s_, "c1_s": self.c1_s_, "exponent_i": float(self.i_),
                "log_exponent_j": float(self.j_)}

    def formula(self) -> str:
        from fractions import Fraction

        log = "" if self.j_ == 0 else f" * log2(p)^{int(self.j_)}"
        exponent = Fraction(float(self.i_)).limit_denominator(12)
        return f"T(p) = {self.c0_s_:.4g} s + {self.c1_s_:.4g} s * p^({exponent}){log}"
