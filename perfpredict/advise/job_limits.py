"""The limits a plan puts in a job script: the walltime and the queue whose limit holds
it, the time-min the scheduler may cut it to, and the kill probability at each; and the
node counts some queue of the machine accepts at all.

``walltime_limit(quantile_s, nodes, spec, kill_risk, measured_system, nodes_option,
signal_lead_s)`` rounds a runtime
quantile up to the scheduler's granularity in the queue :mod:`perfpredict.advise.queues`
picks; :func:`time_min_limit` finds a time-min the same way; both read the predictor
through :func:`runtime_quantiles` and :func:`exceedance_probability`, which live here
with the limits built from them (the plan's P90 figures read them too, importing down).

Apart from the plan (:mod:`perfpredict.advise.plan`, which sweeps, chooses and prices)
because they are what a job is submitted with, not how a node count is chosen: the
plan holds them for its recommendation and for each run class, the job-script
directives (:mod:`perfpredict.advise.directives`) write them, and the benchmark runs to
do next (:mod:`perfpredict.advise.next_runs`) sweep only the node counts a queue takes
(:func:`queued_nodes`) and price them at the same quantiles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from perfpredict.advise.checkpoint import CHECKPOINT_SIGNAL_MAX_SHARE, checkpoint_signal_lead_s
from perfpredict.advise.scheduler import chain_hint, pbs_time
from perfpredict.advise.selection import node_count
from perfpredict.durations import duration_text, format_seconds
from perfpredict.figures import format_value, ordinal

if TYPE_CHECKING:
    from perfpredict.catalog import Queue, SystemSpec
    from perfpredict.estimate import LoadedPredictor, Query

#: Scheduler time-limit granularity when the catalog does not say (Slurm: whole minutes).
DEFAULT_TIME_GRANULARITY_S = 60


def quantile_confidence(quantile: float) -> float:
    """The two-sided confidence whose upper bound is the ``quantile`` of the runtime.

    >>> round(quantile_confidence(0.9), 6)
    0.8
    """
    return 2.0 * quantile - 1.0


def runtime_quantiles(predictor: LoadedPredictor, queries: list[Query],
                      quantile: float) -> list[float]:
    """The ``quantile`` (above 0.5) of the runtime for each query."""
    estimates = predictor.estimate_many(queries, quantile_confidence(quantile))
    return [e.upper_runtime_s for e in estimates]


def exceedance_probability(predictor: LoadedPredictor, query: Query,
                           runtime_s: float) -> float:
    """P(runtime > ``runtime_s``) under the predictor's interval model, answered by the
    model itself (:meth:`perfpredict.model.runtime.RuntimeModel.exceedance`): the kill
    probability of a walltime, to 0.0001. Before, a bisection over about 15 whole
    estimates found it."""
    return predictor.exceedance(query, runtime_s)


def walltime_kill_probability(reading: float, kill_risk: float, capped: bool,
                              smallest_tail: float) -> tuple[float, bool]:
    """The kill probability to report for the walltime requested (or a time-min), given
    the interval model's ``reading`` of it (:func:`exceedance_probability`).

    A walltime that no queue caps (not ``capped``) is the runtime quantile at
    ``1 - kill_risk`` rounded up, so the interval model puts its kill probability at
    ``kill_risk`` or below: what it is below is worth saying (rounding up to whole
    minutes often takes a 5% risk to 1.2%), but a reading above it is not a property of
    the walltime. The reading interpolates the upper tail between 1000 confidences of
    the calibrated intervals (:meth:`DistanceConformal.upper_tail
    <perfpredict.uncertainty.conformal.DistanceConformal.upper_tail>`), and can come out a
    little above the confidence the quantile was taken at: cosmoflow's 99.9th
    percentile, asked for at --kill-risk 0.001, read 0.00106 (resnet's at 0.00402,
    0.00406), and was reported as a walltime that misses the risk it was built for.
    Such a reading is reported as ``kill_risk`` itself, which the text says is an upper
    bound ("at most").
    A walltime capped by the queue (a chained run) is below the quantile, and its
    reading, well above the risk, is what each job of the chain faces; so is a time-min
    capped by the walltime.

    A reading below ``smallest_tail``, the finest the calibration errors resolve
    (:meth:`~perfpredict.estimate.estimates.LoadedPredictor.smallest_tail`, 1 / (n + 1)
    of n), lies past the widest of them, where the tail is no measured figure: it is
    reported as that bound. RELeARN's 840 s walltime at 2 nodes, past its widest error
    (810.8 s), read "kill probability 0.01%", the end of the levels the tail is
    interpolated on, at every --kill-risk from 0.005 down.

    Returns the probability and whether it is an upper bound ("at most"): the risk
    itself or ``smallest_tail``."""
    if reading < smallest_tail:
        return smallest_tail, True
    if capped or reading < kill_risk:
        return reading, False
    return kill_risk, True


def kill_probability_of(predictor: LoadedPredictor, query: Query, limit_s: float,
                        kill_risk: float, capped: bool) -> tuple[float, bool]:
    """The kill probability of a time limit ``limit_s`` for ``query``, and whether it
    is an upper bound (:func:`walltime_kill_probability`): the walltime's and the
    time-min's, each run class's as the recommendation's."""
    return walltime_kill_probability(exceedance_probability(predictor, query, limit_s),
                                     kill_risk, capped, predictor.smallest_tail(query))


