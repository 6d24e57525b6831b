"""Advice for a run at scale: which node count to request, the walltime, and the node-hours
for an allocation proposal.

``advise_plan(store, PlanRequest(app="bert", system="dgxa100_ngc22.04", runs=10))``

1. **Sweep.** Node counts from the smallest measured one up to ``max_nodes`` (else the
   catalog's node count for the system, else 16x the largest measured): the powers of two
   and the measured counts, and ``max_nodes`` or the machine's size itself. Each is
   predicted with its interval by the trained predictor.
2. **Choose.** Among the counts that meet the efficiency floor (overall, against the
   smallest measured configuration, and/or a speedup per doubling as Notur asks), the
   objective picks one (:mod:`perfpredict.advise.selection`), and one sentence says which
   rule decided. With ``nodes``, a count the user has chosen, the steps below are for it
   instead, and the choice is said beside it for comparison, with a note where it fails
   the floor (a count the machine does not have is refused).
3. **Walltime.** The runtime quantile at ``1 - kill_risk`` for the chosen count, rounded up
   to the scheduler's granularity, in the queue whose limit holds it (the default queue
   for the node count, else another that takes the job for that long,
   :mod:`perfpredict.advise.queues`), capped by the longest limit only when none does,
   with the kill probability at the walltime actually requested
   (:mod:`perfpredict.advise.job_limits`).
   With ``time_min_kill_risk``, a shorter limit the scheduler may cut the walltime to
   so that the job starts sooner (Slurm's ``--time-min``, PBS's shrink-to-fit
   ``min_walltime``): the quantile at ``1 - time_min_kill_risk``, rounded as the walltime
   is, with its kill probability. With ``signal_lead``, how long before its limit the
   job is signalled to checkpoint (:mod:`perfpredict.advise.checkpoint`).
4. **Node-hours.** Per run and for all runs, at P50 and P90, in raw node-hours and in the
   machine's allocation units through the catalog's charge factor.
5. **Run classes.** Each ``--run-class LABEL=NODESxRUNS`` priced as steps 3 and 4 price
   the recommendation, at its own node count (:mod:`perfpredict.advise.run_classes`),
   and the totals over the classes split evenly over ``--periods``.

Intervals from the predictor are two-sided and central: the upper bound at confidence c
is the (1 + c) / 2 quantile. So the P90 runtime is the upper bound at confidence 0.8, and
a walltime that at most ``kill_risk`` of runs outlive is the upper bound at confidence
``1 - 2 * kill_risk`` (:func:`~perfpredict.advise.job_limits.runtime_quantiles`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from perfpredict.advise.checkpoint import signal_lead_for_job, signal_lead_option_s
from perfpredict.advise.job_limits import (
    TimeMin,
    WalltimeLimit,
    beyond_range_walltime_note,
    kill_probability_of,
    quantile_confidence,
    queued_nodes,
    runtime_quantiles,
    time_min_limit,
    time_min_note,
    unresolved_tail_note,
    walltime_limit,
)
from perfpredict.advise.run_classes import (
    MAX_PERIODS,
    MAX_RUNS,
    RECOMMENDED_LABEL,
    ResourceTotals,
    RunClass,
    RunClassPlan,
    check_label,
    parse_run_classes,
    rests_on,
)
from perfpredict.advise.scheduler import pbs_time
from perfpredict.advise.selection import (
    OBJECTIVES,
    Candidate,
    Choice,
    EfficiencyFloor,
    choose,
    node_count,
)
from perfpredict.advise.walltime.advisor import check_kill_risk, check_time_min_kill_risk
from perfpredict.catalog import outgrown_note
from perfpredict.counts import check_count, is_number, plain, python_number
from perfpredict.errors import BadInputError, given
from perfpredict.figures import doublings
from perfpredict.store.handle import takes_store
from perfpredict.uncertainty.conformal import TAIL_CONFIDENCES, check_confidence

if TYPE_CHECKING:
    from perfpredict.catalog import Queue, SystemSpec
    from perfpredict.estimate import Estimate, LoadedPredictor, Query
    from perfpredict.model.entry import SeriesEntry
    from perfpredict.store import Store

#: Without a catalog node count, the sweep reaches this many times the largest measured.
SWEEP_BEYOND_MEASURED = 16
#: The quantile the "P90" figures stand for.
P90 = 0.9
#: The rarest kill ``advise`` can aim at: the upper tail of the predictor's widest interval
#: (:data:`~perfpredict.uncertainty.conformal.TAIL_CONFIDENCES`). A smaller --kill-risk got
#: that interval's bound all the same, reported as "the 99.999th" (or "100th")
#: percentile with a kill probability of 0.01%, ten times (or more) the risk asked for.
SMALLEST_KILL_RISK = round((1.0 - float(TAIL_CONFIDENCES[-1])) / 2.0, 12)


#: How a request is made, for a caller who handed in something else.
PLAN_REQUEST_EXAMPLE = "perfpredict.advise.plan.PlanRequest(app='bert')"


@dataclass
class PlanRequest:
    """What a user asks ``advise`` for; see the module docstring."""

    app: str
    system: str | None = None
    problem_size: str | None = None
    variant: str | None = None
    ranks_per_node: float | None = None
    threads_per_rank: float | None = None
    runs: int = 1
    objective: str = "fastest"
    min_efficiency: float | None = None
    min_speedup_per_doubling: float | None = None
    max_nodes: int | None = None
    #: The node count the user has chosen (None: advise chooses): the walltime, node-hours,
    #: proposal rows and job script are for it, the sweep shown beside it for comparison.
    nodes: int | None = None
    kill_risk: float = 0.05
    confidence: float = 0.9
    #: The kill risk the user accepts at a time-min (None: no time-min).
    time_min_kill_risk: float | None = None
    #: ``--signal-lead`` as given: seconds or a clock duration ("600", "10:00"), or a
    #: number of seconds (600).
    signal_lead: str | float | None = None
    #: ``--run-class`` values as given ("largest=512x10"): the classes a proposal plans.
    run_classes: tuple[str, ...] = ()
    #: Allocation periods the proposal's totals are split over, and what one is called.
    periods: int = 1
    period_label: str = "period"

    def __post_init__(self) -> None:
        # numbers as Python's own, so that the plan's as_dict, which echoes them, is
        # JSON: runs=np.int64(3) from a frame made json.dumps fail on the advice
        for option in fields(self):
            setattr(self, option.name, python_number(getattr(self, option.name)))
        # one class as text is that class, as app= takes one name: "largest=512x10" was
        # read as classes of its letters ("--run-class 'l' is not LABEL=NODESxRUNS")
        if isinstance(self.run_classes, str) or not isinstance(self.run_classes, Iterable):
            self.run_classes = (self.run_classes,)  # 5 refused as a class, not "not iterable"

    def validate(self) -> None:
        """Refuse values that would make the advice meaningless, naming the option."""
        check_count("--runs", self.runs, most=MAX_RUNS)
        if self.run_class_list() and self.runs != 1:
            raise BadInputError(f"--runs {self.runs} budgets the recommended node count, "
                                f"and with --run-class each class gives its own runs: drop "
                                f"--runs, or add the recommendation as a class")
        check_count("--periods", self.periods, most=MAX_PERIODS)
        check_label("--period-label", self.period_label)
        for option, count in (("--max-nodes", self.max_nodes), ("--nodes", self.nodes)):
            if count is not None:  # a node count an estimate can be asked for
                check_count(option, count)
        if self.nodes is not None and self.max_nodes is not None \
                and self.nodes > self.max_nodes:
            raise BadInputError(f"--nodes {self.nodes} is above --max-nodes "
                                f"{self.max_nodes}, the largest node count to consider; "
                                f"raise --max-nodes or drop it")
        for option, value in (("--kill-risk", self.kill_risk),
                              ("--time-min-kill-risk", self.time_min_kill_risk),
                              ("--confidence", self.confidence),
                              ("--min-efficiency", self.min_efficiency),
                              ("--min-speedup-per-doubling", self.min_speedup_per_doubling)):
            if value is not None and not (is_number(value) and math.isfinite(value)):
                raise BadInputError(f"{option} must be a finite number, got {value!r}")
        if self.objective not in OBJECTIVES:
            raise BadInputError(f"--objective must be one of {', '.join(OBJECTIVES)}, "
                                f"got {self.objective!r}")
        check_kill_risk(self.kill_risk)
        if self.kill_risk < SMALLEST_KILL_RISK:
            raise BadInputError(
                f"--kill-risk {self.kill_risk:g} is rarer than the predictor's intervals "
                f"resolve (their widest, {100 * TAIL_CONFIDENCES[-1]:g}%, leaves "
                f"{SMALLEST_KILL_RISK:g} above it); ask for {SMALLEST_KILL_RISK:g} or more")
        check_confidence(self.confidence)
        check_time_min_kill_risk(self.time_min_kill_risk, self.kill_risk)
        self.signal_lead_s()
        self.floor().validate()

    def run_class_list(self) -> list[RunClass]:
        """The ``--run-class`` values parsed; refused when one is not LABEL=NODESxRUNS."""
        return parse_run_classes(self.run_classes)

    def signal_lead_s(self) -> int | None:
        """``signal_lead`` in whole seconds (None when not given); refused when it is no
        duration Slurm's ``--signal`` takes."""
        return None if self.signal_lead is None else signal_lead_option_s(self.signal_lead)

    def floor(self) -> EfficiencyFloor:
        """The efficiency rule: as given, or the 70% overall default when none is."""
        if self.min_efficiency is None and self.min_speedup_per_doubling is None:
            return EfficiencyFloor(min_efficiency=0.7)
        return EfficiencyFloor(self.min_efficiency, self.min_speedup_per_doubling)

    def query(self, nodes: float) -> Query:
        """The query of this request at ``nodes``, naming its fields as the request's
        own messages do, by their options (``--max-nodes``, ``--ranks-per-node``)."""
        from perfpredict.estimate.lookup import Query, option_name

        return Query(app=self.app, nodes=nodes, system=self.system,
                     problem_size=self.problem_size, variant=self.variant,
                     ranks_per_node=self.ranks_per_node,
                     threads_per_rank=self.threads_per_rank, field_name=option_name)


