"""Which benchmarks to run next: the node counts whose measurement would tighten the
prediction at the target scale the most per node-hour spent, within a budget.

The value of a benchmark at q nodes is simulated with the predictor itself: add a
measurement at q (at the runtime predicted there) to the series, refit the laws and the
series' shape features (:func:`perfpredict.overhead.features.fit_context`), and predict the
target again. The predictor's interval widens with the distance beyond the largest
measured scale and with the spread its features imply, so a run nearer the target shrinks
the P90/P50 spread there; a run among the measured scales buys little. The repetition
noise at the edge is unknown until the run is done, so the current one is carried over.

Runs are chosen greedily: the one with the largest spread reduction per expected (P50)
node-hour, then the next given that one, while the P90 cost of all chosen stays within the
budget and a run still tightens the spread.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from perfpredict.advise.job_limits import quantile_confidence
from perfpredict.advise.plan import (
    P90,
    PLAN_REQUEST_EXAMPLE,
    PlanRequest,
    measured_fields,
    measured_scales_text,
    sweep_nodes,
)
from perfpredict.advise.selection import node_count
from perfpredict.counts import (
    check_count,
    counted,
    is_number,
    plain,
    python_number,
    shown,
)
from perfpredict.durations import duration_text
from perfpredict.errors import BadInputError, given
from perfpredict.figures import format_value
from perfpredict.model.series import Series
from perfpredict.overhead.features import SUMMARY_NAMES, SeriesContext, fit_context
from perfpredict.store.handle import takes_store

if TYPE_CHECKING:
    from perfpredict.catalog import SystemSpec
    from perfpredict.estimate import LoadedPredictor
    from perfpredict.store import Store

#: A benchmark that narrows the P90/P50 ratio by less than this is not worth its cost.
MIN_SPREAD_REDUCTION = 0.002
#: What a simulated run cannot know until it is done: the repetition noise and the I/O
#: per node at the largest scale, carried over from the measured runs.
_CARRIED_OVER = [SUMMARY_NAMES.index("noise_log"),
                 SUMMARY_NAMES.index("log2_io_bytes_per_node")]
NEXT_RUN_COLUMNS = ("order", "nodes", "cost_node_hours_p50", "cost_node_hours_p90",
                    "cumulative_node_hours_p90", "spread_before", "spread_after",
                    "reduction", "reduction_per_node_hour")

#: Short labels of the columns a terminal shows.
TABLE_HEADERS = {
    "order": "order", "nodes": "nodes", "cost_node_hours_p50": "cost node-h P50",
    "cost_node_hours_p90": "cost node-h P90", "cumulative_node_hours_p90": "total node-h P90",
    "spread_after": "P90/P50 at target after", "reduction": "reduction",
}


@dataclass
class NextRun:
    """One benchmark to run: its cost, and the P90/P50 ratio at the target before and
    after it (given the runs chosen before it)."""

    order: int
    nodes: int
    cost_node_hours_p50: float
    cost_node_hours_p90: float
    cumulative_node_hours_p90: float
    spread_before: float
    spread_after: float

    @property
    def reduction(self) -> float:
        return self.spread_before - self.spread_after

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reduction": self.reduction,
                "reduction_per_node_hour": self.reduction / self.cost_node_hours_p50}


@dataclass
class NextRunsPlan:
    series: str
    target_nodes: int
    measured_nodes: list[int | float]
    spread_now: float
    budget_node_hours: float | None
    steps: list[NextRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: whether the budget is below the cost of every unmeasured node count
    budget_fits_no_run: bool = False
    #: The MPI ranks per node a series measured in ranks was converted at (None: measured
    #: in nodes), by which the summary names the ranks run rather than fractions of nodes.
    ranks_per_node: float | None = None
    #: The MPI ranks run of a series measured in ranks (None: measured in nodes), which
    #: the JSON gives beside ``measured_nodes`` (:func:`measured_fields`).
    measured_ranks: list[int | float] | None = None

    def __repr__(self) -> str:
        # what a notebook shows of plan_next_runs(...): the answer, the runs' node counts
        # in order, as Plan's repr does, where the dataclass's spelled out every step and
        # note (755 characters for LULESH); as_dict() and steps hold them all
        return (f"NextRunsPlan(series={self.series!r}, target_nodes={self.target_nodes}, "
                f"spread_now={self.spread_now:.4g}, spread_after={self.spread_after:.4g}, "
                f"spent_node_hours_p90={self.spent_node_hours_p90:.4g}, "
                f"nodes={[step.nodes for step in self.steps]}, n_notes={len(self.notes)})")

    @property
    def spread_after(self) -> float:
        return self.steps[-1].spread_after if self.steps else self.spread_now

    @property
    def spent_node_hours_p90(self) -> float:
        return self.steps[-1].cumulative_node_hours_p90 if self.steps else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"series": self.series, "target_nodes": self.target_nodes,
                **measured_fields(self.measured_nodes, self.measured_ranks),
                "ranks_per_node": self.ranks_per_node,
                "spread_now": self.spread_now,
                "spread_after": self.spread_after, "budget_node_hours": self.budget_node_hours,
                "spent_node_hours_p90": self.spent_node_hours_p90,
                "runs": [s.as_dict() for s in self.steps], "notes": self.notes}

    def summary(self) -> str:
        """Two sentences: where the spread stands and what the chosen runs would do."""
        budget = ("no budget limit" if self.budget_node_hours is None
                  else f"a budget of {format_value(float(self.budget_node_hours))} node-hours")
        text = (f"{self.series}\nAt {node_count(self.target_nodes)} the P90/P50 runtime ratio is "
                f"{self.spread_now:.3f} (measured at "
                f"{measured_scales_text(self.measured_nodes, self.ranks_per_node)}). ")
        if self.steps:
            text += (f"With {budget}, {counted(len(self.steps), 'benchmark run')} costing "
                     f"{format_value(self.spent_node_hours_p90)} node-hours (P90) would bring "
                     f"it to {self.spread_after:.3f}.")
        elif self.budget_fits_no_run:
            # not "would tighten it": what the runs would do went unasked
            text += f"With {budget}, no benchmark run fits in it."
        else:
            text += f"With {budget}, no benchmark run would tighten it."
        return "\n".join([text, *(f"note: {n}" for n in self.notes)])


def with_simulated_run(series: Series, ctx: SeriesContext, scale: float,
              runtime_s: float) -> tuple[Series, SeriesContext]:
    """``series`` with one more run at ``scale`` taking ``runtime_s``, and its refitted
    context (the edge noise, I/O and the repeats' noise carried over from ``ctx``: a new
    run's scatter and I/O are unknown)."""
    order = np.argsort(np.append(series.scale, scale), kind="stable")
    extended = replace(series, scale=np.append(series.scale, scale)[order],
                       runtime_s=np.append(series.runtime_s, runtime_s)[order], io_bytes=None)
    refitted = replace(fit_context(extended), repeat_noise=ctx.repeat_noise)
    refitted.summary[_CARRIED_OVER] = ctx.summary[_CARRIED_OVER]
    return extended, refitted


def _target_spread(predictor: LoadedPredictor, series: Series, ctx: SeriesContext,
                   target_scale: float) -> float:
    """P90 / P50 of the runtime at ``target_scale`` given the series' (simulated) runs."""
    pred = predictor.predictor.predict(series, np.array([target_scale]),
                                       quantile_confidence(P90), ctx)[0]
    return pred.upper_s / pred.runtime_s


@takes_store
def plan_next_runs(store: Store, request: PlanRequest, target_nodes: int | None = None,
                   budget_node_hours: float | None = None) -> NextRunsPlan:
    """The benchmark runs to do next for ``request``'s series; see the module docstring.
    ``target_nodes`` defaults to the node count ``advise`` recommends."""
    from perfpredict.advise.job_limits import queued_nodes, runtime_quantiles
    from perfpredict.advise.plan import advise_plan, catalog_entry
    from perfpredict.estimate import load_predictor
    from perfpredict.estimate.lookup import scale_per_node

    given(request, PlanRequest, PLAN_REQUEST_EXAMPLE).validate()
    if budget_node_hours is not None and not (
            is_number(budget_node_hours) and math.isfinite(budget_node_hours)
            and budget_node_hours > 0):  # an infinite budget is none: say so by leaving it out
        raise BadInputError(f"--budget-node-hours must be a finite number above 0 (leave "
                            f"it out for no limit), got {shown(budget_node_hours)}")
    if target_nodes is not None:  # a node count an estimate is asked for
        check_count("--target-nodes", target_nodes)
    # as Python's numbers: the plan echoes them, and numpy's made json.dumps fail
    target_nodes, budget_node_hours = python_number(target_nodes), python_number(budget_node_hours)
    if target_nodes is None:
        target_nodes = advise_plan(store, request).recommended.nodes
    predictor = load_predictor(store.url)
    target = request.query(float(target_nodes))
    target.validate()
    match = predictor.find_series(target)
    entry = match.entry
    per_node = scale_per_node(entry, target)
    target_scale = target.nodes * per_node
    measured_nodes = [plain(s / per_node) for s in entry.scales]
    in_ranks = entry.scale_unit == "ranks"
    series, ctx = predictor.series_context(entry)
    result = NextRunsPlan(series=series.name, target_nodes=target_nodes,
                          measured_nodes=measured_nodes,
                          spread_now=_target_spread(predictor, series, ctx, target_scale),
                          budget_node_hours=budget_node_hours,
                          ranks_per_node=per_node if in_ranks else None,
                          measured_ranks=[plain(s) for s in entry.scales] if in_ranks else None,
                          notes=list(match.notes))  # which series, as advise says
    if target_nodes < measured_nodes[0]:
        # a whole node count: "ask for 1.33333 or more" (32 ranks at 24 per node) named
        # a value --target-nodes refuses
        raise BadInputError(f"--target-nodes {target_nodes} is below the smallest measured "
                            f"configuration ({measured_nodes[0]:g} nodes); ask for "
                            f"{math.ceil(measured_nodes[0])} or more")
    spec = catalog_entry(store, entry.key.system, request.system)
    if spec is not None and spec.nodes and target_nodes > spec.nodes >= max(measured_nodes):
        raise BadInputError(f"--target-nodes {target_nodes} is more than the {spec.nodes} "
                            f"nodes {spec.name} has (the catalog); ask for at most "
                            f"{spec.nodes}")
    # as advise sweeps: counts a queue takes (a benchmark no queue runs is no option)
    swept, notes = queued_nodes(sorted({*sweep_nodes(measured_nodes[0], [], target_nodes),
                                        target_nodes}), spec)
    result.notes += notes
    options = [n for n in swept if float(n) not in measured_nodes]
    if not options:
        result.notes.append("every node count up to the target is measured already")
        return result
    queries = [request.query(float(n)) for n in sorted(options)]
    p50 = {int(q.nodes): e.predicted_runtime_s for q, e in zip(
        queries, predictor.estimate_many(queries), strict=True)}
    p90 = dict(zip(p50, runtime_quantiles(predictor, queries, P90), strict=True))
    cost_p50 = {n: n * p50[n] / 3600.0 for n in p50}
    cost_p90 = {n: n * p90[n] / 3600.0 for n in p90}

    spent = 0.0
    spread = result.spread_now
    remaining = set(p50)
    while remaining:
        best: tuple[float, int, Series, SeriesContext, float] | None = None
        for n in sorted(remaining):
            if budget_node_hours is not None and spent + cost_p90[n] > budget_node_hours:
                continue
            scale = n * per_node
            runtime_s = predictor.predictor.predict(series, np.array([scale]), 0.5, ctx,
                                                    predictor.peers(series))[0]
            ext_series, ext_ctx = with_simulated_run(series, ctx, scale, runtime_s.runtime_s)
            after = _target_spread(predictor, ext_series, ext_ctx, target_scale)
            value = (spread - after) / cost_p50[n]
            if spread - after >= MIN_SPREAD_REDUCTION and (best is None or value > best[0]):
                best = (value, n, ext_series, ext_ctx, after)
        if best is None:
            break
        _, n, series, ctx, after = best
        spent += cost_p90[n]
        result.steps.append(NextRun(order=len(result.steps) + 1, nodes=n,
                                    cost_node_hours_p50=cost_p50[n],
                                    cost_node_hours_p90=cost_p90[n],
                                    cumulative_node_hours_p90=spent, spread_before=spread,
                                    spread_after=after))
        spread = after
        remaining.discard(n)
    result.notes += _runs_no_queue_holds(result.steps, p90, spec)
    if budget_node_hours is not None and not result.steps:
        cheapest = min(cost_p90, key=lambda n: cost_p90[n])
        if cost_p90[cheapest] > budget_node_hours:
            result.budget_fits_no_run = True
            result.notes.append(f"the cheapest unmeasured node count, {cheapest}, costs "
                                f"{format_value(cost_p90[cheapest])} node-hours (P90), more "
                                "than the budget")
    return result


def _runs_no_queue_holds(steps: list[NextRun], p90_s: dict[int, float],
                         spec: SystemSpec | None) -> list[str]:
    """A note for each chosen benchmark whose P90 runtime is longer than any queue taking
    its node count allows. A run is advised to chain jobs with checkpoint and restart
    there; a benchmark seldom has them, and one suggested without a word needed 27 chained
    15-minute jobs. A shorter one (fewer steps or iterations) measures the same scaling."""
    from perfpredict.advise.queues import choose_queue

    if spec is None or not spec.queues:
        return []
    notes = []
    for step in steps:
        runtime_s = p90_s[step.nodes]
        choice = choose_queue(spec, step.nodes, runtime_s)
        if choice is None or choice.fits or choice.queue.max_walltime_s is None:
            continue
        limit_s = choice.queue.max_walltime_s
        notes.append(f"the run at {node_count(step.nodes)} may take {duration_text(runtime_s)} "
                     f"(P90), longer than any queue of {spec.name} taking it allows (at most "
                     f"{duration_text(limit_s)}, queue {choice.queue.name!r}): shorten the "
                     "benchmark (fewer steps or iterations) or chain "
                     f"{math.ceil(runtime_s / limit_s)} jobs with checkpoint and restart")
    return notes

