"""An estimate explained: the chain of named steps, each with its number, from the fitted
laws at the scale asked for to the estimate and its interval.

The base is the geometric mean of its members (:class:`Member`); each :class:`Step`
multiplies the runtime before it by its ``factor``, so that the base times every factor
is the estimate (``estimate --explain`` prints the chain, with ``--format json`` as
``explanation``). A user, or the reviewer of an allocation proposal, can recompute the
number and question any step of it: the move onto the measured runs, the learned
correction, the peers' speed-up and their weight.

The numbers are those the prediction was made of
(:meth:`perfpredict.model.runtime.RuntimeModel.point_parts`), not computed again here;
this module only writes them out. docs/accuracy.md ("The parts") says why each step is
there and what it was measured to do.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from perfpredict.model.base_estimate import (
    ENSEMBLE,
    LAW_LABELS,
    context_ramp_end_log2,
    measured_neighbours,
)
from perfpredict.model.runtime import (
    PEER_INTERVAL_MIN_PEERS,
    PEER_WEIGHT,
    PointParts,
    repeat_at_measured_scale,
)
from perfpredict.model.series import Series
from perfpredict.overhead.contexts import FALLBACK_LAW, LAWS
from perfpredict.overhead.features import SUMMARY_NAMES, SeriesContext

#: The steps after the base, in the order they are taken. Every explanation has each,
#: with a factor of 1 where it does not apply (its detail says why), so that a script
#: finds the same names every time.
STEP_NAMES = ("measured_move", "correction", "peers", "ideal_scaling")


@dataclass
class Member:
    """One member of the base's geometric mean, at the scale asked for."""

    #: A key of :data:`LAW_LABELS`.
    law: str
    #: The fitted formula, or what the member is.
    formula: str
    runtime_s: float


@dataclass
class Step:
    """One step of the chain: the runtime before it times ``factor`` is ``runtime_s``."""

    #: One of :data:`STEP_NAMES`.
    step: str
    factor: float
    runtime_s: float
    detail: str


@dataclass
class Peer:
    """Another series of the application and input whose measured speed-up weighs in."""

    series: str
    #: Its runtime at the explained series' largest measured scale over its runtime at
    #: the scale asked for (at its own largest scale, where its runs end short of it).
    speedup: float
    #: 1 where it measured the scale asked for, falling to 0 a doubling past its range.
    weight: float


@dataclass
class Explanation:
    """How one estimate was made, as a chain of named steps that multiplies out to it:
    ``base_runtime_s`` (the geometric mean of the ``members``' runtimes) times each
    step's ``factor`` is ``predicted_runtime_s``, the estimate.

    ``peers`` are the other series whose median speed-up ``peer_speedup`` weighs
    ``peer_weight`` (in log space) in the ``peers`` step (none, ``None`` and 0 where no
    peer weighs in); the interval is the estimate times ``lower_factor`` and
    ``upper_factor``."""

    scale: float
    scale_unit: str
    members: list[Member]
    base_runtime_s: float
    steps: list[Step]
    predicted_runtime_s: float
    peers: list[Peer]
    peer_speedup: float | None
    peer_weight: float
    confidence: float
    lower_runtime_s: float
    upper_runtime_s: float
    lower_factor: float
    upper_factor: float
    interval_detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def explain(series: Series, ctx: SeriesContext, parts: PointParts, index: int,
            scale: float, corrected: bool, confidence: float, lower_s: float,
            upper_s: float) -> Explanation:
    """The explanation of the estimate at ``scale``, the ``index``-th scale of ``parts``
    (``corrected``: the predictor applies a learned correction to this scaling kind;
    ``lower_s``, ``upper_s``: the estimate's interval at ``confidence``)."""
    i = index
    chain = [
        ("measured_move", parts.offset_log[i], _move_detail(series, ctx, parts, i, scale)),
        ("correction", parts.correction_log[i], _correction_detail(series, ctx, parts, i,
                                                                      scale, corrected)),
        ("peers", parts.blended_log[i] - parts.hybrid_log[i],
         _peers_detail(series, ctx, parts, i, scale)),
        ("ideal_scaling", parts.runtime_log[i] - parts.blended_log[i],
         _ideal_detail(series, ctx, parts, i, scale)),
    ]
    base_s = math.exp(float(parts.base_log[i]))
    runtime_s, steps = base_s, []
    for name, log_factor, detail in chain:
        factor = math.exp(float(log_factor))
        runtime_s *= factor
        steps.append(Step(name, factor, runtime_s, detail))
    predicted_s = math.exp(float(parts.runtime_log[i]))
    weight = float(parts.peer_weight[i])
    said = parts.peers
    peers = [] if said is None or weight == 0 else [
        Peer(key.name, math.exp(-float(said.peer_log_speedups[k, i])),
             float(said.peer_weights[k, i]))
        for k, key in enumerate(said.keys) if said.peer_weights[k, i] > 0]
    return Explanation(
        scale=scale, scale_unit=series.scale_unit, members=_members(series, ctx, parts, i),
        base_runtime_s=base_s, steps=steps, predicted_runtime_s=predicted_s, peers=peers,
        peer_speedup=(math.exp(-float(said.log_speedup[i]))
                      if said is not None and weight > 0 else None),
        peer_weight=weight, confidence=confidence, lower_runtime_s=lower_s,
        upper_runtime_s=upper_s, lower_factor=lower_s / predicted_s,
        upper_factor=upper_s / predicted_s,
        interval_detail=_interval_detail(series, ctx, parts, i, scale))


