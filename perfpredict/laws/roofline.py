"""A roofline-style runtime bound: compute, network and I/O terms, with the machine's
numbers from the system catalog where it has them.

    T(p) = serial_s + compute_s / p + comm_s * log2(p) + io_bytes / min(fs_bw, p * node_bw)

The I/O term is not fitted: it is the time the file system needs for the series' bytes
at p nodes, from the catalog's file-system bandwidth and per-node injection bandwidth.
The remaining terms are fitted to what the I/O term leaves, weighing relative error. A
term whose machine number is unknown is not guessed: it falls back to the fitted terms,
and :attr:`fallbacks` says which and why, so an estimate can tell the user.
"""

from __future__ import annotations

import numpy as np

from perfpredict.laws.base import FloatArray, ScalingLaw, relative_nnls_small


class Roofline(ScalingLaw):
    """Compute + latency-bound communication + bandwidth-bound I/O.

    Parameters are the machine's and the workload's numbers, any of which may be None
    (unknown): ``io_bytes`` read and written per run, ``fs_bw_bytes_per_s`` of the
    file system, ``node_bw_bytes_per_s`` a node can inject into it, and
    ``net_latency_s`` of one message (used only to express the communication term as a
    count of latency-bound collective steps).
    """

    name = "roofline"
    min_scales = 3

    def __init__(self, io_bytes: float | None = None, fs_bw_bytes_per_s: float | None = None,
                 node_bw_bytes_per_s: float | None = None,
                 net_latency_s: float | None = None) -> None:
        self.io_bytes = io_bytes
        self.fs_bw_bytes_per_s = fs_bw_bytes_per_s
        self.node_bw_bytes_per_s = node_bw_bytes_per_s
        self.net_latency_s = net_latency_s

    def io_s(self, p: FloatArray) -> FloatArray:
        """Seconds the file system needs for the series' I/O at p nodes (0 if unknown)."""
        p = np.asarray(p, dtype=float)
        if not self.io_bytes or not self.fs_bw_bytes_per_s:
            return np.zeros_like(p)
        bandwidth = np.full_like(p, self.fs_bw_bytes_per_s)
        if self.node_bw_bytes_per_s:
            bandwidth = np.minimum(bandwidth, p * self.node_bw_bytes_per_s)
        return self.io_bytes / bandwidth

    @property
    def fallbacks(self) -> list[str]:
        """The terms that fall back to the fitted ones, and why (:meth:`fallbacks_for`)."""
        return self.fallbacks_for(bool(self.io_bytes), self.fs_bw_bytes_per_s)

    @staticmethod
    def fallbacks_for(gives_io_bytes: bool, fs_bw_bytes_per_s: float | None) -> list[str]:
        """The terms that fall back to the fitted ones, and why: known from whether the
        workload's I/O volume and the file system's bandwidth are, not from their values
        or a fit, so an estimate says them without fitting the law."""
        if not gives_io_bytes:
            return ["no I/O volume for this series: any I/O time is inside the fitted "
                    "serial and compute terms"]
        if not fs_bw_bytes_per_s:
            return ["the catalog has no file-system bandwidth for this system: I/O time is "
                    "inside the fitted terms"]
        return []

    def _fit(self, p: FloatArray, t: FloatArray) -> None:
        io = self.io_s(p)
        # What I/O leaves for the other terms, never below a tenth of the runtime so
        # that an I/O bound larger than the measurement cannot produce negative work.
        rest = np.maximum(t - io, 0.1 * t)
        self.serial_s_, self.compute_s_, self.comm_s_ = relative_nnls_small(
            [np.ones_like(p), 1 / p, np.log2(p)], rest)

    def _predict(self, p: FloatArray) -> FloatArray:
        return (self.serial_s_ + self.compute_s_ / p + self.comm_s_ * np.log2(p)
                + self.io_s(p))

    def breakdown_s(self, p: float) -> dict[str, float]:
        """Seconds per term at p nodes."""
        return {"serial_s": self.serial_s_, "compute_s": self.compute_s_ / p,
                "communication_s": self.comm_s_ * float(np.log2(p)),
                "io_s": float(self.io_s(np.array([p]))[0])}

    def params(self) -> dict[str, float]:
        out = {"serial_s": self.serial_s_, "compute_s": self.compute_s_,
               "comm_s_per_log2p": self.comm_s_}
        if self.net_latency_s:
            out["latency_bound_steps_per_log2p"] = self.comm_s_ / self.net_latency_s
        return out

    def formula(self) -> str:
        io = ""
        if self.io_bytes and self.fs_bw_bytes_per_s:
            io = f" + {self.io_bytes:.4g} B / min({self.fs_bw_bytes_per_s:.4g} B/s"
            io += f", p * {self.node_bw_bytes_per_s:.4g} B/s)" if self.node_bw_bytes_per_s else ")"
        return (f"T(p) = {self.serial_s_:.4g} s + {self.compute_s_:.4g} s / p"
                f" + {self.comm_s_:.4g} s * log2(p){io}")
