"""The textbook laws: Amdahl (strong scaling), Amdahl with a log2(p) communication term,
Gustafson (weak scaling) and a power law (which can express superlinear speedup)."""

from __future__ import annotations

import numpy as np

from perfpredict.laws.base import (
    FloatArray,
    ScalingLaw,
    line_fit_rows,
    relative_nnls,
    relative_nnls_rows,
)

#: A coefficient below this share of its law's largest is the non-negative solver's
#: rounding of an exact zero, and is shown and reported as 0: runs that Amdahl fits
#: exactly (1000, 520 and 280 s at 1, 2 and 4 nodes) read "40 s + 960 s / p + 2.686e-13 s
#: * log2(p)" and a breakdown of "communication 6.26e-13 s".
NEGLIGIBLE_SHARE = 1e-9


class _RelativeLinearLaw(ScalingLaw):
    """A sum of non-negative coefficients times terms in p, fitted by relative error."""

    #: The learned coefficients, one per term, in the order of :meth:`terms`.
    coef_names: tuple[str, ...] = ()

    def shown(self) -> tuple[float, ...]:
        """The coefficients as a reader sees them (:meth:`formula`, :meth:`params`),
        those that round an exact zero (:data:`NEGLIGIBLE_SHARE`) as 0; predictions use
        the fitted values."""
        values = [float(getattr(self, name)) for name in self.coef_names]
        largest = max(abs(v) for v in values)
        return tuple(0.0 if abs(v) < NEGLIGIBLE_SHARE * largest else v for v in values)

    @staticmethod
    def terms(p: FloatArray) -> list[FloatArray]:
        """The law's terms at scales ``p`` (any shape), each multiplied by a coefficient."""
        raise NotImplementedError

    def _fit(self, p: FloatArray, t: FloatArray) -> None:
        for name, value in zip(self.coef_names, relative_nnls(self.terms(p), t), strict=True):
            setattr(self, name, value)

    @classmethod
    def _fit_rows(cls, p: FloatArray, t: FloatArray) -> dict[str, FloatArray]:
        coef = relative_nnls_rows(np.stack(cls.terms(p), axis=-1), t)
        return dict(zip(cls.coef_names, coef.T, strict=True))


class Amdahl(_RelativeLinearLaw):
    """T(p) = serial_s + parallel_s / p: a fixed problem with a serial fraction.

    ``serial_fraction`` = serial_s / (serial_s + parallel_s) is Amdahl's s at p = 1.
    """

    name = "amdahl"
    coef_names = ("serial_s_", "parallel_s_")
    serial_s_: float
    parallel_s_: float

    @staticmethod
    def terms(p: FloatArray) -> list[FloatArray]:
        return [np.ones_like(p), 1 / p]

    def _predict(self, p: FloatArray) -> FloatArray:
        return self.serial_s_ + self.parallel_s_ / p

    def params(self) -> dict[str, float]:
        serial_s, parallel_s = self.shown()
        total = serial_s + parallel_s
        return {"serial_s": serial_s, "parallel_s": parallel_s,
                "serial_fraction": serial_s / total if total > 0 else 0.0}

    def formula(self) -> str:
        serial_s, parallel_s = self.shown()
        return f"T(p) = {serial_s:.4g} s + {parallel_s:.4g} s / p"


class AmdahlLog(_RelativeLinearLaw):
    """T(p) = serial_s + parallel_s / p + comm_s * log2(p): Amdahl plus tree-shaped
    collectives, the usual first refinement when communication grows with scale."""

    name = "amdahl_log"
    min_scales = 3
    coef_names = ("serial_s_", "parallel_s_", "comm_s_")
    serial_s_: float
    parallel_s_: float
    comm_s_: float

    @staticmethod
    def terms(p: FloatArray) -> list[FloatArray]:
        return [np.ones_like(p), 1 / p, np.log2(p)]

    def _predict(self, p: FloatArray) -> FloatArray:
        return self.serial_s_ + self.parallel_s_ / p + self.comm_s_ * np.log2(p)

    def params(self) -> dict[str, float]:
        serial_s, parallel_s, comm_s = self.shown()
        return {"serial_s": serial_s, "parallel_s": parallel_s, "comm_s_per_log2p": comm_s}

    def formula(self) -> str:
        serial_s, parallel_s, comm_s = self.shown()
        return f"T(p) = {serial_s:.4g} s + {parallel_s:.4g} s / p + {comm_s:.4g} s * log2(p)"


class Gustafson(_RelativeLinearLaw):
    """T(p) = base_s + growth_s * p: weak scaling where a fraction of the work that grows
    with p is not parallel (Gustafson's serial fraction), so runtime rises linearly."""

    name = "gustafson"
    coef_names = ("base_s_", "growth_s_")
    base_s_: float
    growth_s_: float

    @staticmethod
    def terms(p: FloatArray) -> list[FloatArray]:
        return [np.ones_like(p), p]

    def _predict(self, p: FloatArray) -> FloatArray:
        return self.base_s_ + self.growth_s_ * p

    def params(self) -> dict[str, float]:
        base_s, growth_s = self.shown()
        total = base_s + growth_s
        return {"base_s": base_s, "growth_s_per_unit": growth_s,
                "serial_fraction": growth_s / total if total > 0 else 0.0}

    def formula(self) -> str:
        base_s, growth_s = self.shown()
        return f"T(p) = {base_s:.4g} s + {growth_s:.4g} s * p"


class PowerLaw(ScalingLaw):
    """T(p) = t1_s * p^(-exponent), fitted in log-log space. exponent > 1 is superlinear
    strong scaling (working set dropping into cache), 1 ideal, 0 flat (weak scaling)."""

    name = "power"

    def _fit(self, p: FloatArray, t: FloatArray) -> None:
        if np.ptp(p) == 0:
            self.exponent_, self.t1_s_ = 0.0, float(np.exp(np.log(t).mean()))
            return
        state = self._fit_rows(p[None, :], t[None, :])
        self.exponent_, self.t1_s_ = float(state["exponent_"][0]), float(state["t1_s_"][0])

    @classmethod
    def _fit_rows(cls, p: FloatArray, t: FloatArray) -> dict[str, FloatArray]:
        slope, intercept = line_fit_rows(np.log(p), np.log(t))
        return {"exponent_": -slope, "t1_s_": np.exp(intercept)}

    def _predict(self, p: FloatArray) -> FloatArray:
        return self.t1_s_ * p ** (-self.exponent_)

    def params(self) -> dict[str, float]:
        return {"t1_s": self.t1_s_, "exponent": self.exponent_}

    def formula(self) -> str:
        return f"T(p) = {self.t1_s_:.4g} s * p^({-self.exponent_:.3g})"