@dataclass
class MeasuredPoint:
    """A measured scale of the series (median of its runs), in nodes and in its own unit,
    with what the predictor says there: the scaling evidence of a proposal."""

    nodes: float
    scale: float
    runtime_s: float
    predicted_runtime_s: float
    lower_runtime_s: float
    upper_runtime_s: float


@dataclass
class Plan:
    """The advice for one application: every candidate, the recommendation and why, the
    walltime to request and the node-hours to ask for. ``ranks_per_node`` and
    ``threads_per_rank`` are the layout the prediction holds for (None when unknown).

    ``recommended_class`` is the recommendation as a run class (``--runs`` runs at the
    recommended count), ``run_classes`` the classes ``--run-class`` asked for (none without
    it), and ``totals`` the requested resources summed and split per period.
    :attr:`resource_classes` are the rows of the requested-resources table: the run
    classes when given, else the recommendation alone. With classes, the recommendation
    is not a row beside them: a proposal's table lists the runs the project plans, and a
    row no one means to run would be summed into the total the committee grants (or,
    left out of it, read as a class that costs nothing). The recommendation stays in the
    summary, in the candidate table and in the JSON's top-level fields; a user who plans
    to run it gives it as a class.
    """

    request: PlanRequest
    series: str
    system: str
    scale_unit: str
    scale_per_node: float
    ranks_per_node: int | None
    threads_per_rank: int | None
    weak: bool
    n_runs_measured: int
    measured: list[MeasuredPoint]
    candidates: list[Candidate]
    recommended: Candidate
    rule: str
    reason: str
    #: The node count advise chooses itself: the recommended one, unless ``--nodes`` made
    #: the plan for the user's own, beside which it is shown for comparison.
    advised_nodes: int
    walltime_s: float
    walltime_quantile_s: float
    time_granularity_s: int
    kill_probability: float
    queue: str | None
    queue_max_walltime_s: float | None
    default_queue: str | None
    queue_reason: str | None
    chained_jobs: int
    time_min: TimeMin | None
    signal_lead_s: int | None
    catalog_system: str | None
    allocation_unit: str | None
    #: The catalog's scheduler of the machine (``slurm``, ``pbs``...; None: not known),
    #: which ``--emit`` is checked against.
    scheduler: str | None
    recommended_class: RunClassPlan
    run_classes: list[RunClassPlan]
    totals: ResourceTotals
    basis: str
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        # what a notebook shows of advise_plan(...): the advice, where the dataclass's
        # repr spelled out every candidate, measured point and run class (9,000
        # characters for one series); as_dict() and candidate_rows() hold them all
        rec = self.recommended
        return (f"Plan(series={self.series!r}, recommended_nodes={rec.nodes}, "
                f"predicted_runtime_s={rec.predicted_runtime_s:.4g}, "
                f"walltime_s={self.walltime_s:g}, node_hours_p90={self.node_hours_p90:.4g}, "
                f"rule={self.rule!r}, n_candidates={len(self.candidates)})")

    @property
    def resource_classes(self) -> list[RunClassPlan]:
        """The rows of the requested-resources table (see the class docstring)."""
        return self.run_classes or [self.recommended_class]

    def run_class_labels(self) -> dict[float, list[str]]:
        """The ``--run-class`` labels by node count, in the order given (classes may share
        a count): the requested scales the scaling evidence and the plot mark."""
        labels: dict[float, list[str]] = {}
        for run_class in self.run_classes:
            labels.setdefault(float(run_class.nodes), []).append(run_class.label)
        return labels

    @property
    def time_min_shortens(self) -> bool:
        """Whether a time-min was asked for and lies below the walltime: only then is
        one written (a time-min equal to the walltime lets the scheduler cut nothing)."""
        return self.time_min is not None and self.time_min.time_min_s < self.walltime_s

    @property
    def expected_runtime_over_walltime(self) -> float:
        """The median runtime over the time reserved for it, Open XDMoD's
        elapsed / limit: a chained run's over its chain's limits, which it is meant to
        fill (over one job's limit, a run chained across two one-hour jobs read 1.27)."""
        return self.recommended.predicted_runtime_s / (self.walltime_s * self.chained_jobs)

    @property
    def node_hours_p50(self) -> float:
        """Node-hours for all ``--runs`` runs at the median runtime."""
        return self.recommended_class.node_hours_p50

    @property
    def node_hours_p90(self) -> float:
        """Node-hours for all ``--runs`` runs at the 90th-percentile runtime."""
        return self.recommended_class.node_hours_p90

    @property
    def allocation_units_p50(self) -> float | None:
        """:attr:`node_hours_p50` in the machine's allocation units (None: no charge
        factor known)."""
        return self.recommended_class.allocation_units_p50

    @property
    def allocation_units_p90(self) -> float | None:
        """:attr:`node_hours_p90` in the machine's allocation units."""
        return self.recommended_class.allocation_units_p90

    @property
    def kill_probability_is_upper_bound(self) -> bool:
        """:attr:`kill_probability` is an upper bound: the risk asked for, or the finest
        the calibration errors resolve (:func:`~perfpredict.advise.job_limits.
        walltime_kill_probability`)."""
        return self.recommended_class.kill_probability_is_upper_bound

    def candidate_rows(self) -> list[dict[str, Any]]:
        """One dict per node count considered: the rows of ``advise --format csv`` and
        the JSON's ``candidates``. ``recommended`` marks the count the plan is for
        (``--nodes N`` where given), ``advised`` advise's own choice (the same row
        without ``--nodes``), as the plot's CSV has them: with ``--nodes`` only the JSON's
        top-level ``advised_nodes`` said which count advise would choose."""
        return [{**asdict(c), "recommended": c is self.recommended,
                 "advised": c.nodes == self.advised_nodes} for c in self.candidates]

    def as_dict(self) -> dict[str, Any]:
        """The advice as JSON-ready data; the top-level keys are a stable contract."""
        from perfpredict.advise.walltime import slurm_time

        rec = self.recommended
        return {
            "app": self.request.app, "series": self.series, "system": self.system,
            "scale_unit": self.scale_unit, "weak_scaling": self.weak,
            "ranks_per_node": self.ranks_per_node, "threads_per_rank": self.threads_per_rank,
            "objective": self.request.objective, "rule": self.rule, "reason": self.reason,
            "recommended_nodes": rec.nodes, "advised_nodes": self.advised_nodes,
            "predicted_runtime_s": rec.predicted_runtime_s,
            "lower_runtime_s": rec.lower_runtime_s, "upper_runtime_s": rec.upper_runtime_s,
            "p90_runtime_s": rec.p90_runtime_s, "confidence": self.request.confidence,
            "efficiency": rec.efficiency, "speedup": rec.speedup,
            "walltime_s": self.walltime_s, "walltime_slurm": slurm_time(self.walltime_s),
            "walltime_pbs": pbs_time(self.walltime_s),
            "walltime_quantile_s": self.walltime_quantile_s,
            "kill_risk": self.request.kill_risk, "kill_probability": self.kill_probability,
            "kill_probability_is_upper_bound": self.kill_probability_is_upper_bound,
            "expected_runtime_over_walltime": self.expected_runtime_over_walltime,
            "queue": self.queue, "queue_max_walltime_s": self.queue_max_walltime_s,
            "default_queue": self.default_queue, "queue_reason": self.queue_reason,
            "chained_jobs": self.chained_jobs,
            **TimeMin.fields(self.time_min),
            "signal_lead_s": self.signal_lead_s, "runs": self.request.runs,
            "node_hours_per_run_p50": rec.node_hours_p50,
            "node_hours_per_run_p90": rec.node_hours_p90,
            "node_hours_p50": self.node_hours_p50, "node_hours_p90": self.node_hours_p90,
            "catalog_system": self.catalog_system, "allocation_unit": self.allocation_unit,
            "allocation_units_p50": self.allocation_units_p50,
            "allocation_units_p90": self.allocation_units_p90,
            # whole counts as integers, as the candidates' and next-runs' are
            **measured_fields([m.nodes for m in self.measured],
                              [m.scale for m in self.measured]
                              if self.scale_unit == "ranks" else None),
            "n_runs_measured": self.n_runs_measured, "basis": self.basis,
            "warnings": self.warnings,
            "candidates": self.candidate_rows(),
            # empty without --run-class; the totals are then the recommendation's
            "run_classes": [c.as_dict() for c in self.run_classes],
            "resource_totals": self.totals.as_dict(),
        }