def queued_nodes(nodes: list[int], spec: SystemSpec | None) -> tuple[list[int], list[str]]:
    """The swept node counts some queue of the catalog's machine accepts, and a note
    naming those left out: a job no queue takes may pend forever, and a proposal or a
    job script built on it asks for what the machine will not run. All of them where the
    catalog lists no queues, or where no queue takes any."""
    from perfpredict.catalog import queue_for

    if spec is None or not spec.queues:
        return nodes, []
    accepted = [n for n in nodes if queue_for(spec, n) is not None]
    left_out = [n for n in nodes if n not in accepted]
    if not accepted or not left_out:
        return nodes, []
    return accepted, [f"node counts no queue of {spec.name} accepts are not considered "
                      f"({', '.join(map(str, left_out))})"]


def beyond_range_walltime_note(kill_risk: float) -> str:
    """What a walltime beyond every measured node count is worth, and what to ask for.

    Why: the walltime is the predictor's quantile at ``1 - kill_risk``, calibrated on the
    store's own nested extrapolations, which run at smaller scale than the job asked
    about; beyond the largest measured count codes saturate more often than those
    examples did. In store-cut backtests of the acceptance store (five backtests of three
    seeds, ``perfpredict evaluate --confidence C``; docs/accuracy.md, "The intervals at
    other confidences, and as walltime kill risks") a walltime at a kill risk of 5% would
    have killed 6.9% of the extrapolated runs (VASP's 10.5%), one at 2.5% about 2.5%
    (VASP's 4.5%): half the risk meant held it on every data set on average, which a
    slow test holds pooled. Said only where the walltime requested (rounded up to the
    scheduler's granularity) leaves the predictor's kill probability above half the
    risk: otherwise asking for half would not change it."""
    return ("the walltime rests on an extrapolation beyond every measured node count, "
            "where backtests outran the quantile at a kill risk more often than that risk: "
            f"ask for half the risk you mean (--kill-risk {kill_risk / 2:g}), or measure a "
            "larger node count first (docs/accuracy.md, as walltime kill risks)")


def unresolved_tail_note(kill_risk: float, quantile_s: float) -> str:
    """What a walltime at a kill risk rarer than the calibration resolves is worth.

    Why: the walltime is the upper bound of the interval at confidence 1 - 2 x risk, and
    with n calibration errors at the job's distance from the measured node counts a
    bound at a risk below 1 / (n + 1) has no finite conformal value: the model gives the
    widest error it saw (:attr:`~perfpredict.uncertainty.conformal.ScoreBounds.
    at_widest`), or, for a series run once per node count, the noise floor's rarest
    deviations of other series' repeats, whichever is wider. Said where that is so (the
    estimate at the walltime's confidence says ``at_widest_error``): RELeARN's walltime
    stopped at the widest error, 810.8 s, from --kill-risk 0.005 down, each reported
    killing 0.01% of runs, and Castro-wdmerger's at 64 nodes (a 571 s prediction) went
    from 1,272 s at 0.001 to 16,484 s at 0.0001, a deviation of one MLPerf series' run
    from its repeats (docs/walltime.md)."""
    return (f"--kill-risk {kill_risk:g} is rarer than the calibration errors at this node "
            f"count resolve: the {ordinal(100 * (1 - kill_risk))} percentile "
            f"({format_seconds(quantile_s)} s) is the widest of them or the rarest "
            "run-to-run noise of the training series, not a tail they measured, and the "
            "kill probability said of it is a bound, not a figure (docs/walltime.md); a "
            "larger --kill-risk rests on them")


def rounded_limit_s(runtime_s: float, granularity_s: int) -> float:
    """``runtime_s`` rounded up to the scheduler's granularity, as a time limit is
    requested (the walltime, the time-min); one granule at least: a runtime below 6e-8 s
    rounded to a walltime of 0 s.

    >>> rounded_limit_s(188.7, 60), rounded_limit_s(1e-9, 60)
    (240.0, 60.0)
    """
    return float(max(math.ceil(runtime_s / granularity_s - 1e-9), 1) * granularity_s)