def runtime_text(value_s: float) -> str:
    """Four significant digits, or the whole seconds where there are more, never in
    exponent notation: enough that a step of a few per cent shows.

    >>> runtime_text(4.0447), runtime_text(160.62), runtime_text(25057.3), runtime_text(0.015055)
    ('4.045 s', '160.6 s', '25,057 s', '0.01506 s')
    """
    if not math.isfinite(value_s) or value_s <= 0:
        return f"{value_s:g} s"
    decimals = max(3 - math.floor(math.log10(value_s)), 0)
    return f"{value_s:,.{decimals}f} s"


def _at(scales: tuple[float, ...] | float, unit: str) -> str:
    """'1024 nodes', '8 and 128 nodes', '1 node'."""
    values = scales if isinstance(scales, tuple) else (scales,)
    one = values == (1.0,)
    return f"{' and '.join(f'{s:g}' for s in values)} {unit.removesuffix('s') if one else unit}"


def _members(series: Series, ctx: SeriesContext, parts: PointParts,
             i: int) -> list[Member]:
    """The base's members at the ``i``-th scale: each :data:`ENSEMBLE` law (one the
    series has too few scales to determine counted as Amdahl's, which stands in for it),
    then the slope drift where it takes part."""
    members = []
    for j, name in enumerate(ENSEMBLE):
        if name in ctx.laws:
            formula = ctx.laws[name].formula()
        else:
            formula = (f"{ctx.laws[FALLBACK_LAW].formula()} ({LAW_LABELS[FALLBACK_LAW]}'s, "
                       f"standing in: {ctx.scales.size} measured scales cannot determine "
                       f"{LAW_LABELS[name]}, which needs {LAWS[name].min_scales})")
        members.append(Member(name, formula, math.exp(float(parts.member_logs[i, j]))))
    drift_log = float(parts.member_logs[i, len(ENSEMBLE)])
    if not math.isnan(drift_log):
        slope = float(ctx.summary[SUMMARY_NAMES.index("edge_slope")])
        members.append(Member(
            "slope_drift",
            f"the slope d ln T / d ln p into the largest measured scale ({slope:.3g}, "
            f"between {_at((float(ctx.scales[-2]), ctx.scale_max), series.scale_unit)}) "
            "continued from the "
            f"median there ({runtime_text(float(ctx.medians_s[-1]))}), turned per doubling as "
            "the training series' slopes turned",
            math.exp(drift_log)))
    return members


def _move_detail(series: Series, ctx: SeriesContext, parts: PointParts, i: int,
                 scale: float) -> str:
    unit = series.scale_unit
    around = measured_neighbours(ctx, scale, not series.weak)
    if scale > ctx.scale_max:
        if series.weak:
            ramp = float(parts.ramp[i])
            until = (f"by the base's miss of the runs at its largest measured scale, "
                     f"{_at(ctx.scale_max, unit)}, only until its correction takes over")
            if ramp == 1:
                return f"none: a weak-scaling series is moved {until}, as it has here"
            miss = math.exp(float(parts.offset_log[i]) / (1.0 - ramp))
            return (f"a weak-scaling series is moved {until}: that miss, x {miss:.4g}, "
                    f"to the power one less the correction's ramp, 1 - {ramp:.3g}")
        return (f"onto the median of the runs at the largest measured scale, "
                f"{_at(ctx.scale_max, unit)} ({runtime_text(float(ctx.medians_s[-1]))}): the "
                "base's miss there, so that the estimate goes on from the last measurement")
    if scale < ctx.scale_min:
        return (f"by the base's miss of the runs at the smallest measured scale, "
                f"{_at(ctx.scale_min, unit)} ({runtime_text(float(ctx.medians_s[0]))})")
    if len(around) == 1:
        return (f"onto the median of the runs measured at {_at(around, unit)} "
                f"({runtime_text(float(ctx.medians_s[ctx.scales.searchsorted(scale)]))})")
    return (f"onto the runs measured at {_at(around, unit)}: the base's miss of their "
            "medians, interpolated in log scale")


def _correction_detail(series: Series, ctx: SeriesContext, parts: PointParts, i: int,
                       scale: float, corrected: bool) -> str:
    kind = "weak" if series.weak else "strong"
    if not corrected:
        return (f"none: this predictor learned no correction for {kind} scaling (too few "
                "series, or it did not beat the laws; see what 'perfpredict train' said)")
    ramp = float(parts.ramp[i])
    if ramp == 0:
        # below the smallest measured scale too: a query there is not inside the range
        where = ("below the measured range, where the runs at its smallest scale set the "
                 "level" if scale < ctx.scale_min
                 else "inside the measured range, where the measured runs set the level")
        return (f"none {where} (the learned correction is ramped in beyond the largest "
                "measured scale)")
    learned = math.exp(float(parts.learned_log[i]))
    if ramp == 1:
        return f"the learned overhead coefficient c = {learned:.4g}, applied in full"
    return (f"the learned overhead coefficient a step of the series' last spacing of "
            f"scales out, c = {learned:.4g}, applied as c^{ramp:.3g}: ramped in over that "
            "step")