def sweep_nodes(smallest_nodes: float, measured_nodes: list[float], max_nodes: int) -> list[int]:
    """Powers of two and the whole measured node counts from the smallest measured count
    up to ``max_nodes``: the counts a user would request."""
    start = max(1, math.ceil(smallest_nodes - 1e-9))
    counts = {2 ** k for k in range(int(math.log2(max_nodes)) + 1) if start <= 2 ** k}
    counts.update(int(n) for n in measured_nodes if float(n).is_integer() and n <= max_nodes)
    counts.add(start)
    return sorted(n for n in counts if start <= n <= max_nodes)


def catalog_entry(store: Store, *names: str | None) -> SystemSpec | None:
    """The catalog entry for the measured system, else for the name the user gave."""
    from perfpredict.catalog import get_system

    for name in names:
        if name:
            spec = get_system(store, name)
            if spec is not None:
                return spec
    return None


@takes_store
def advise_plan(store: Store, request: PlanRequest) -> Plan:
    """Sweep node counts, choose one by the objective under the efficiency floor, and work
    out its walltime and node-hours (the steps: the module docstring). ``store`` open,
    or its URL or path; ``request`` a :class:`PlanRequest`. The :class:`Plan` returned
    holds the ``recommended`` candidate (its ``nodes``, ``predicted_runtime_s`` and
    interval, ``efficiency``), the ``walltime_s`` to request, ``node_hours_p50`` and
    ``node_hours_p90`` for all ``runs``, the ``reason`` for the choice, and every
    node count considered (``candidate_rows()``: one dict each)."""
    from perfpredict.estimate import load_predictor
    from perfpredict.estimate.breakdown import breakdown_note
    from perfpredict.estimate.estimates import below_range_note
    from perfpredict.estimate.lookup import scale_per_node as scale_per_node_of

    given(request, PlanRequest, PLAN_REQUEST_EXAMPLE).validate()
    predictor = load_predictor(store.url)
    query = request.query(1.0)
    query.validate()
    entry = predictor.find_series(query).entry
    # ranks per node for a series measured in ranks (refused without --ranks-per-node)
    scale_per_node = scale_per_node_of(entry, query)
    weak = entry.weak
    measured_nodes = [s / scale_per_node for s in entry.scales]
    spec = catalog_entry(store, entry.key.system, request.system)
    if request.nodes is not None:
        _refuse_beyond_machine(f"--nodes {request.nodes}", request.nodes, spec, measured_nodes)
    max_nodes, sweep_notes = _sweep_limit(request.max_nodes, spec, measured_nodes,
                                          request.nodes)
    if max_nodes < measured_nodes[0]:
        raise BadInputError(f"--max-nodes {max_nodes} is below the smallest measured "
                            f"configuration ({measured_nodes[0]:g} nodes); raise it")
    swept = sweep_nodes(measured_nodes[0], measured_nodes, max_nodes)
    machine_nodes = int(spec.nodes) if spec and spec.nodes else None
    if max_nodes in (machine_nodes, request.max_nodes) and swept[-1] < max_nodes:
        # the whole machine, or the most nodes the user will ask for (--max-nodes 20 swept
        # 16 alone and said "raise --max-nodes to look further"), which no power of two
        # may be
        swept.append(max_nodes)
    nodes, queue_notes = queued_nodes(swept, spec)
    if request.nodes in swept and request.nodes not in nodes:
        # not "not considered (..., N)" of the count the plan is for: the walltime's "no
        # queue accepts" warning says it, once
        queue_notes = queued_nodes([n for n in swept if n != request.nodes], spec)[1]
    sweep_notes += queue_notes
    sweep_end = (f"no queue of {spec.name} takes more nodes" if spec and nodes[-1] < swept[-1]
                 else "the machine has no more nodes" if nodes[-1] == machine_nodes
                 else None)

    medians = dict(zip(measured_nodes, entry.medians_s, strict=True))
    candidates = _candidates(predictor, request, nodes, medians, weak)
    choice = choose(candidates, request.floor(), request.objective, weak=weak,
                    smallest_measured_nodes=measured_nodes[0], sweep_end=sweep_end)
    rec, rule, reason = choice.candidate, choice.rule, choice.reason
    asked_notes: list[str] = []
    if request.nodes is not None:
        rec, rule, reason, asked_notes = _as_asked(predictor, request, candidates, choice,
                                                   medians, weak)
        if rec.nodes < measured_nodes[0]:  # in place of the estimate's note on it
            asked_notes.append(_below_range_note(
                f"--nodes {rec.nodes}: {node_count(rec.nodes)} is", rec.nodes,
                measured_nodes))

    measured = _measured_points(predictor, request, measured_nodes, entry)

    rec_query = request.query(rec.nodes)
    estimate = predictor.estimate(rec_query, request.confidence)
    warnings = sweep_notes + asked_notes + [
        note for note in estimate.notes if not (breakdown_note(note) or below_range_note(note))]
    pricing = _Pricing(predictor, request, spec, entry.key.system, measured_nodes)
    recommended_class, limit = pricing.run_class(
        RunClass(RECOMMENDED_LABEL, rec.nodes, request.runs), rec,
        "--max-nodes" if request.nodes is None else "--nodes")
    warnings += limit.warnings
    if (estimate.beyond_measured_range
            and recommended_class.kill_probability > request.kill_risk / 2):
        warnings.append(beyond_range_walltime_note(request.kill_risk))

    time_min = None
    if request.time_min_kill_risk is not None:
        time_min = time_min_limit(predictor, rec_query, request.time_min_kill_risk, limit)
        if time_min.time_min_s >= limit.walltime_s:
            warnings.append(time_min_note(request.time_min_kill_risk, time_min.quantile_s,
                                          limit))
    shortest_s = time_min.time_min_s if time_min else limit.walltime_s
    lead_s = signal_lead_for_job(request.signal_lead_s(), shortest_s,
                                 "time-min" if shortest_s < limit.walltime_s else "walltime",
                                 chained=limit.chained_jobs > 1)

    run_classes = pricing.run_classes(request.run_class_list(), medians, warnings)
    totals = ResourceTotals.over(run_classes or [recommended_class], request.periods,
                                 request.period_label)
    series_name = predictor.series_context(entry)[0].name
    basis = _basis(entry, series_name, measured, scale_per_node, spec, limit.queue)
    if run_classes:
        basis += " Run classes: " + "; ".join(
            f"{c.label} at {node_count(c.nodes)} ({c.basis})" for c in run_classes) + "."
    return Plan(
        request=request, series=series_name, system=entry.key.system,
        scale_unit=entry.scale_unit, scale_per_node=scale_per_node,
        ranks_per_node=_whole(request.ranks_per_node or entry.ranks_per_node or (
            scale_per_node if entry.scale_unit == "ranks" else None)),
        threads_per_rank=_whole(request.threads_per_rank or entry.threads_per_rank),
        weak=weak,
        n_runs_measured=entry.n_runs, measured=measured, candidates=candidates,
        recommended=rec, rule=rule, reason=reason, advised_nodes=choice.candidate.nodes,
        walltime_s=limit.walltime_s,
        walltime_quantile_s=recommended_class.walltime_quantile_s,
        time_granularity_s=limit.granularity_s,
        kill_probability=recommended_class.kill_probability,
        queue=limit.queue.name if limit.queue else None,
        queue_max_walltime_s=limit.queue.max_walltime_s if limit.queue else None,
        default_queue=limit.default_queue.name if limit.default_queue else None,
        queue_reason=limit.queue_reason,
        chained_jobs=limit.chained_jobs, time_min=time_min, signal_lead_s=lead_s,
        catalog_system=spec.name if spec else None,
        allocation_unit=spec.allocation_unit if spec else None,
        scheduler=spec.scheduler if spec else None,
        recommended_class=recommended_class, run_classes=run_classes, totals=totals,
        basis=basis, warnings=warnings)


