"""Where an estimate's time goes: compute or memory, communication, network and I/O from
the roofline law when the query gives a volume (I/O, network, flops, memory bytes) or the
series' runs recorded their I/O, else serial, parallel and communication parts where the
law says so, plus the data-staging share the series measured."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from perfpredict.estimate.lookup import FieldName, option_name
from perfpredict.laws.roofline_terms import VOLUMES

if TYPE_CHECKING:
    from perfpredict.catalog.entries import SystemSpec
    from perfpredict.estimate.lookup import Query
    from perfpredict.laws.base import FloatArray
    from perfpredict.laws.roofline import Roofline
    from perfpredict.model.series import Series
    from perfpredict.overhead.features import SeriesContext

#: The catalog entry of a system by its name, None where there is none: the store's
#: where it has one, else the shipped one (:meth:`LoadedPredictor.machine
#: <perfpredict.estimate.estimates.LoadedPredictor.machine>`), called only where a
#: volume is to be turned into time, so that an estimate without one reads no catalog.
MachineLookup = Callable[[str], "SystemSpec | None"]


class RecordedIO(NamedTuple):
    """The I/O a series' runs recorded at its largest measured scale (Darshan logs,
    accounting's disk counters or an ``io_bytes`` column: the median per node there, which
    a trained predictor keeps), the I/O volume of a query that gives none.

    Under weak scaling every node does the same work, so the run's I/O grows with the
    nodes; otherwise the run reads its input and writes its results whatever the node
    count (time-to-train too: each epoch reads the data set once, spread over the nodes),
    so the run's total stays what it was at the largest measured scale."""

    bytes_per_node: float
    at_nodes: float
    grows_with_nodes: bool

    def volumes(self) -> dict[str, float]:
        """The roofline law's I/O volume: each node's where it grows with the nodes,
        else the run's."""
        if self.grows_with_nodes:
            return {"io_bytes_per_node": self.bytes_per_node}
        return {"io_bytes": self.bytes_per_node * self.at_nodes}

    def words(self) -> str:
        """The volume and where it comes from, for a note."""
        if self.grows_with_nodes:
            return (f"{_bytes_words(self.bytes_per_node)} per node, as the runs at "
                    f"{self.at_nodes:g} nodes recorded it (weak scaling: alike on every node)")
        return (f"{_bytes_words(self.bytes_per_node * self.at_nodes)} per run, as the runs "
                f"at {self.at_nodes:g} nodes recorded it (the same at any node count)")


def recorded_io(series: Series, ctx: SeriesContext) -> RecordedIO | None:
    """The I/O the series' runs recorded at its largest measured scale, None where they
    recorded none there."""
    from perfpredict.overhead.features import SUMMARY_NAMES

    log2_per_node = float(ctx.summary[SUMMARY_NAMES.index("log2_io_bytes_per_node")])
    # the feature is log2(max(bytes, 1)): 0 is a run that read and wrote nothing
    if not math.isfinite(log2_per_node) or log2_per_node <= 0:
        return None
    return RecordedIO(2.0 ** log2_per_node, ctx.scale_max, series.weak)


def roofline_for(series: Series, ctx: SeriesContext, machine: MachineLookup,
                 query: Query) -> Roofline | None:
    """The roofline law of the series for the volumes a query gives (I/O, network,
    flops, memory bytes: :data:`~perfpredict.laws.roofline_terms.VOLUMES`), with the
    I/O the series' runs recorded where the query gives none
    (:func:`recorded_io`, where :func:`_usable_recorded_io` finds it usable), and the
    machine's numbers from its catalog entry (``machine``), not yet fitted; None where
    there is no volume or the catalog cannot turn them into time (:func:`roofline_notes`
    says why)."""
    volumes: dict[str, float] = dict(query.roofline_volumes())
    recorded = None if query.io_bytes is not None else recorded_io(series, ctx)
    if not volumes and recorded is None:
        return None
    spec = _roofline_machine(series, ctx, machine)
    if spec is None:
        return None
    if recorded is not None and _usable_recorded_io(recorded, spec, ctx):
        volumes.update(recorded.volumes())
    return _machine_roofline(spec, volumes) if volumes else None


def _usable_recorded_io(recorded: RecordedIO, spec: SystemSpec, ctx: SeriesContext) -> bool:
    """Whether the catalog turns the recorded I/O into time (it has the file-system
    bandwidth) that the runs which recorded it could have spent: no more than their
    median runtime. Runs that moved more bytes than the file system's bandwidth allows
    in their time read them from elsewhere (node-local storage, the page cache, which
    accounting's disk counters count too), and the file system's bandwidth says nothing
    of their I/O time."""
    if not spec.fs_bw_bytes_per_s:
        return False
    io_s = _machine_roofline(spec, recorded.volumes()).io_s(np.array([recorded.at_nodes]))
    return bool(io_s[0] <= ctx.medians_s[-1])


