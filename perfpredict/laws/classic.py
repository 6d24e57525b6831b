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


class _RelativeLinearLaw(ScalingLaw):
    """A sum of non-negative coefficients times terms in p, fitted by relative error."""

    #: The learned coefficients, one per term, in the order of :meth:`terms`.
    coef_names: tuple[str, ...] = ()

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
        total = self.serial_s_ + self.parallel_s_
        return {"serial_s": self.serial_s_, "parallel_s": self.parallel_s_,
                "serial_fraction": self.serial_s_ / total if total > 0 else 0.0}

    def formula(self) -> str:
        return f"T(p) = {self.serial_s_:.4g} s + {self.parallel_s_:.4g} s / p"


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
        return {"serial_s": self.serial_s_, "parallel_s": self.parallel_s_,
                "comm_s_per_log2p": self.comm_s_}

    def formula(self) -> str:
        return (f"T(p) = {self.serial_s_:.4g} s + {self.parallel_s_:.4g} s / p"
                f" + {self.comm_s_:.4g} s * log2(p)")


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
        total = self.base_s_ + self.growth_s_
        return {"base_s": self.base_s_, "growth_s_per_unit": self.growth_s_,
                "serial_fraction": self.growth_s_ / total if total > 0 else 0.0}

    def formula(self) -> str:
        return f"T(p) = {self.base_s_:.4g} s + {self.growth_s_:.4g} s * p"


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