@dataclass
class _Pricing:
    """What pricing a run class at a node count needs: the predictor and request, the
    catalog entry (queues, granularity, charge) and the measured node counts, shared by
    the recommendation and every ``--run-class``, so that a class is worked out exactly
    as the recommendation is."""

    predictor: LoadedPredictor
    request: PlanRequest
    spec: SystemSpec | None
    measured_system: str
    measured_nodes: list[float]

    def run_class(self, run_class: RunClass, candidate: Candidate,
                  nodes_option: str) -> tuple[RunClassPlan, WalltimeLimit]:
        """``run_class`` priced from ``candidate``, the prediction at its node count: the
        walltime at ``1 - kill_risk`` in the queue for that count and its kill
        probability, allocation units per run in that queue; and the walltime limit, whose
        queue and warnings the recommendation reports (and each run class, by its label).
        ``nodes_option`` is the option the count came from, which a warning names as the
        fix. Among the warnings, where the risk is rarer than the calibration errors at
        that count resolve, :func:`unresolved_tail_note`: said of the recommendation
        alone, a run class at a count farther out (Castro-wdmerger's at 64 nodes,
        --kill-risk 0.0001) had a walltime of the widest error with nothing said."""
        request, nodes = self.request, run_class.nodes
        query = request.query(nodes)
        quantile_s = runtime_quantiles(self.predictor, [query], 1.0 - request.kill_risk)[0]
        limit = walltime_limit(quantile_s, nodes, self.spec, request.kill_risk,
                               self.measured_system, nodes_option, request.signal_lead_s())
        tail = self.predictor.columns([query], quantile_confidence(1.0 - request.kill_risk))
        if tail["at_widest_error"][0]:
            limit.warnings.append(unresolved_tail_note(request.kill_risk, quantile_s))
        kill_probability, upper_bound = kill_probability_of(
            self.predictor, query, limit.walltime_s, request.kill_risk,
            capped=limit.chained_jobs > 1)
        units = _allocation_units(self.spec, nodes, candidate, limit.queue)
        return RunClassPlan(
            label=run_class.label, nodes=nodes, runs=run_class.runs,
            measured=candidate.measured,
            beyond_measured_range=candidate.beyond_measured_range,
            below_measured_range=nodes < min(self.measured_nodes),
            predicted_runtime_s=candidate.predicted_runtime_s,
            lower_runtime_s=candidate.lower_runtime_s,
            upper_runtime_s=candidate.upper_runtime_s,
            p90_runtime_s=candidate.p90_runtime_s, walltime_s=limit.walltime_s,
            walltime_quantile_s=quantile_s, kill_probability=kill_probability,
            kill_probability_is_upper_bound=upper_bound,
            queue=limit.queue.name if limit.queue else None,
            chained_jobs=limit.chained_jobs, allocation_units_per_run_p50=units[0],
            allocation_units_per_run_p90=units[1],
            basis=rests_on(nodes, self.measured_nodes) + (
                f"; {multiplier}" if (multiplier := _multiplier_text(self.spec, limit.queue))
                else "")), limit

    def run_classes(self, classes: list[RunClass], medians: dict[float, float],
                    warnings: list[str]) -> list[RunClassPlan]:
        """Each of ``classes`` predicted at its node count (``medians``: the measured
        runtimes by node count) and priced; the walltime warnings of each added to
        ``warnings``, named by class (a note every node count shares, once). The note
        that a walltime rests on an extrapolation names the classes it is about, once:
        unnamed, it read as the recommendation's, measured at its node count or not. A
        class larger than the machine is refused, as the sweep stops there: a proposal
        asking for nodes the machine does not have is."""
        if not classes:
            return []
        for c in classes:
            _refuse_beyond_machine(f"--run-class {c.label}={c.nodes}x{c.runs}", c.nodes,
                                   self.spec, self.measured_nodes)
        nodes = sorted({c.nodes for c in classes})
        predicted = {c.nodes: c for c in _predicted(self.predictor, self.request, nodes,
                                                    medians)}
        plans, extrapolated = [], []
        for run_class in classes:
            plan, limit = self.run_class(
                run_class, predicted[run_class.nodes],
                f"--run-class {run_class.label}=NODESx{run_class.runs}")
            for note in limit.warnings:
                if note not in warnings:  # e.g. "no catalog entry": the same for all
                    warnings.append(f"run class {run_class.label!r}: {note}")
            if (plan.beyond_measured_range
                    and plan.kill_probability > self.request.kill_risk / 2):
                extrapolated.append(repr(run_class.label))
            if plan.below_measured_range:
                warnings.append(_below_range_note(
                    f"run class {plan.label!r} at {node_count(plan.nodes)} is", plan.nodes,
                    self.measured_nodes))
            plans.append(plan)
        if extrapolated:
            named = (f"run class {extrapolated[0]}" if len(extrapolated) == 1
                     else f"run classes {', '.join(extrapolated)}")
            warnings.append(f"{named}: {beyond_range_walltime_note(self.request.kill_risk)}")
        return plans


