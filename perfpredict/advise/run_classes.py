"""Run classes of an allocation proposal and their totals, per allocation period.

A proposal's resource table has one row per class of run the project plans (the largest,
a typical and the smallest job): its node count, wallclock per run at P50 and P90, the
number of runs, node-hours per run and in total; then the totals, and the totals per
allocation period, because centers grant hours per period and take back what a period
leaves unused (ARCHER2 asks per 6 months, LCRC per quarter).

``advise --run-class largest=32x5 --run-class typical=8x40 --periods 4
--period-label quarter`` plans three classes and splits their totals over four quarters.
This module parses the classes and holds the figures; :func:`perfpredict.advise.plan.
advise_plan` predicts each class with the machinery of the recommendation.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from perfpredict.counts import check_count
from perfpredict.errors import BadInputError
from perfpredict.figures import format_value

#: Most production runs ``--runs`` (or a run class) budgets for. A proposal's run classes
#: count tens to thousands of runs (an ensemble campaign tens of thousands); a million runs
#: of even a one-node, one-minute job are some 17,000 node-hours, a small allocation's
#: year. A larger count is a slip (node-hours typed as runs, a digit too many) that the
#: totals would multiply without a word, and past about 10^308 the node-hour totals
#: overflowed (an internal error).
MAX_RUNS = 1_000_000
#: Most allocation periods the totals are split over: monthly periods of a ten-year
#: allocation. More is a slip (hours typed as periods) that would print totals of nothing.
MAX_PERIODS = 120
#: The run class of the table without ``--run-class``: the recommendation at ``--runs``.
RECOMMENDED_LABEL = "production (recommended)"

#: ``LABEL=NODESxRUNS``; spaces around the parts are allowed, the label is what precedes
#: the last ``=`` that is followed by the two counts.
_RUN_CLASS = re.compile(r"(?P<label>.+?)\s*=\s*(?P<nodes>\d+)\s*[xX]\s*(?P<runs>\d+)")
_FORM = "LABEL=NODESxRUNS, e.g. largest=512x10 for 10 runs on 512 nodes"


@dataclass(frozen=True)
class RunClass:
    """A class of production run the user plans: ``runs`` runs on ``nodes`` nodes."""

    label: str
    nodes: int
    runs: int


def check_label(option: str, label: str) -> None:
    """Refuse a label that would break the tables it heads a row of: empty, or holding a
    line break or another control character."""
    if (not isinstance(label, str) or not label.strip()
            or any(not ch.isprintable() for ch in label)):
        raise BadInputError(f"{option} needs a label of printable text on one line, got "
                            f"{label!r}")


def parse_run_class(text: str) -> RunClass:
    """One ``--run-class`` value as a :class:`RunClass`, or a one-line refusal naming the
    option, the value and the expected form.

    >>> parse_run_class("largest=512x10")
    RunClass(label='largest', nodes=512, runs=10)
    """
    match = _RUN_CLASS.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise BadInputError(f"--run-class {text!r} is not {_FORM}")
    label, nodes, runs = match["label"].strip(), int(match["nodes"]), int(match["runs"])
    check_label(f"--run-class {text!r}", label)
    check_count(f"--run-class {text!r}: the node count", nodes)
    check_count(f"--run-class {text!r}: the number of runs", runs, most=MAX_RUNS)
    return RunClass(label, nodes, runs)


def parse_run_classes(texts: tuple[str, ...]) -> list[RunClass]:
    """Every ``--run-class`` value parsed, each label once: two rows of one name would
    read as one class counted twice."""
    classes = [parse_run_class(text) for text in texts]
    labels = [c.label for c in classes]
    for label in labels:
        if labels.count(label) > 1:
            raise BadInputError(f"--run-class label {label!r} is given twice; give each "
                                f"class its own label ({_FORM})")
    return classes


def rests_on(nodes: int, measured_nodes: list[float]) -> str:
    """Which measured node counts a class's figures rest on, in words.

    >>> rests_on(8, [1, 8, 32]), rests_on(4, [1, 8, 32]), rests_on(64, [1, 8, 32])
    ('measured at this node count', 'predicted between the measured 1 and 8 nodes', \
'predicted beyond the largest measured, 32 nodes')
    """
    if float(nodes) in measured_nodes:
        return "measured at this node count"
    below = [n for n in measured_nodes if n < nodes]
    above = [n for n in measured_nodes if n > nodes]
    if not below:
        return f"predicted below the smallest measured, {min(above):g} nodes"
    if not above:
        return f"predicted beyond the largest measured, {max(below):g} nodes"
    return f"predicted between the measured {max(below):g} and {min(above):g} nodes"


@dataclass
class RunClassPlan:
    """A run class predicted at its node count as the recommendation is: runtime P50 and
    the interval at the plan's confidence, P90, the walltime at ``--kill-risk`` in the
    queue chosen for the node count, and allocation units per run through the catalog's
    charge factor (None without one). ``measured``: the node count was run;
    ``beyond_measured_range``: it lies above every measured count;
    ``below_measured_range``: below every one, where the laws extrapolate downward and no
    backtest measures the error; ``basis`` says which measured counts the figures rest on
    (:func:`rests_on`)."""

    label: str
    nodes: int
    runs: int
    measured: bool
    beyond_measured_range: bool
    below_measured_range: bool
    predicted_runtime_s: float
    lower_runtime_s: float
    upper_runtime_s: float
    p90_runtime_s: float
    walltime_s: float
    walltime_quantile_s: float
    kill_probability: float
    #: ``kill_probability`` is an upper bound ("at most"): the risk asked for, or the
    #: finest the calibration errors resolve where the walltime lies past the widest
    #: of them (:func:`~perfpredict.advise.job_limits.walltime_kill_probability`).
    kill_probability_is_upper_bound: bool
    queue: str | None
    chained_jobs: int
    allocation_units_per_run_p50: float | None
    allocation_units_per_run_p90: float | None
    basis: str

    @property
    def source(self) -> str:
        """How the row is known, as the scaling evidence's source column says it."""
        if self.measured:
            return "measured"
        if self.beyond_measured_range:
            return "predicted, beyond measured"
        # a class below every measured count read "predicted", as one between two did
        return "predicted, below measured" if self.below_measured_range else "predicted"

    @property
    def node_hours_per_run_p50(self) -> float:
        return self.nodes * self.predicted_runtime_s / 3600.0

    @property
    def node_hours_per_run_p90(self) -> float:
        return self.nodes * self.p90_runtime_s / 3600.0

    @property
    def node_hours_p50(self) -> float:
        """Node-hours for all the class's runs at the median runtime."""
        return self.node_hours_per_run_p50 * self.runs

    @property
    def node_hours_p90(self) -> float:
        """Node-hours for all the class's runs at the 90th-percentile runtime."""
        return self.node_hours_per_run_p90 * self.runs

    @property
    def allocation_units_p50(self) -> float | None:
        per_run = self.allocation_units_per_run_p50
        return None if per_run is None else per_run * self.runs

    @property
    def allocation_units_p90(self) -> float | None:
        per_run = self.allocation_units_per_run_p90
        return None if per_run is None else per_run * self.runs

    def as_dict(self) -> dict[str, Any]:
        """The class as JSON-ready data, named with units as the advice's fields are."""
        from perfpredict.advise.scheduler import pbs_time
        from perfpredict.advise.walltime import slurm_time

        return {
            "label": self.label, "nodes": self.nodes, "runs": self.runs,
            "measured": self.measured, "beyond_measured_range": self.beyond_measured_range,
            "below_measured_range": self.below_measured_range,
            "source": self.source,
            "predicted_runtime_s": self.predicted_runtime_s,
            "lower_runtime_s": self.lower_runtime_s, "upper_runtime_s": self.upper_runtime_s,
            "p90_runtime_s": self.p90_runtime_s,
            "walltime_s": self.walltime_s, "walltime_slurm": slurm_time(self.walltime_s),
            "walltime_pbs": pbs_time(self.walltime_s),
            "walltime_quantile_s": self.walltime_quantile_s,
            "kill_probability": self.kill_probability,
            "kill_probability_is_upper_bound": self.kill_probability_is_upper_bound,
            "queue": self.queue,
            "chained_jobs": self.chained_jobs,
            "node_hours_per_run_p50": self.node_hours_per_run_p50,
            "node_hours_per_run_p90": self.node_hours_per_run_p90,
            "node_hours_p50": self.node_hours_p50, "node_hours_p90": self.node_hours_p90,
            "allocation_units_per_run_p50": self.allocation_units_per_run_p50,
            "allocation_units_per_run_p90": self.allocation_units_per_run_p90,
            "allocation_units_p50": self.allocation_units_p50,
            "allocation_units_p90": self.allocation_units_p90,
            "basis": self.basis,
        }