def recorded_io_floor_s(series: Series, ctx: SeriesContext, machine: MachineLookup,
                        scale: FloatArray) -> FloatArray | None:
    """Seconds the file system needs at ``scale`` nodes for the I/O the series' runs
    recorded (:func:`recorded_io`), at the catalog's bandwidth; None where they recorded
    none or it is not usable (:func:`_usable_recorded_io`)."""
    recorded = recorded_io(series, ctx)
    spec = None if recorded is None else _roofline_machine(series, ctx, machine)
    if recorded is None or spec is None or not _usable_recorded_io(recorded, spec, ctx):
        return None
    return _machine_roofline(spec, recorded.volumes()).io_s(scale)


def recorded_io_exceeds_estimate(series: Series, ctx: SeriesContext, machine: MachineLookup,
                                 io_bytes_given: NDArray[np.bool_], scale: FloatArray,
                                 runtime_s: FloatArray) -> NDArray[np.bool_]:
    """Whether the I/O the runs recorded needs more time at ``scale`` nodes than the
    estimate ``runtime_s`` there, for the queries of one series that give no I/O volume
    (:func:`io_bytes_given`; a volume given is held to the bound by
    :func:`volumes_exceed_runs`).
    The measured runs had the time for it (:func:`_usable_recorded_io`); an estimate
    below it, where the nodes shrink the rest of the run but not the file system's
    share, is optimistic."""
    floor_s = recorded_io_floor_s(series, ctx, machine, scale)
    if floor_s is None:
        return np.zeros(len(scale), dtype=bool)
    return np.asarray(~io_bytes_given & (runtime_s < floor_s), dtype=bool)


def _bytes_words(n_bytes: float) -> str:
    """A byte count in decimal units, as file systems and Darshan state them."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= size:
            return f"{n_bytes / size:.3g} {unit}"
    return f"{n_bytes:.3g} bytes"


def _machine_roofline(spec: SystemSpec, volumes: Mapping[str, float | FloatArray]) -> Roofline:
    """The roofline law of the volumes with ``spec``'s bandwidths and peak."""
    from perfpredict.laws.roofline import Roofline  # imported by the queries it serves

    return Roofline(fs_bw_bytes_per_s=spec.fs_bw_bytes_per_s,
                    net_injection_bw_bytes_per_s=spec.net_injection_bw_bytes_per_s,
                    net_latency_s=spec.net_latency_s,
                    peak_flops_per_node=spec.peak_flops_per_node,
                    mem_bw_bytes_per_s_per_node=spec.mem_bw_bytes_per_s_per_node, **volumes)


def volume_arrays(queries: list[Query]) -> dict[str, FloatArray]:
    """The roofline volumes of the queries, one array per field (0 where a query gives
    none: a volume of None and of 0 are alike, no term)."""
    return {volume: np.array([getattr(query, volume) or 0.0 for query in queries])
            for volume in VOLUMES}


def io_bytes_given(queries: list[Query]) -> NDArray[np.bool_]:
    """Whether each query gives its I/O volume, 0 included: a run said to read and write
    nothing (``--io-bytes 0``) is not given the I/O the series' runs recorded, which
    stands in only for a volume not given (:func:`recorded_io`)."""
    return np.fromiter((query.io_bytes is not None for query in queries), bool, len(queries))


def volumes_exceed_runs(series: Series, ctx: SeriesContext, machine: MachineLookup,
                         volumes: dict[str, FloatArray], scale: FloatArray,
                         runtime_s: FloatArray) -> NDArray[np.bool_]:
    """Whether the volumes each query gives (:func:`volume_arrays`) need more time than
    the series took: more than the estimate ``runtime_s`` at ``scale`` nodes (the
    roofline's floor, fitting nothing: :meth:`~perfpredict.laws.roofline.Roofline.floor_s`),
    or, where the work is fixed (strong scaling, not weak scaling or time-to-train, whose
    flops grow with the scale), more on-node time than a measured scale's median left
    (the roof on one node against the least node-seconds measured). The queries of one
    series at once. False where a query gives no volume or the catalog cannot turn them
    into time (:func:`roofline_notes` says why)."""
    if not any(values.any() for values in volumes.values()):
        return np.zeros(len(scale), dtype=bool)
    spec = _roofline_machine(series, ctx, machine)
    if spec is None:
        return np.zeros(len(scale), dtype=bool)
    roofline = _machine_roofline(spec, volumes)
    unmet = np.asarray(runtime_s < roofline.floor_s(scale), dtype=bool)
    if series.fixed_work and not series.weak:
        unmet |= roofline.node_roof_s() > np.min(ctx.medians_s * ctx.scales)
    return unmet