def _below_range_note(subject: str, nodes: int, measured_nodes: list[float]) -> str:
    """Why a node count below every measured one is a guess, ``subject`` (what is at
    ``nodes``, with its verb) first: the sweep starts at the smallest measured count, so
    the recommendation never is one, but a run class or a ``--nodes`` count may be.
    Unsaid, a class's row read as an interpolation; the estimate's own note, said of
    ``--nodes``, counted the distance in the series' ranks and ended "a run nearer this
    scale would tell", where a plan is about to budget on it."""
    smallest = min(measured_nodes)
    return (f"{subject} {doublings(math.log2(smallest / nodes))} below the smallest "
            f"measured node count ({smallest:g}): the laws extrapolated downward, which "
            f"no backtest measures, and the interval is the one calibrated between "
            f"measured scales; measure a run nearer {node_count(nodes)} before budgeting "
            f"on it")


def _sweep_limit(max_nodes: int | None, spec: SystemSpec | None, measured_nodes: list[float],
                 asked_nodes: int | None = None) -> tuple[int, list[str]]:
    """The largest node count to sweep, and a note when the user's ``--max-nodes`` was
    cut to the machine: a proposal asking for more nodes than the machine has is
    refused, however the runtime scales. A catalog count below a measured run is out of
    date (the machine grew) and bounds nothing, as a note says (:func:`outgrown_note`).
    Without either, the sweep reaches ``asked_nodes`` (``--nodes``) where 16x the
    largest measured falls short of it, so that the user's count is compared with the
    counts around it."""
    machine = _machine_nodes(spec, measured_nodes)
    outgrown = (outgrown_note(spec.name, int(spec.nodes), max(measured_nodes))
                if spec is not None and spec.nodes else None)
    notes = [outgrown] if outgrown else []
    if max_nodes is None:
        return machine or max(int(SWEEP_BEYOND_MEASURED * max(measured_nodes)),
                              asked_nodes or 0), notes
    if machine is not None and spec is not None and max_nodes > machine:
        return machine, [f"--max-nodes {max_nodes} is more than the {machine} nodes "
                         f"{spec.name} has (the catalog): the sweep stops at {machine}"]
    return max_nodes, notes