def _sum_or_none(values: list[float | None]) -> float | None:
    """The sum, or None when a value is unknown: a total of the known part would read as
    the whole."""
    known = [v for v in values if v is not None]
    return sum(known) if len(known) == len(values) else None


@dataclass
class ResourceFigures:
    """Runs, node-hours and allocation units (None without a charge factor) at P50 and
    P90: the total over the run classes, or one period's share of it."""

    runs: float
    node_hours_p50: float
    node_hours_p90: float
    allocation_units_p50: float | None
    allocation_units_p90: float | None

    def divided(self, parts: int) -> ResourceFigures:
        """An even share of these figures (runs as an average, which need not be
        whole)."""
        def share(value: float | None) -> float | None:
            return None if value is None else value / parts

        return ResourceFigures(self.runs / parts, self.node_hours_p50 / parts,
                               self.node_hours_p90 / parts,
                               share(self.allocation_units_p50),
                               share(self.allocation_units_p90))


@dataclass
class ResourceTotals:
    """The requested resources summed over the run classes (``total``), and split evenly
    over ``periods`` allocation periods called ``period_label`` (one period: no split)."""

    total: ResourceFigures
    periods: int
    period_label: str

    @classmethod
    def over(cls, classes: list[RunClassPlan], periods: int,
             period_label: str) -> ResourceTotals:
        return cls(ResourceFigures(
            runs=sum(c.runs for c in classes),
            node_hours_p50=sum(c.node_hours_p50 for c in classes),
            node_hours_p90=sum(c.node_hours_p90 for c in classes),
            allocation_units_p50=_sum_or_none([c.allocation_units_p50 for c in classes]),
            allocation_units_p90=_sum_or_none([c.allocation_units_p90 for c in classes])),
            periods, period_label)

    @property
    def per_period(self) -> ResourceFigures:
        """One period's share: the totals split evenly. Even, because nothing says when
        each run will be made; a user who knows splits the runs into classes per period."""
        return self.total.divided(self.periods)

    def split_sentence(self) -> str:
        """How the totals were split per period, and why a proposal gives them so; where
        the runs do not divide into the periods (3 runs over 4 quarters), that a period's
        share is an average: "Per quarter: 0.75 runs" read as a figure to request, and a
        quarter in which a run is made needs that run's whole hours."""
        split = (f"Totals per {self.period_label} split evenly over {self.periods} "
                 f"periods, as centers grant hours per period and take back what a period "
                 f"leaves unused.")
        runs = self.total.runs
        if runs % self.periods == 0:
            return split
        share = runs / self.periods
        # written as the table's cells are: 1e+06 runs "is 8.33e+03 runs per month"
        return (f"{split} The share is an average: {format_value(float(runs))} "
                f"run{'' if runs == 1 else 's'} over {self.periods} periods is "
                f"{format_value(float(share))} runs per {self.period_label}"
                f"{', fewer than one' if share < 1 else ''}, and a period in which a run is "
                f"made needs that run's whole node-hours; ask for each run in the period "
                f"it is made.")

    def as_dict(self) -> dict[str, Any]:
        """The totals as JSON-ready data: the total's figures, the periods and one
        period's share under ``per_period``."""
        return {**asdict(self.total), "periods": self.periods,
                "period_label": self.period_label, "per_period": asdict(self.per_period)}