def roofline_notes(series: Series, ctx: SeriesContext, machine: MachineLookup,
                   given: tuple[str, ...], field_name: FieldName = option_name,
                   io_given: bool = False) -> list[str]:
    """What an estimate whose query gives the volumes ``given`` says of its roofline law
    (:func:`roofline_for`): why there is none, or which of its terms the catalog turned
    into time and which fall back, and the I/O the runs recorded where the query gives
    none. They depend on which volumes the query gives, not on how much, and need no
    fit: a batch of queries each with its own volume fitted one law per query for its
    notes alone. The notes are the estimate's, one query or a batch row
    (:func:`perfpredict.estimate.estimates.estimate_notes`), naming the volumes as the
    query names its fields (``field_name``: ``--io-bytes``, or a batch's ``column
    'io_bytes'``).

    Recorded I/O alone says nothing where the catalog cannot use it (a series in ranks,
    a system outside the catalog or without a file-system bandwidth): every estimate of
    the series would repeat it, and the user asked for no roofline. ``io_given``: the
    query gives an I/O volume of 0, which ``given`` (the volumes that make terms) leaves
    out, and which the recorded I/O does not replace."""
    recorded = None if "io_bytes" in given or io_given else recorded_io(series, ctx)
    if not given and recorded is None:
        return []
    spec = _roofline_machine(series, ctx, machine)
    if spec is None:
        if not given:
            return []
        why_not = _why_no_machine(series, ctx, " and ".join(map(field_name, given)))
        return [why_not] if why_not else []
    notes = []
    if recorded is not None and spec.fs_bw_bytes_per_s:
        if _usable_recorded_io(recorded, spec, ctx):
            given = (*given, "io_bytes")
            notes.append(f"roofline: I/O volume {recorded.words()}; {field_name('io_bytes')} "
                         "gives another")
        else:
            notes.append(f"roofline: the runs at {recorded.at_nodes:g} nodes recorded more "
                         f"I/O than {spec.name}'s file-system bandwidth moves in the time "
                         "they took (node-local storage or caches serve it, or the counters "
                         "count those too): their I/O time is inside the fitted terms")
    if not given:
        return notes
    from perfpredict.laws.roofline_terms import fallbacks_for, sources_for

    sources = sources_for(given, spec)
    where, entry = _entry_words(spec)
    return ([f"roofline: {reason}" for reason in fallbacks_for(given, spec, where)] + notes
            + ([f"roofline from {entry}: {', '.join(sources)}"] if sources else []))


def _entry_words(spec: SystemSpec) -> tuple[str, str]:
    """Where the roofline's machine numbers were read, as the subject of "has no ..."
    and as "roofline from ...": the shipped catalog, or the store's entry a user gave
    (``systems add``, over a shipped one of the name too) or ingest made, so that a note
    never blames the shipped catalog for a number the user's entry lacks, nor credits it
    with one the user gave."""
    if spec.origin == "user":
        return ("the store's entry added with 'systems add'",
                f"{spec.name}'s entry added with 'systems add'")
    if spec.origin == "ingest":  # holds what a log told: its node count at most
        return ("the store's placeholder that ingest made from the logs (complete it with "
                "'perfpredict systems add FILE.toml')",
                f"{spec.name}'s placeholder that ingest made from the logs")
    return "the shipped catalog", f"{spec.name}'s catalog entry"


def breakdown_note(note: str) -> bool:
    """Whether an estimate's note is one of :func:`roofline_notes` that speaks of its
    breakdown (where a volume comes from, which terms the catalog turned into time),
    which advice, showing no breakdown and taking no ``--io-bytes``, leaves out."""
    return note.startswith("roofline")


def _roofline_machine(series: Series, ctx: SeriesContext,
                      machine: MachineLookup) -> SystemSpec | None:
    """The catalog entry whose numbers turn the series' volumes into time (``machine``'s
    for the series' system), or None (:func:`_why_no_machine` says why)."""
    from perfpredict.laws.roofline import Roofline

    if ctx.scales.size < Roofline.min_scales or series.scale_unit != "nodes":
        return None
    return machine(series.key.system)


def _why_no_machine(series: Series, ctx: SeriesContext, given_as: str) -> str | None:
    """Why :func:`_roofline_machine` found no catalog entry to turn the volumes
    ``given_as`` into time (None where there is nothing to say: too few scales to fit
    the law)."""
    from perfpredict.laws.roofline import Roofline

    if ctx.scales.size < Roofline.min_scales:
        return None
    if series.scale_unit != "nodes":
        return (f"the series is measured in ranks, not nodes, so {given_as} could not be "
                "turned into time (the catalog's numbers are per node)")
    return (f"{series.key.system} is in neither the shipped catalog nor the store's, so "
            f"{given_as} could not be turned into time (describe the machine with "
            "'perfpredict systems add FILE.toml')")


def roofline_breakdown(series: Series, ctx: SeriesContext, machine: MachineLookup,
                       query: Query, scale: float, runtime_s: float) -> dict[str, float]:
    """Where the time goes by the roofline law when the query gives a volume or the
    runs recorded their I/O (:func:`roofline_for`): serial, the on-node roof and the
    time above it (or compute), communication, network volume and I/O; empty otherwise.

    The parts are scaled to the hybrid's prediction, which stays the estimate."""
    roofline = roofline_for(series, ctx, machine, query)
    if roofline is None:
        return {}
    roofline.fit(ctx.scales, ctx.medians_s)
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