@dataclass
class TimeMin:
    """The shortest limit the scheduler may cut the walltime to, to start the job sooner
    (Slurm's ``--time-min``, PBS's shrink-to-fit ``min_walltime``): the runtime quantile
    at ``1 - kill_risk`` (``quantile_s``) rounded up as the walltime is, never above the
    walltime (``time_min_s``), and the kill probability of a job given only that long."""

    kill_risk: float
    time_min_s: float
    quantile_s: float
    kill_probability: float
    #: ``kill_probability`` is an upper bound (:func:`walltime_kill_probability`).
    kill_probability_is_upper_bound: bool

    @staticmethod
    def fields(time_min: TimeMin | None) -> dict[str, Any]:
        """The advice's JSON fields for ``time_min``, null without one: the same keys
        either way, for a script that reads them."""
        from perfpredict.advise.walltime import slurm_time

        if time_min is None:
            return dict.fromkeys(("time_min_kill_risk", "time_min_s", "time_min_slurm",
                                  "time_min_pbs", "time_min_quantile_s",
                                  "time_min_kill_probability",
                                  "time_min_kill_probability_is_upper_bound"))
        return {"time_min_kill_risk": time_min.kill_risk, "time_min_s": time_min.time_min_s,
                "time_min_slurm": slurm_time(time_min.time_min_s),
                "time_min_pbs": pbs_time(time_min.time_min_s),
                "time_min_quantile_s": time_min.quantile_s,
                "time_min_kill_probability": time_min.kill_probability,
                "time_min_kill_probability_is_upper_bound":
                    time_min.kill_probability_is_upper_bound}


def time_min_limit(predictor: LoadedPredictor, query: Query, time_min_kill_risk: float,
                   limit: WalltimeLimit) -> TimeMin:
    """The time-min of a job whose walltime is ``limit``: found as the walltime is (the
    quantile at ``1 - time_min_kill_risk``, rounded up to the same granularity), so that
    its kill probability reads as the walltime's does (:func:`walltime_kill_probability`):
    at most the risk, or lower where rounding took it there; above it where the quantile
    lies beyond the walltime and the time-min is the walltime itself.

    A run chained across jobs has none: each job is meant to run to its limit and
    checkpoint, and the quantile is of the whole run, not of one job (a queue capping
    the walltime at 80 minutes, a quantile of 77 gave a time-min "killed with
    probability at most 0.45" to a job of a chain the run needed two of)."""
    quantile_s = runtime_quantiles(predictor, [query], 1.0 - time_min_kill_risk)[0]
    rounded_s = rounded_limit_s(quantile_s, limit.granularity_s)
    chained = limit.chained_jobs > 1
    time_min_s = limit.walltime_s if chained else min(rounded_s, limit.walltime_s)
    return TimeMin(time_min_kill_risk, time_min_s, quantile_s, *kill_probability_of(
        predictor, query, time_min_s, time_min_kill_risk,
        capped=chained or time_min_s < rounded_s))


def time_min_note(time_min_kill_risk: float, quantile_s: float, limit: WalltimeLimit) -> str:
    """Why no time-min is written: the quantile asked for rounds up to the walltime, so
    the scheduler could shorten nothing and a larger risk may give one; or the run is
    chained across jobs that each run to the limit, which no risk changes."""
    if limit.chained_jobs > 1:
        return (f"no time-min is written: the run is chained across {limit.chained_jobs} "
                f"jobs that each run to their limit and checkpoint, so there is nothing "
                f"to shorten at any --time-min-kill-risk")
    return (f"at --time-min-kill-risk {time_min_kill_risk:g} the runtime quantile "
            f"({format_seconds(quantile_s)} s) rounds up to the walltime itself: there is "
            f"nothing to shorten, so no time-min is written (a larger "
            f"--time-min-kill-risk may give one)")


@dataclass
class WalltimeLimit:
    """The walltime to request, the queue to submit to and why (``queue_reason``), the
    queue the job lands in without asking (``default_queue``), and how many chained jobs
    a run needs when no queue's limit holds it."""

    walltime_s: float
    granularity_s: int
    queue: Queue | None
    chained_jobs: int
    warnings: list[str]
    default_queue: Queue | None = None
    queue_reason: str | None = None


def chain_charge_text(chained_jobs: int, limit_s: float, nodes: int) -> str:
    """What a run chained across ``chained_jobs`` jobs of ``limit_s`` on ``nodes`` may be
    charged at most, as a product a reader can check: "3 x 24 h x 32 nodes = 2,304
    node-hours". The plan's node-hours count the predicted runtime alone, so the chaining
    warning and the proposal's note both say this bound beside them, worked out once."""
    return (f"{chained_jobs} x {duration_text(limit_s)} x {node_count(nodes)} = "
            f"{format_value(chained_jobs * limit_s * nodes / 3600)} node-hours")