def _refuse_beyond_machine(given: str, nodes: int, spec: SystemSpec | None,
                           measured_nodes: list[float]) -> None:
    """Refuse ``nodes`` (the option ``given`` as typed) beyond the machine's node count,
    as the sweep stops there: a proposal or job script asking for nodes the machine does
    not have is refused, however the runtime scales."""
    machine = _machine_nodes(spec, measured_nodes)
    if machine is not None and spec is not None and nodes > machine:
        raise BadInputError(f"{given}: {spec.name} has {machine} nodes (the catalog); give "
                            f"a node count it has")


def _as_asked(predictor: LoadedPredictor, request: PlanRequest, candidates: list[Candidate],
              choice: Choice, medians: dict[float, float],
              weak: bool) -> tuple[Candidate, str, str, list[str]]:
    """The candidate at ``request.nodes``, the count the user has chosen, with the rule
    and reason the plan reports and a note where it fails the efficiency floor: the plan
    is made for it, not refused, and advise's own ``choice`` is named beside it so that
    the user sees how theirs compares. A count the sweep skipped (not a power of two,
    below the smallest measured, or one no queue takes) joins ``candidates`` in order,
    its speedup per doubling from half its size as the sweep's are."""
    asked = request.nodes
    assert asked is not None  # the caller's condition
    floor = request.floor()
    candidate = next((c for c in candidates if c.nodes == asked), None)
    if candidate is None:
        candidate = _candidates(predictor, request, [candidates[0].nodes, asked], medians,
                                weak)[-1]
        candidate.meets_floor = not floor.violations(candidate, weak, choice.broken_at)
        candidates.append(candidate)
        candidates.sort(key=lambda c: c.nodes)
    own = choice.candidate
    reason = (f"as asked (--nodes {asked}); advise's own choice is "
              f"{'the same' if own is candidate else node_count(own.nodes)} "
              f"({choice.reason[0].lower()}{choice.reason[1:].rstrip('.')}).")
    notes = []
    if not candidate.meets_floor:
        whys = [why for _, why in floor.violations(candidate, weak, choice.broken_at)]
        notes.append(f"--nodes {asked}: {node_count(asked)} {' and '.join(whys)}, so "
                     f"advise recommends {node_count(own.nodes)}; the plan is for "
                     f"{node_count(asked)} as asked")
    return candidate, f"nodes {asked}", reason, notes


