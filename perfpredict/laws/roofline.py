"""A roofline-style runtime bound: compute, memory, network and I/O terms, with the
machine's numbers from the system catalog where it has them.

    T(p) = serial_s + max(compute_s, node_roof_s) / p + comm_s * log2(p)
           + net_bytes / (p * injection_bw) + io_bytes / min(fs_bw, p * injection_bw)

    node_roof_s = max(flops / peak_flops_per_node, mem_bytes / mem_bw_per_node)

The volumes are the workload's, per run (all nodes together), as a query gives them,
and the I/O may be per node too (weak scaling's, which grows with the nodes); the
bandwidths and the peak are the catalog's. The I/O and network-volume terms are not
fitted: they are the time the file system and the network need for the run's bytes at
p nodes. The on-node term is fitted to what they leave, weighing relative error, and
never below its roof: the time one node would need for the run's flops at its peak, or
for its memory traffic at its memory bandwidth, whichever is longer, shared by p nodes.
A term whose volume or machine number is unknown is not guessed: it falls back to the
fitted terms, and :attr:`fallbacks` says which and why, so an estimate can tell the
user.
"""

from __future__ import annotations

import numpy as np

from perfpredict.laws.base import FloatArray, ScalingLaw, relative_nnls_small
from perfpredict.laws.roofline_terms import VOLUMES, fallbacks_for

#: A run's volume: a number, one per run (a batch's floors, :meth:`Roofline.floor_s`),
#: or None where unknown.
Volume = float | FloatArray | None


