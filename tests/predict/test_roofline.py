from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpredict.laws.roofline import Roofline

P = np.array([1.0, 2, 4, 8, 16, 32, 64])
IO_BYTES = 4e12  # 4 TB per run
FS_BW, NODE_BW = 1e11, 5e9  # 100 GB/s file system, 5 GB/s per node


def synthetic(law: Roofline) -> np.ndarray:
    io = law.io_s(P)
    return 20 + 6400 / P + 3 * np.log2(P) + io


def test_io_term_comes_from_the_catalog_and_the_rest_is_fitted() -> None:
    law = Roofline(IO_BYTES, FS_BW, NODE_BW, net_latency_s=2e-6)
    t = synthetic(law)
    law.fit(P, t)
    assert law.fallbacks == []
    # at 4 nodes the nodes' injection bandwidth binds, at 64 the file system does
    assert law.io_s(np.array([4.0]))[0] == pytest.approx(IO_BYTES / (4 * NODE_BW))
    assert law.io_s(np.array([64.0]))[0] == pytest.approx(IO_BYTES / FS_BW)
    assert law.params()["compute_s"] == pytest.approx(6400, rel=1e-3)
    assert law.predict([128])[0] == pytest.approx(20 + 50 + 21 + 40, rel=1e-3)
    parts = law.breakdown_s(128)
    assert sum(parts.values()) == pytest.approx(law.predict([128])[0])
    assert "B / min(" in law.formula()


def test_io_per_node_grows_with_the_nodes() -> None:
    """Weak scaling's I/O: each node's alike, so the run's grows with the nodes; bound by
    each node's injection bandwidth (a constant time) until the file system's binds
    (then growing). The fit takes it away at every measured scale as it was there."""
    per_node = 1e10
    law = Roofline(fs_bw_bytes_per_s=FS_BW, net_injection_bw_bytes_per_s=NODE_BW,
                   io_bytes_per_node=per_node)
    assert law.io_s(np.array([4.0, 16.0]))[0] == pytest.approx(per_node / NODE_BW)
    assert law.io_s(np.array([64.0]))[0] == pytest.approx(64 * per_node / FS_BW)
    t = 20 + 6400 / P + 3 * np.log2(P) + law.io_s(P)
    law.fit(P, t)
    assert law.fallbacks == []
    assert law.params()["compute_s"] == pytest.approx(6400, rel=1e-3)
    assert law.breakdown_s(128)["io_s"] == pytest.approx(128 * per_node / FS_BW)
    assert "(1e+10 B * p) / min(" in law.formula()
    both = Roofline(IO_BYTES, FS_BW, io_bytes_per_node=per_node)
    assert both.io_s(np.array([8.0]))[0] == pytest.approx((IO_BYTES + 8 * per_node) / FS_BW)
    assert "(4e+12 B + 1e+10 B * p) / min(" in both.fit(P, t).formula()


def test_unknown_machine_numbers_fall_back_to_fitted_terms_and_say_so() -> None:
    law = Roofline(IO_BYTES, fs_bw_bytes_per_s=None).fit(P, 10 + 100 / P)
    assert law.io_s(P).sum() == 0
    assert "no file-system bandwidth" in law.fallbacks[0]
    assert "no workload volume" in Roofline().fit(P, 10 + 100 / P).fallbacks[0]


def test_the_on_node_term_is_never_below_its_roof_and_is_split_at_it() -> None:
    """The compute and memory roofs: the time one node needs for the run's flops at its
    peak or its memory traffic at its bandwidth, whichever is longer, shared by p nodes.
    Runs that leave room above the roof keep their fitted on-node time, split into the
    binding roof and the rest; runs measured faster than the roof allows are predicted
    no faster than it."""
    law = Roofline(flops=3.2e17, peak_flops_per_node=1e14,  # a 3200 s compute roof
                   mem_bytes=4e16, mem_bw_bytes_per_s_per_node=1e13)  # a 4000 s memory roof
    law.fit(P, 20 + 6400 / P + 3 * np.log2(P))
    assert law.roofs_s() == {"compute_s": pytest.approx(3200), "memory_s": pytest.approx(4000)}
    assert law.params()["compute_s"] == pytest.approx(6400, rel=1e-3)
    assert law.params()["memory_roof_s"] == pytest.approx(4000)
    parts = law.breakdown_s(64)
    assert list(parts) == ["serial_s", "memory_s", "above_roof_s", "communication_s"]
    assert parts["memory_s"] == pytest.approx(4000 / 64)
    assert parts["above_roof_s"] == pytest.approx(2400 / 64, rel=1e-3)
    assert sum(parts.values()) == pytest.approx(law.predict([64])[0])
    assert "max(6400 s, 4000 s roof) / p" in law.formula()

    faster = Roofline(mem_bytes=1e17, mem_bw_bytes_per_s_per_node=1e13).fit(
        P, 20 + 6400 / P + 3 * np.log2(P))  # a 10,000 s roof under 6400 s of work
    assert faster.params()["compute_s"] == pytest.approx(1e4)
    assert faster.breakdown_s(64)["above_roof_s"] == 0
    assert faster.predict([1])[0] > 20 + 6400