def walltime_limit(quantile_s: float, nodes: int, spec: SystemSpec | None, kill_risk: float,
                   measured_system: str, nodes_option: str,
                   signal_lead_s: int | None = None) -> WalltimeLimit:
    """``quantile_s`` rounded up to the scheduler's granularity, in the queue
    :func:`~perfpredict.advise.queues.choose_queue` picks for a job of ``nodes`` nodes
    (the default one, else another whose limit holds the walltime), capped by that
    queue's limit only when none holds it, with warnings when capped (chain jobs with
    checkpoint/restart), when no queue accepts the job (it may pend forever) and when no
    limit could be checked.

    ``nodes_option`` is the option the count came from, as the fix to type: the sweep's
    ``--max-nodes``, the user's ``--nodes`` or a ``--run-class``: the warning that no
    queue accepts the count named ``--max-nodes`` to a user who had typed ``--nodes
    2048``, whose plan is made for 2048 whatever the sweep's limit.

    A chained job works until its checkpoint signal, ``signal_lead_s`` (``--signal-lead``)
    or perfpredict's own lead before the limit, so the chain counts jobs of the limit
    less that lead: counted at the whole limit, a run of 6.1 h under a 1 h limit was
    "chain 7 jobs" while seven jobs checkpointing 10 min early do 5.8 h of its work."""
    granularity_s = (spec.time_granularity_s if spec and spec.time_granularity_s
                     else DEFAULT_TIME_GRANULARITY_S)
    walltime_s = rounded_limit_s(quantile_s, granularity_s)
    if spec is None or not spec.queues:
        where = (f"the catalog lists no queues for {spec.name}" if spec else
                 f"no catalog entry matches {measured_system!r}")
        return WalltimeLimit(walltime_s, granularity_s, None, 1, [
            f"{where}: walltime rounded to {granularity_s} s, no queue limit checked (add "
            "the machine's queues with 'perfpredict systems add FILE.toml'; --system "
            "chooses the runs to advise from, not the machine to run on)"])
    from perfpredict.advise.queues import choose_queue

    choice = choose_queue(spec, nodes, walltime_s)
    if choice is None:
        return WalltimeLimit(walltime_s, granularity_s, None, 1, [
            f"no queue of {spec.name} accepts {node_count(nodes)}: such a job may pend "
            f"forever; pick a node count a queue accepts ({nodes_option}) or ask the center"])
    queue = choice.queue
    # A queue that charges nothing (ARCHER2's lowpriority) takes large, long jobs no
    # charged queue does: a proposal priced there leaves them out of its allocation units
    # with no more than "times 0" in a footnote to say so.
    free = ([f"queue {queue.name!r}, where jobs of {node_count(nodes)} this long go, "
             "charges nothing (0x): the allocation-unit totals leave them out; check who "
             f"may use it ('perfpredict systems show {spec.name}')"]
            if queue.charge_multiplier == 0 and spec.charge_factor else [])
    if choice.fits or queue.max_walltime_s is None:
        return WalltimeLimit(walltime_s, granularity_s, queue, 1, free, choice.default,
                             choice.reason)
    lead_s = (checkpoint_signal_lead_s(queue.max_walltime_s) if signal_lead_s is None
              else signal_lead_s)
    # a lead above the share is refused with the plan's message; here it only must not
    # leave a job no time to work
    work_s = queue.max_walltime_s - min(lead_s, CHECKPOINT_SIGNAL_MAX_SHARE * queue.max_walltime_s)
    chained_jobs = math.ceil(quantile_s / work_s)
    return WalltimeLimit(queue.max_walltime_s, granularity_s, queue, chained_jobs, [
        f"the walltime of the {ordinal(100 * (1 - kill_risk))}-percentile runtime "
        f"({duration_text(walltime_s)}) exceeds the limit of every queue of {spec.name} that "
        f"takes {node_count(nodes)}, the longest {duration_text(queue.max_walltime_s)} in queue "
        f"{queue.name!r}: walltime capped; checkpoint and chain {chained_jobs} jobs "
        f"({chain_hint(spec.scheduler)}); the node-hours count the predicted runtime "
        f"alone, while each job but the last is charged up to its limit and each restart "
        f"reads the checkpoint back: budget up to "
        f"{chain_charge_text(chained_jobs, queue.max_walltime_s, nodes)} per run",
        *free],
        choice.default, choice.reason)