class Roofline(ScalingLaw):
    """Compute and memory roofs + latency-bound communication + bandwidth-bound network
    volume and I/O.

    Parameters are the workload's and the machine's numbers, any of which may be None
    (unknown): ``io_bytes`` read and written per run, ``fs_bw_bytes_per_s`` of the
    file system, ``net_injection_bw_bytes_per_s`` a node can inject into the network
    (and the file system), ``net_latency_s`` of one message (used only to express the
    communication term as a count of latency-bound collective steps), ``net_bytes``
    sent over the network per run, ``flops`` per run against ``peak_flops_per_node``,
    ``mem_bytes`` moved to and from memory per run against
    ``mem_bw_bytes_per_s_per_node``; ``io_bytes_per_node``, each node's I/O, where it
    grows with the nodes (weak scaling), on top of ``io_bytes``. A fitted law takes a
    number per volume; its :meth:`floor_s` takes one per run too.
    """

    name = "roofline"
    min_scales = 3

    def __init__(self, io_bytes: Volume = None, fs_bw_bytes_per_s: float | None = None,
                 net_injection_bw_bytes_per_s: float | None = None,
                 net_latency_s: float | None = None, *, net_bytes: Volume = None,
                 flops: Volume = None, mem_bytes: Volume = None,
                 peak_flops_per_node: float | None = None,
                 mem_bw_bytes_per_s_per_node: float | None = None,
                 io_bytes_per_node: Volume = None) -> None:
        self.io_bytes = io_bytes
        self.io_bytes_per_node = io_bytes_per_node
        self.fs_bw_bytes_per_s = fs_bw_bytes_per_s
        self.net_injection_bw_bytes_per_s = net_injection_bw_bytes_per_s
        self.net_latency_s = net_latency_s
        self.net_bytes = net_bytes
        self.flops = flops
        self.mem_bytes = mem_bytes
        self.peak_flops_per_node = peak_flops_per_node
        self.mem_bw_bytes_per_s_per_node = mem_bw_bytes_per_s_per_node

    def io_s(self, p: FloatArray) -> FloatArray:
        """Seconds the file system needs for the series' I/O at p nodes (0 if unknown)."""
        p = np.asarray(p, dtype=float)
        if not self._io_given() or not self.fs_bw_bytes_per_s:
            return np.zeros_like(p)
        bandwidth = np.full_like(p, self.fs_bw_bytes_per_s)
        if self.net_injection_bw_bytes_per_s:
            bandwidth = np.minimum(bandwidth, p * self.net_injection_bw_bytes_per_s)
        return (_amount(self.io_bytes) + _amount(self.io_bytes_per_node) * p) / bandwidth

    def _io_given(self) -> bool:
        """Whether an I/O volume is known, the run's or each node's."""
        return _given(self.io_bytes) or _given(self.io_bytes_per_node)

    def network_s(self, p: FloatArray) -> FloatArray:
        """Seconds p nodes need to inject the run's network volume (0 if unknown)."""
        p = np.asarray(p, dtype=float)
        if not _given(self.net_bytes) or not self.net_injection_bw_bytes_per_s:
            return np.zeros_like(p)
        return _amount(self.net_bytes) / (p * self.net_injection_bw_bytes_per_s)

    def roofs_s(self) -> dict[str, FloatArray]:
        """The on-node roofs whose volume and machine number are known: seconds one node
        would need for the run's flops at its peak (``compute_s``) and for its memory
        traffic at its bandwidth (``memory_s``)."""
        roofs = {}
        if _given(self.flops) and self.peak_flops_per_node:
            roofs["compute_s"] = _amount(self.flops) / self.peak_flops_per_node
        if _given(self.mem_bytes) and self.mem_bw_bytes_per_s_per_node:
            roofs["memory_s"] = _amount(self.mem_bytes) / self.mem_bw_bytes_per_s_per_node
        return roofs

    def floor_s(self, p: FloatArray) -> FloatArray:
        """The least time the machine allows p nodes for the run's volumes, fitting
        nothing: the on-node roof shared by the nodes, then the network volume and the
        I/O at their bandwidths (0 for a term whose volume or machine number is
        unknown). The volumes may be arrays aligned with ``p``, one run each, as a batch
        of estimates checks its queries at once."""
        p = np.asarray(p, dtype=float)
        return self.node_roof_s() / p + self.network_s(p) + self.io_s(p)

    def node_roof_s(self) -> FloatArray:
        """The on-node roof: the longer of the compute and the memory roof
        (:meth:`roofs_s`), per run where the volumes are arrays; 0 where neither is
        known."""
        roofs = list(self.roofs_s().values())
        return np.maximum.reduce(np.broadcast_arrays(*roofs)) if roofs else np.zeros(())

    @property
    def fallbacks(self) -> list[str]:
        """The terms that fall back to the fitted ones, and why
        (:func:`~perfpredict.laws.roofline_terms.fallbacks_for`)."""
        given = [volume for volume in VOLUMES if _given(getattr(self, volume))
                 or (volume == "io_bytes" and self._io_given())]
        return fallbacks_for(given, self)

    def _fit(self, p: FloatArray, t: FloatArray) -> None:
        fixed = self.io_s(p) + self.network_s(p)
        # What I/O and network volume leave for the other terms, never below a tenth of
        # the runtime so that a bound larger than the measurement cannot produce
        # negative work.
        rest = np.maximum(t - fixed, 0.1 * t)
        self.serial_s_, compute_s, self.comm_s_ = relative_nnls_small(
            [np.ones_like(p), 1 / p, np.log2(p)], rest)
        # no faster than the machine allows: runs measured faster than the roof say the
        # volumes or the catalog are wrong, and the law, above them, shows it
        self.compute_s_ = float(max(compute_s, *self.roofs_s().values(), 0.0))

    def _predict(self, p: FloatArray) -> FloatArray:
        return (self.serial_s_ + self.compute_s_ / p + self.comm_s_ * np.log2(p)
                + self.network_s(p) + self.io_s(p))

    def breakdown_s(self, p: float) -> dict[str, float]:
        """Seconds per term at p nodes. Where a roof is known, the on-node time is its
        binding roof (``compute_s`` or ``memory_s``) and the time above it
        (``above_roof_s``: the code running below the machine's peak); the network
        volume and I/O are parts only where they are turned into time."""
        parts = {"serial_s": self.serial_s_}
        roofs = self.roofs_s()
        if roofs:
            bound, roof_s = max(roofs.items(), key=lambda item: float(item[1]))
            parts[bound] = float(roof_s) / p
            parts["above_roof_s"] = (self.compute_s_ - float(roof_s)) / p
        else:
            parts["compute_s"] = self.compute_s_ / p
        parts["communication_s"] = self.comm_s_ * float(np.log2(p))
        at = np.array([p], dtype=float)
        if _given(self.net_bytes) and self.net_injection_bw_bytes_per_s:
            parts["network_s"] = float(self.network_s(at)[0])
        if self._io_given() and self.fs_bw_bytes_per_s:
            parts["io_s"] = float(self.io_s(at)[0])
        return parts

    def params(self) -> dict[str, float]:
        out = {"serial_s": self.serial_s_, "compute_s": self.compute_s_,
               "comm_s_per_log2p": self.comm_s_}
        out.update({f"{name.removesuffix('_s')}_roof_s": float(roof_s)
                    for name, roof_s in self.roofs_s().items()})
        if self.net_latency_s:
            out["latency_bound_steps_per_log2p"] = self.comm_s_ / self.net_latency_s
        return out

    def formula(self) -> str:
        roofs = self.roofs_s()
        compute = (f"max({self.compute_s_:.4g} s, {float(max(roofs.values())):.4g} s roof)"
                   if roofs else f"{self.compute_s_:.4g} s")
        network = ""
        if _given(self.net_bytes) and self.net_injection_bw_bytes_per_s:
            network = (f" + {self.net_bytes:.4g} B / (p * "
                       f"{self.net_injection_bw_bytes_per_s:.4g} B/s)")
        io = ""
        if self._io_given() and self.fs_bw_bytes_per_s:
            run = [f"{self.io_bytes:.4g} B"] if _given(self.io_bytes) else []
            volume = " + ".join(run)
            if _given(self.io_bytes_per_node):
                volume = f"({' + '.join([*run, f'{self.io_bytes_per_node:.4g} B * p'])})"
            io = f" + {volume} / min({self.fs_bw_bytes_per_s:.4g} B/s"
            io += (f", p * {self.net_injection_bw_bytes_per_s:.4g} B/s)"
                   if self.net_injection_bw_bytes_per_s else ")")
        return (f"T(p) = {self.serial_s_:.4g} s + {compute} / p"
                f" + {self.comm_s_:.4g} s * log2(p){network}{io}")


def _given(volume: Volume) -> bool:
    """Whether a volume (a number, or one per run) gives a term: some of it above 0."""
    return volume is not None and bool(np.any(np.asarray(volume) > 0))


def _amount(volume: Volume) -> FloatArray:
    """A volume as numbers, 0 where it is unknown."""
    return np.asarray(0.0 if volume is None else volume, dtype=float)
