"""Choosing a node count: efficiency floors as centers set them, and an objective.

Centers accept a request only where the code still scales: NCI asks for about 75% parallel
efficiency overall, Notur for a speedup per doubling of resources (1.5x, 1.4x, 1.3x as the
scale grows). :class:`EfficiencyFloor` holds either or both; :func:`choose` keeps the node
counts that meet it and picks the best by the objective:

- ``fastest``: shortest time to solution;
- ``cheapest``: fewest node-hours;
- ``balanced``: smallest product of the two (the knee of the time/cost curve).

For weak scaling the problem grows with the nodes, so time and node-hours are compared per
unit of work (nodes / smallest measured nodes): "fastest" is then the highest throughput.
The reason says in one sentence which rule decided: the objective alone, or the floor that
excluded the next better node count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from perfpredict.errors import BadInputError
from perfpredict.percent import efficiency_percent, percent_decimals

OBJECTIVES = ("fastest", "cheapest", "balanced")
_PHRASES = {
    "fastest": ("the shortest time to solution", "faster"),
    "cheapest": ("the fewest node-hours", "cheaper"),
    "balanced": ("the best balance of time to solution and node-hours", "better balanced"),
}


@dataclass
class Candidate:
    """One node count of the sweep with its prediction.

    ``lower/upper_runtime_s`` are the interval at the plan's confidence; ``p90_runtime_s``
    the 90th percentile. Efficiency and speedup are against the smallest measured
    configuration (weak scaling: efficiency T(p_min) / T(p), speedup Gustafson's scaled
    speedup, the efficiency times p / p_min); ``speedup_per_doubling`` is the
    throughput gained per doubling of nodes on the way from half this count (None for the
    smallest count, the reference).
    """

    nodes: int
    predicted_runtime_s: float
    lower_runtime_s: float
    upper_runtime_s: float
    p90_runtime_s: float
    efficiency: float
    speedup: float
    speedup_per_doubling: float | None
    node_hours_p50: float
    node_hours_p90: float
    measured: bool
    measured_runtime_s: float | None
    beyond_measured_range: bool
    meets_floor: bool = True


@dataclass(frozen=True)
class EfficiencyFloor:
    """Parallel efficiency against the smallest measured configuration (overall), and/or
    speedup per doubling of nodes (Notur's rule); None leaves a rule out."""

    min_efficiency: float | None = None
    min_speedup_per_doubling: float | None = None

    def validate(self) -> None:
        if self.min_efficiency is not None and not 0 < self.min_efficiency <= 1:
            raise BadInputError(f"--min-efficiency is a parallel efficiency between 0 and 1 "
                                f"(0.7 = 70%), got {self.min_efficiency:g}")
        if self.min_speedup_per_doubling is not None and not (
                1 < self.min_speedup_per_doubling <= 2):
            raise BadInputError("--min-speedup-per-doubling is the speedup asked for each "
                                "doubling of nodes, above 1 and at most 2 (Notur: 1.5, 1.4, "
                                f"1.3), got {self.min_speedup_per_doubling:g}")

    def describe(self, weak: bool) -> str:
        """The floor in words, its efficiency and gain per doubling named as for the
        series' scaling (``weak``): RELeARN's reason said "the 70% parallel-efficiency
        floor" beside a summary's "weak-scaling efficiency 71%", and "the
        1.5x-speedup-per-doubling floor" of runs that each do twice the work of the last,
        where a doubling gains throughput (work done per second, 2 T(n) / T(2n)), not
        speed."""
        rules = []
        if self.min_efficiency is not None:
            rules.append(f"the {floor_percent(self.min_efficiency)} "
                         f"{'weak-scaling efficiency' if weak else 'parallel-efficiency'} floor")
        if self.min_speedup_per_doubling is not None:
            rules.append(f"the {self.min_speedup_per_doubling:g}x-"
                         f"{'throughput' if weak else 'speedup'}-per-doubling floor")
        return " and ".join(rules)

    def violations(self, candidate: Candidate, weak: bool,
                   broken_at: Candidate | None = None) -> list[tuple[str, str]]:
        """(rule, why) for each rule ``candidate`` breaks; empty when it meets the floor.
        ``weak``: the series scales weakly, and its efficiency is said as weak-scaling
        efficiency, its gain per doubling as throughput. ``broken_at`` is the smallest
        node count whose doubling already fell below the per-doubling floor: scaling past
        it does not count, whatever later steps gain."""
        out = []
        if self.min_efficiency is not None and candidate.efficiency < self.min_efficiency:
            said = percent_apart(candidate.efficiency, self.min_efficiency)
            out.append((f"min_efficiency {self.min_efficiency:g}",
                        (f"has a weak-scaling efficiency of only {said}" if weak
                         else f"is only {said} efficient")
                        + f", below the {floor_percent(self.min_efficiency)} floor"))
        floor = self.min_speedup_per_doubling
        per_doubling = candidate.speedup_per_doubling
        if floor is not None and per_doubling is not None and per_doubling < floor:
            out.append((f"min_speedup_per_doubling {floor:g}",
                        f"gains only {times_apart(per_doubling, floor)}x "
                        f"{'in throughput ' if weak else ''}per doubling of nodes, below "
                        f"the {floor:g}x floor"))
        elif floor is not None and broken_at is not None and broken_at.nodes < candidate.nodes:
            out.append((f"min_speedup_per_doubling {floor:g}",
                        f"lies past {broken_at.nodes} nodes, where the "
                        f"{'throughput ' if weak else ''}gain per doubling already fell "
                        f"below the {floor:g}x floor"))
        return out


def node_count(nodes: int) -> str:
    """``nodes`` with its noun: "1 node", "8 nodes"."""
    return f"{nodes} node" if nodes == 1 else f"{nodes} nodes"


def floor_percent(floor: float) -> str:
    """A floor the user set, as a percentage with the digits they gave: 0.7 is "70%",
    0.705 "70.5%", 0.001 "0.1%" (not "0%")."""
    return f"{floor * 100:g}%"


def times_apart(value: float, floor: float) -> str:
    """``value`` with the fewest decimals (two or more) that do not read as ``floor``:
    1.4957 against a 1.5x floor is "1.496", not "1.50"."""
    for digits in range(2, 6):
        if f"{value:.{digits}f}" != f"{floor:.{digits}f}":
            return f"{value:.{digits}f}"
    return f"{value:.6f}"


def percent_apart(value: float, floor: float | None) -> str:
    """``value`` as a percentage (:func:`efficiency_percent`) with the fewest further
    decimals that do not read as ``floor``: "only 70% efficient, below the 70% floor"
    for 69.96% said nothing, nor "70%" beside "<floor" in a table."""
    first = percent_decimals(value)
    if floor is None or value == floor:
        return f"{value:.{first}%}"
    for digits in range(first, first + 4):
        if f"{value:.{digits}%}" != f"{floor:.{digits}%}":
            return f"{value:.{digits}%}"
    return f"{value:.{first + 4}%}"


@dataclass
class Choice:
    """The candidate chosen, the rule that decided and the reason in one sentence; and
    ``broken_at``, the smallest node count whose doubling fell below the per-doubling
    floor (None: none did, or no such floor), past which no count meets it: a count the
    user asks for there (``--nodes``) is said to lie past it, as the reason says of the
    sweep's, not vaguely to miss the floor."""

    candidate: Candidate
    rule: str
    reason: str
    broken_at: Candidate | None = None


def objective_score(objective: str, weak: bool,
                    smallest_measured_nodes: float) -> Callable[[Candidate], float]:
    """Lower is better: time, node-hours or their product, per unit of work."""
    def score(c: Candidate) -> float:
        work = c.nodes / smallest_measured_nodes if weak else 1.0
        time_s, node_hours = c.predicted_runtime_s / work, c.node_hours_p50 / work
        return {"fastest": time_s, "cheapest": node_hours,
                "balanced": time_s * node_hours}[objective]
    return score


def _first_short_doubling(candidates: list[Candidate],
                          floor: EfficiencyFloor) -> Candidate | None:
    """The smallest node count (candidates ascend) whose doubling gains less than the
    per-doubling floor, if any."""
    wanted = floor.min_speedup_per_doubling
    if wanted is None:
        return None
    return next((c for c in candidates
                 if c.speedup_per_doubling is not None and c.speedup_per_doubling < wanted),
                None)


def choose(candidates: list[Candidate], floor: EfficiencyFloor, objective: str, weak: bool,
           smallest_measured_nodes: float, sweep_end: str | None = None) -> Choice:
    """The best candidate by ``objective`` among those meeting ``floor`` (marking each
    candidate's ``meets_floor``), and the rule that decided, in one sentence.
    ``sweep_end``: why the sweep's largest count is its last (the machine's size, its
    queues), where ``--max-nodes`` is not what ends it."""
    score = objective_score(objective, weak, smallest_measured_nodes)
    broken_at = _first_short_doubling(candidates, floor)
    for c in candidates:
        c.meets_floor = not floor.violations(c, weak, broken_at)
    feasible = [c for c in candidates if c.meets_floor]
    best_phrase, comparative = _PHRASES[objective]
    if weak:  # "4 nodes would be faster" of a run doing four times the work
        best_phrase += " per unit of work"
        comparative += " per unit of work"
    if not feasible:
        smallest = candidates[0]
        return Choice(smallest, "no candidate meets the floor", (
            f"No node count meets {floor.describe(weak)}, so the smallest, "
            f"{node_count(smallest.nodes)}, is shown; relax the floor or check the "
            "application's scaling."), broken_at)
    rec = min(feasible, key=lambda c: (score(c), c.nodes))
    better = [c for c in candidates if score(c) < score(rec)]
    if not better:
        # one count (--max-nodes at the smallest measured) has nothing to be best of:
        # "of all 1 node counts considered (1-1)" said so badly
        considered = ("is the only node count considered" if len(candidates) == 1 else
                      f"gives {best_phrase} of all {len(candidates)} node counts considered "
                      f"({candidates[0].nodes}-{candidates[-1].nodes})")
        reason = (f"{objective}: {node_count(rec.nodes)} {considered}; {floor.describe(weak)} "
                  "did not bind")
        if objective == "fastest" and rec is candidates[-1]:
            reason += f" ({sweep_end or 'raise --max-nodes to look further'})"
        return Choice(rec, f"objective {objective}", reason + ".", broken_at)
    # the nearest better node count tells the user what the floor cost them
    alternative = min(better, key=lambda c: abs(c.nodes - rec.nodes) / max(c.nodes, rec.nodes))
    rules, whys = zip(*floor.violations(alternative, weak, broken_at), strict=True)
    reason = (f"{objective}: {node_count(rec.nodes)} gives {best_phrase} among the node counts "
              f"that meet {floor.describe(weak)} (predicted "
              f"{'weak-scaling ' if weak else ''}efficiency "
              f"{efficiency_percent(rec.efficiency)}); "
              f"{node_count(alternative.nodes)} would be {comparative} but "
              f"{' and '.join(whys)}.")
    return Choice(rec, " and ".join(rules), reason, broken_at)
