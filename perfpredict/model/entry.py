"""What a trained runtime predictor keeps of each series: its key, measured medians and
fitted laws, so an estimate needs neither the runs nor the training libraries.

:class:`SeriesEntry` owns its JSON layout: training writes it with :meth:`to_dict`, the
store and the estimate read it with :meth:`from_dict`, and nothing else looks inside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from perfpredict.model.series import Series, SeriesKey
from perfpredict.packed import pack, unpack
from perfpredict.uncertainty.noise import RepeatNoise

if TYPE_CHECKING:
    from perfpredict.overhead.features import SeriesContext


class SeriesEntry(NamedTuple):
    """One series of a trained predictor, as its artifact stores it."""

    key: SeriesKey
    scale_unit: str  # "nodes" or "ranks"
    weak: bool
    fixed_work: bool  # Series.fixed_work
    scales: tuple[float, ...]  # distinct measured scales, ascending
    medians_s: tuple[float, ...]  # median runtime at each scale
    #: its repeated runs' |log| deviations from the others at their scale, ascending
    #: (:class:`perfpredict.uncertainty.noise.RepeatNoise`)
    repeat_deviations_log: tuple[float, ...]
    summary: tuple[float | None, ...]  # the context features (None: unknown)
    laws: dict[str, dict[str, Any]]  # each fitted law's to_dict()
    n_runs: int
    io_share: float | None
    problem_size_num: float | None
    ranks_per_node: float | None
    threads_per_rank: float | None

    @classmethod
    def of(cls, ctx: SeriesContext) -> SeriesEntry:
        """The entry of a series fitted in full (``ctx``: its context)."""
        series = ctx.series
        return cls(
            key=series.key, scale_unit=series.scale_unit, weak=series.weak,
            fixed_work=series.fixed_work, scales=tuple(ctx.scales.tolist()),
            medians_s=tuple(ctx.medians_s.tolist()),
            repeat_deviations_log=tuple(ctx.repeat_noise.deviations_log.tolist()),
            summary=tuple(None if v != v else float(v) for v in ctx.summary),
            laws={name: law.to_dict() for name, law in ctx.laws.items()},
            n_runs=int(series.runtime_s.size), io_share=series.io_share,
            problem_size_num=series.problem_size_num, ranks_per_node=series.ranks_per_node,
            threads_per_rank=series.threads_per_rank)

    def to_dict(self) -> dict[str, Any]:
        """The entry as the artifact's JSON holds it."""
        return {
            "key": list(self.key), "scale_unit": self.scale_unit, "weak": self.weak,
            "fixed_work": self.fixed_work,
            "scales": list(self.scales), "medians_s": list(self.medians_s),
            "repeat_deviations_log": pack(self.repeat_deviations_log, "<f8"),
            "summary": list(self.summary), "laws": self.laws, "n_runs": self.n_runs,
            "io_share": self.io_share, "problem_size_num": self.problem_size_num,
            "ranks_per_node": self.ranks_per_node, "threads_per_rank": self.threads_per_rank,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> SeriesEntry:
        """The entry read back; a KeyError or TypeError means another layout (a key
        without a variant, written before it was part of the key, is one; so is an entry
        without ``fixed_work`` or ``repeat_deviations_log``)."""
        return cls(
            key=SeriesKey(*doc["key"]), scale_unit=doc["scale_unit"], weak=bool(doc["weak"]),
            fixed_work=bool(doc["fixed_work"]),
            scales=tuple(doc["scales"]), medians_s=tuple(doc["medians_s"]),
            repeat_deviations_log=tuple(
                unpack(doc["repeat_deviations_log"], "<f8").tolist()),
            summary=tuple(doc["summary"]), laws=doc["laws"], n_runs=int(doc["n_runs"]),
            io_share=doc["io_share"], problem_size_num=doc["problem_size_num"],
            ranks_per_node=doc["ranks_per_node"], threads_per_rank=doc["threads_per_rank"])

    @staticmethod
    def app_of(doc: dict[str, Any]) -> str:
        """The application of an entry as the artifact's JSON holds it, the rest unread:
        an estimate reads one application's entries (a KeyError or TypeError: another
        layout, as for :meth:`from_dict`)."""
        return str(doc["key"][0])

    @classmethod
    def each_of(cls, series_list: list[Series]) -> list[SeriesEntry]:
        """The entries of the series in ``series_list`` with two or more measured
        scales, all series' laws fitted at once: what ``train`` stores of each, and what
        an estimate fits of a series in the store that its predictor was not trained
        with (:meth:`perfpredict.estimate.estimates.LoadedPredictor.find_series`), so
        the two fit alike, to the bit."""
        from perfpredict.overhead.contexts import full_contexts  # training's bulk fit

        if not series_list:
            return []
        indices, contexts = full_contexts(series_list)
        return [cls.of(contexts.context(row, series_list[i]))
                for row, i in enumerate(indices.tolist())]

    def series(self) -> Series:
        """The series as its entry knows it: one run per measured scale, at its median."""
        return Series(key=self.key, scale_unit=self.scale_unit,
                      scale=np.asarray(self.scales, dtype=float),
                      runtime_s=np.asarray(self.medians_s, dtype=float), weak=self.weak,
                      fixed_work=self.fixed_work,
                      problem_size_num=self.problem_size_num,
                      ranks_per_node=self.ranks_per_node,
                      threads_per_rank=self.threads_per_rank, io_share=self.io_share)

    def context(self) -> tuple[Series, SeriesContext]:
        """The series and its fitted context: what every prediction for it rests on."""
        from perfpredict.laws import LAWS
        from perfpredict.overhead.features import SeriesContext

        series = self.series()
        laws = {name: LAWS[name].from_state(doc["state"]) for name, doc in self.laws.items()}
        summary = np.array([np.nan if v is None else v for v in self.summary], dtype=float)
        # the entry keeps the medians, and of the repeats how far they landed apart
        return series, SeriesContext(
            series, series.scale, series.runtime_s, laws, summary,
            RepeatNoise(np.asarray(self.repeat_deviations_log, dtype=float)))