def _peers_detail(series: Series, ctx: SeriesContext, parts: PointParts, i: int,
                  scale: float) -> str:
    unit = series.scale_unit
    if series.weak:
        return "none: peers take no part in weak scaling"
    if scale <= ctx.scale_max:
        return "none: peers weigh in beyond the measured range only"
    said = parts.peers
    weight = float(parts.peer_weight[i])
    if said is None or weight == 0:
        return (f"none: no other series of {series.key.app} on this input measured from "
                f"{_at(ctx.scale_max, unit)} toward {_at(scale, unit)}")
    n_peers = int(said.n_peers[i])
    speedup = math.exp(-float(said.log_speedup[i]))
    peer_s = math.exp(float(parts.peer_log[i]))
    hybrid_s = math.exp(float(parts.hybrid_log[i]))
    weights = said.peer_weights[:, i]
    n_fading = int(((weights > 0) & (weights < 1)).sum())
    fading = (f"; {n_fading} of them end short of {_at(scale, unit)} and weigh the less "
              "the farther short: the median is the one expected over how far a peer's "
              f"runs hold, the weight {PEER_WEIGHT:.0%} times the chance that some peer "
              "weighs in" if n_fading else "")
    return (f"{n_peers} other series of {series.key.app} on this input measured a median "
            f"speed-up of {speedup:.4g}x from {_at(ctx.scale_max, unit)} to "
            f"{_at(scale, unit)}: {runtime_text(float(ctx.medians_s[-1]))} / {speedup:.4g} = "
            f"{runtime_text(peer_s)}, weighed {weight:.0%} in log space against "
            f"{runtime_text(hybrid_s)} (factor ({runtime_text(peer_s)} / {runtime_text(hybrid_s)})^"
            f"{weight:.3g}){fading}")


def _ideal_detail(series: Series, ctx: SeriesContext, parts: PointParts, i: int,
                  scale: float) -> str:
    unit = series.scale_unit
    if series.weak:
        return "none: weak scaling is not bounded by ideal scaling"
    if scale <= ctx.scale_max:
        return "none: the bound holds beyond the measured range"
    if not series.fixed_work:
        return ("none: the runs time a target (time to train), which may beat ideal "
                "scaling")
    ideal_s = float(ctx.medians_s[-1]) * ctx.scale_max / scale
    # worked out either way: a bare "(2.557 s)" after "the median at 1024 nodes" read as
    # that median, which the measured move's line gives as 5.113 s
    bound = (f"ideal scaling from the median at {_at(ctx.scale_max, unit)}, "
             f"{runtime_text(float(ctx.medians_s[-1]))} x {ctx.scale_max:g} / {scale:g} = "
             f"{runtime_text(ideal_s)}")
    if parts.runtime_log[i] > parts.blended_log[i]:
        return f"raised to {bound}: fixed work runs no faster"
    return f"none: above {bound}, which fixed work does not beat"


def _interval_detail(series: Series, ctx: SeriesContext, parts: PointParts, i: int,
                     scale: float) -> str:
    unit = series.scale_unit
    if scale > ctx.scale_max and parts.ramp[i] < 1:
        step_log2 = context_ramp_end_log2(ctx)
        text = (f"{parts.ramp[i]:.2f} of the way, in log bounds, from the interval at "
                f"{_at(ctx.scale_max, unit)} to the one calibrated {step_log2:.2g} doubling"
                f"{'' if step_log2 == 1 else 's'} beyond it (a step of the series' spacing), "
                "as the correction is ramped in")
    elif scale > ctx.scale_max:
        doublings = math.log2(scale / ctx.scale_max)
        text = (f"calibrated on how far estimates {doublings:.2g} doubling"
                f"{'' if doublings == 1 else 's'} beyond a series' largest measured scale "
                "missed" + (" (beyond one doubling, the one-doubling interval times the "
                            "distance)" if doublings > 1 else ""))
    elif bool(repeat_at_measured_scale(ctx, np.array([scale]))[0]):
        text = f"the run-to-run noise of the series' own repeats at {_at(scale, unit)}"
    else:
        text = "calibrated on how far estimates between or below measured scales missed"
    narrowed = float(parts.narrowed[i])
    if narrowed < 1:
        text += (f"; its log half-widths times {narrowed:.2f}, as "
                 f"{PEER_INTERVAL_MIN_PEERS} or more peers weigh in")
    if not series.weak and series.fixed_work and scale > ctx.scale_max:
        text += ("; for fixed work no lower than ideal scaling from the interval's lower "
                 f"end at {_at(ctx.scale_max, unit)}")
    return text
