"""Where an estimate's time goes: compute, communication and I/O from the roofline law
when the query gives its I/O volume, else serial, parallel and communication parts where
the law says so, plus the data-staging share the series measured."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from perfpredict.estimate.lookup import FieldName, option_name

if TYPE_CHECKING:
    from perfpredict.estimate.lookup import Query
    from perfpredict.laws.roofline import Roofline
    from perfpredict.model.series import Series
    from perfpredict.overhead.features import SeriesContext


def fitted_roofline(series: Series, ctx: SeriesContext, io_bytes: float | None,
                    field_name: FieldName = option_name) -> tuple[Roofline | None, list[str]]:
    """The roofline law fitted to the series for a query's I/O volume ``io_bytes``, with
    the file-system numbers from the system catalog, and what the estimate should say of
    it (why there is none, which of its terms fell back); None and no notes where the
    query gives no I/O volume or the series has too few scales to fit one. The notes are
    the estimate's, one query or a batch row
    (:func:`perfpredict.estimate.estimates.estimate_notes`), naming the volume as the
    query names its fields (``field_name``: ``--io-bytes``, or a batch's
    ``column 'io_bytes'``), the law its breakdown's (:func:`roofline_breakdown`)."""
    if not io_bytes:
        return None, []
    from perfpredict.laws.roofline import Roofline  # imported by the queries it serves

    if ctx.scales.size < Roofline.min_scales:
        return None, []
    given_as = field_name("io_bytes")
    if series.scale_unit != "nodes":
        return None, [f"the series is measured in ranks, not nodes, so {given_as} could not "
                      "be turned into I/O time (per-node bandwidth needs node counts)"]
    from perfpredict.catalog import bundled_system

    spec = bundled_system(series.key.system)
    if spec is None:
        return None, [f"{series.key.system} is not in the shipped catalog, so {given_as} "
                      "could not be turned into I/O time"]
    roofline = Roofline(io_bytes, spec.fs_bw_bytes_per_s,
                        spec.net_injection_bw_bytes_per_s, spec.net_latency_s)
    roofline.fit(ctx.scales, ctx.medians_s)
    notes = [f"roofline: {reason}" for reason in roofline.fallbacks_]
    if not roofline.fallbacks_:
        notes.append(f"I/O time from {spec.name}'s file-system bandwidth in the catalog")
    return roofline, notes


def roofline_breakdown(series: Series, ctx: SeriesContext, query: Query, scale: float,
                       runtime_s: float) -> dict[str, float]:
    """Compute / communication / I/O split from the roofline law when the query gives its
    I/O volume (:func:`fitted_roofline`); empty otherwise.

    The parts are scaled to the hybrid's prediction, which stays the estimate."""
    roofline, _ = fitted_roofline(series, ctx, query.io_bytes)
    if roofline is None:
        return {}
    parts = roofline.breakdown_s(scale)
    total = sum(parts.values())
    return {k: v * runtime_s / total for k, v in parts.items()} if total > 0 else {}


def law_breakdown(params: dict[str, float], law: str, scale: float, runtime_s: float,
                  io_share: float | None) -> dict[str, float]:
    """Where the time goes, where the law says so: serial, parallel, communication, and
    the share ``io_share`` of data staging, adding up to ``runtime_s``;
    for weak scaling (Gustafson's law), the time every scale spends alike and the time
    that grows with the scale (none where the fitted growth is negative: no part to
    name)."""
    parts: dict[str, float] = {}
    if law in ("amdahl", "amdahl_log"):
        parts = {"serial_s": params["serial_s"], "parallel_s": params["parallel_s"] / scale}
        if law == "amdahl_log":
            parts["communication_s"] = params["comm_s_per_log2p"] * math.log2(scale)
    elif law == "gustafson" and params["growth_s_per_unit"] >= 0:
        parts = {"constant_s": params["base_s"],
                 "growing_with_scale_s": params["growth_s_per_unit"] * scale}
    # the staging is a share of the runtime, the law's parts the rest, so that the parts
    # add up to the estimate (before, the staging came on top: deepcam's 371.9 s split
    # into 57.3 + 314.6 + 175.7 s); the overhead coefficient scales every part alike
    staging_s = runtime_s * io_share if io_share is not None else 0.0
    if parts:
        total = sum(parts.values())
        if total > 0:
            parts = {k: v * (runtime_s - staging_s) / total for k, v in parts.items()}
    if io_share is not None:
        parts["io_staging_s"] = staging_s
    return parts