def test_the_network_volume_is_injected_by_every_node() -> None:
    law = Roofline(net_injection_bw_bytes_per_s=NODE_BW, net_bytes=6.4e13)
    t = 20 + 6400 / P + 3 * np.log2(P) + law.network_s(P)
    law.fit(P, t)
    assert law.network_s(np.array([64.0]))[0] == pytest.approx(6.4e13 / (64 * NODE_BW))
    assert law.params()["compute_s"] == pytest.approx(6400, rel=1e-3)
    parts = law.breakdown_s(128)
    assert parts["network_s"] == pytest.approx(100)
    assert "io_s" not in parts
    assert "B / (p * 5e+09 B/s)" in law.formula()


def test_the_floor_fits_nothing_and_takes_one_volume_per_run() -> None:
    """The bound a batch checks its queries against: the roof shared by the nodes, plus
    the network volume and the I/O at their bandwidths, one run per element."""
    machine = dict(fs_bw_bytes_per_s=FS_BW, net_injection_bw_bytes_per_s=NODE_BW,
                   peak_flops_per_node=1e14, mem_bw_bytes_per_s_per_node=1e13)
    runs = [dict(flops=3.2e17), dict(mem_bytes=4e16, io_bytes=IO_BYTES),
            dict(net_bytes=6.4e13, flops=1e16), {}]
    p = np.array([64.0, 4, 128, 8])
    each = [Roofline(**machine, **run).floor_s(np.array([at]))[0]  # type: ignore[arg-type]
            for run, at in zip(runs, p, strict=True)]
    assert each == pytest.approx([3200 / 64, 4000 / 4 + IO_BYTES / (4 * NODE_BW),
                                  100 / 128 + 6.4e13 / (128 * NODE_BW), 0])
    volumes = {v: np.array([run.get(v, 0.0) for run in runs])
               for v in ("io_bytes", "net_bytes", "flops", "mem_bytes")}
    together = Roofline(**machine, **volumes).floor_s(p)  # type: ignore[arg-type]
    np.testing.assert_allclose(together, each)


def test_a_volume_without_its_machine_number_says_what_holds_instead() -> None:
    law = Roofline(flops=1e18, mem_bytes=1e15, net_bytes=1e12,
                   mem_bw_bytes_per_s_per_node=1e13).fit(P, 10 + 100 / P)
    assert law.fallbacks == [
        "the catalog has no network injection bandwidth for this system: network volume "
        "time is inside the fitted terms",
        "the catalog has no peak flop rate for this system: the on-node time has no "
        "compute roof"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 13), min_size=3, max_size=8, unique=True),
       st.floats(0, 50), st.floats(0, 5000), st.floats(-20, 20), st.integers(0, 2**32 - 1))
def test_the_estimate_time_solver_agrees_with_scipys(exponents: list[int], serial_s: float,
                                                     work_s: float, comm_s: float,
                                                     seed: int) -> None:
    """The roofline's non-negative fit (numpy only, every subset of its terms) is scipy's
    active-set solution: the same coefficients, a negative term set to 0 by both."""
    from perfpredict.laws.base import relative_nnls, relative_nnls_small

    p = 2.0 ** np.sort(np.array(exponents, dtype=float))
    noise = np.random.default_rng(seed).uniform(0.9, 1.1, p.size)
    t = np.maximum(serial_s + work_s / p + comm_s * np.log2(p), 0.0) * noise + 0.5
    columns = [np.ones_like(p), 1 / p, np.log2(p)]
    mine, scipys = relative_nnls_small(columns, t), relative_nnls(columns, t)
    assert (mine >= 0).all()
    np.testing.assert_allclose(mine, scipys, rtol=1e-7, atol=1e-9 * t.max())