def _machine_nodes(spec: SystemSpec | None, measured_nodes: list[float]) -> int | None:
    """The machine's node count from the catalog; None when unknown, or below a measured
    run (the entry is out of date: the machine grew) and so bounding nothing."""
    machine = int(spec.nodes) if spec and spec.nodes else None
    return None if machine is not None and machine < max(measured_nodes) else machine


def _predicted(predictor: LoadedPredictor, request: PlanRequest, nodes: list[int],
               medians: dict[float, float]) -> list[Candidate]:
    """Each of ``nodes`` predicted at the plan's confidence and at P90, with no speedup
    per doubling (:func:`_candidates` adds it to the sweep's); ``medians`` are the
    measured runtimes by node count. The sweep's candidates and the run classes."""
    shown = _by_nodes(predictor.estimate_many([request.query(n) for n in nodes],
                                              request.confidence))
    p90 = runtime_quantiles(predictor, [request.query(n) for n in nodes], P90)
    candidates = []
    for n, p90_s in zip(nodes, p90, strict=True):
        est = shown[float(n)]
        candidates.append(Candidate(
            nodes=n, predicted_runtime_s=est.predicted_runtime_s,
            lower_runtime_s=est.lower_runtime_s, upper_runtime_s=est.upper_runtime_s,
            p90_runtime_s=p90_s, efficiency=est.efficiency, speedup=est.speedup,
            speedup_per_doubling=None,
            node_hours_p50=n * est.predicted_runtime_s / 3600.0,
            node_hours_p90=n * p90_s / 3600.0, measured=float(n) in medians,
            measured_runtime_s=medians.get(float(n)),
            beyond_measured_range=est.beyond_measured_range))
    return candidates


def _candidates(predictor: LoadedPredictor, request: PlanRequest, nodes: list[int],
                medians: dict[float, float], weak: bool) -> list[Candidate]:
    """Each swept node count predicted (:func:`_predicted`), with its speedup per
    doubling from half its size (no less than the smallest measured count, the sweep's
    first entry)."""
    halves = [max(n / 2, nodes[0]) for n in nodes]
    half_runtime = _by_nodes(predictor.estimate_many([request.query(h) for h in halves]))
    candidates = _predicted(predictor, request, nodes, medians)
    for candidate, half in zip(candidates, halves, strict=True):
        n = candidate.nodes
        if n > half:  # throughput gained: for weak scaling the work grows with the nodes
            work_ratio = n / half if weak else 1.0
            gain = (work_ratio * half_runtime[half].predicted_runtime_s
                    / candidate.predicted_runtime_s)
            candidate.speedup_per_doubling = gain ** (1.0 / math.log2(n / half))
    return candidates


def _measured_points(predictor: LoadedPredictor, request: PlanRequest,
                     measured_nodes: list[float], entry: SeriesEntry) -> list[MeasuredPoint]:
    """The series' measured medians with the prediction at each (the scaling evidence)."""
    estimates = predictor.estimate_many([request.query(n) for n in measured_nodes],
                                        request.confidence)
    return [MeasuredPoint(nodes=n, scale=s, runtime_s=t,
                          predicted_runtime_s=e.predicted_runtime_s,
                          lower_runtime_s=e.lower_runtime_s, upper_runtime_s=e.upper_runtime_s)
            for n, s, t, e in zip(measured_nodes, entry.scales, entry.medians_s,
                                  estimates, strict=True)]


def ranks_per_node_text(ranks_per_node: float) -> str:
    """The rank-to-node conversion in words, for the basis sentence and plot labels.

    >>> ranks_per_node_text(1)
    '1 MPI rank per node'
    """
    return f"{ranks_per_node:g} MPI rank{'' if ranks_per_node == 1 else 's'} per node"


def measured_scales_text(nodes: Sequence[float], ranks_per_node: float | None) -> str:
    """The scales a series was measured at, as run: its node counts, or for a series
    measured in MPI ranks (``ranks_per_node`` the conversion; None for one in nodes) the
    ranks and the nodes they span, as the evidence table names the ranks run, so that a
    proposal names one set: converted, LULESH's 64 and 125 ranks read "2.37037, 4.62963
    nodes", counts no one ran. The basis of the advice and next-runs' summary say it.

    >>> measured_scales_text([1, 2, 4], None)
    '1, 2, 4 nodes'
    >>> measured_scales_text([1, 64 / 27, 125 / 27], 27)
    '27, 64, 125 MPI ranks (1 to 4.62963 nodes, converted at 27 MPI ranks per node)'
    """
    if ranks_per_node is None:
        return ", ".join(f"{n:g}" for n in nodes) + " nodes"
    span = " to ".join(dict.fromkeys(f"{n:g}" for n in (nodes[0], nodes[-1])))
    return (", ".join(f"{n * ranks_per_node:.6g}" for n in nodes)
            + f" MPI ranks ({span} node{'' if span == '1' else 's'}, converted at "
            f"{ranks_per_node_text(ranks_per_node)})")


def whole_nodes(nodes: float, in_ranks: bool) -> int | float | None:
    """A measured node count as a table or JSON gives it (:func:`plain`): None for a
    series measured in MPI ranks (``in_ranks``) where the ranks run fill no whole number
    of nodes. Converted, LULESH's 64 ranks at 27 per node are 2.37037 nodes, a count no
    one ran, which the JSON gave as data beside the basis naming the ranks; the
    proposal's evidence table writes '-' there, and the JSON null, with the ranks run in
    ``measured_ranks`` (:func:`measured_fields`)."""
    return None if in_ranks and not float(nodes).is_integer() else plain(nodes)


def measured_fields(nodes: Sequence[float], ranks: Sequence[float] | None) -> dict[str, Any]:
    """The JSON fields of the scales a series was measured at: ``measured_nodes``
    (:func:`whole_nodes`) and ``measured_ranks``, the MPI ranks run of a series measured
    in ranks (``ranks``; None, and null, for one measured in nodes)."""
    return {"measured_nodes": [whole_nodes(n, ranks is not None) for n in nodes],
            "measured_ranks": None if ranks is None else [plain(r) for r in ranks]}


def _whole(value: float | None) -> int | None:
    """A layout count as the whole number a batch script needs (None when unknown)."""
    return None if value is None else round(value)


def _by_nodes(estimates: list[Estimate]) -> dict[float, Estimate]:
    return {float(e.nodes): e for e in estimates}


def _allocation_units(spec: SystemSpec | None, nodes: int, candidate: Candidate,
                      queue: Queue | None) -> tuple[float | None, float | None]:
    """Allocation units for one run on ``nodes`` nodes at the ``candidate``'s P50 and P90
    runtimes in ``queue`` (None without a charge factor)."""
    from perfpredict.catalog import charge

    def per_run(runtime_s: float) -> float | None:
        return None if spec is None else charge(spec, nodes, runtime_s / 3600.0, queue)

    return per_run(candidate.predicted_runtime_s), per_run(candidate.p90_runtime_s)


def _basis(entry: SeriesEntry, series_name: str, measured: list[MeasuredPoint],
           scale_per_node: float, spec: SystemSpec | None, queue: Queue | None) -> str:
    """One sentence: which machine and measured node counts the figures rest on, and every
    conversion used, as proposals must state: the queue's charge multiplier by number
    (a premium queue's 2x made 220 node-hours 660 units at 1.5 units per node-hour,
    which "times the queue's multiplier" left a reviewer to guess)."""
    text = (f"Runtimes rest on {entry.n_runs} runs of {series_name} at "
            + measured_scales_text([m.nodes for m in measured],
                                   scale_per_node if entry.scale_unit == "ranks" else None))
    if spec is None or spec.charge_factor is None:
        where = spec.name if spec else entry.key.system
        return text + (f"; node-hours are nodes x elapsed hours (no charge factor known "
                       f"for {where}, so no allocation units).")
    unit = spec.allocation_unit or "allocation units"
    if spec.charge_factor == 1:  # "at 1 Frontier node-hours per node-hour" was the caption
        unit = unit.removesuffix("s")
    multiplier = _multiplier_text(spec, queue)
    return text + (f"; charged on {spec.name} at {spec.charge_factor:g} {unit} per node-hour "
                   f"of elapsed time{f', {multiplier}' if multiplier else ''}.")


def _multiplier_text(spec: SystemSpec | None, queue: Queue | None) -> str:
    """The queue's charge multiplier in words ("times 2 in queue 'premium'"), empty where
    it charges the machine's rate or no rate is known. Said of the recommendation's queue
    and of each run class's, which may land in another queue at another rate."""
    if spec is None or spec.charge_factor is None or queue is None \
            or queue.charge_multiplier == 1:
        return ""
    return f"times {queue.charge_multiplier:g} in queue {queue.name!r}"
