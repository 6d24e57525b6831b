"""Which queue a job of a given node count and walltime should be submitted to.

A catalog entry lists a machine's queues, partitions and QOS with the node range and time
limit of each, the default production queues first (``docs/catalog.md``). A job lands in
the first one whose node range holds it; that is where it should go when its walltime fits
the limit there. When it does not, an HPC user looks for another queue that takes the same
node count for longer (Frontier's ``extended``: up to 64 nodes for 24 h, where the default
gives 2 h; ARCHER2's ``long``, LUMI's ``small``) before cutting the run into chained jobs:
one job in the right queue has no checkpoint to write, no restart to trust and no second
wait in the queue. Only when no queue takes the job for that long is the run chained, in
the queue that allows the longest jobs (the fewest links in the chain).

Before, the advice looked at the first queue only, and told a 10-hour job on 32 Frontier
nodes to chain five 2-hour jobs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from perfpredict.advise.selection import node_count
from perfpredict.durations import duration_text

if TYPE_CHECKING:
    from perfpredict.catalog import Queue, SystemSpec


@dataclass(frozen=True)
class QueueChoice:
    """The queue a job should be submitted to, the queue it lands in without asking
    (``default``), whether the walltime fits the chosen queue's limit, and one sentence
    saying which queue and why, starting with the queue's name, node range and limit."""

    queue: Queue
    default: Queue
    fits: bool
    reason: str


def queue_text(queue: Queue) -> str:
    """A queue with its node range and limit, as the reason names it.

    >>> from perfpredict.catalog import Queue
    >>> queue_text(Queue("extended", 1, 64, 86400.0))
    "'extended' (1-64 nodes, 24 h limit)"
    >>> queue_text(Queue("debug", 1, 8, 600.0))
    "'debug' (1-8 nodes, 10 min limit)"
    """
    nodes = (f"{queue.min_nodes}+ nodes" if queue.max_nodes is None
             else f"{queue.min_nodes}-{queue.max_nodes} nodes")
    limit = ("no documented limit" if queue.max_walltime_s is None
             else f"{duration_text(queue.max_walltime_s)} limit")
    charged = ("" if queue.charge_multiplier == 1
               else f", charged at {queue.charge_multiplier:g}x")
    return f"{queue.name!r} ({nodes}, {limit}{charged})"


def fits(queue: Queue, walltime_s: float) -> bool:
    """Whether ``queue`` lets a job run for ``walltime_s``."""
    return queue.max_walltime_s is None or walltime_s <= queue.max_walltime_s


def accepting_queues(spec: SystemSpec, nodes: int) -> list[Queue]:
    """The queues of ``spec`` that take a job of ``nodes`` nodes, in the catalog's order
    (the one such a job lands in by default first)."""
    return [q for q in spec.queues if q.accepts(nodes)]


def longest_queue(queues: list[Queue]) -> Queue:
    """Of ``queues`` (not empty), the one allowing the longest jobs, the first listed among
    equals; a queue without a documented limit is the longest. Applied to the queues that
    take a node count (:func:`accepting_queues`), its limit is the most a job of that size
    can ask for: ``advise`` chains a run in it, ``advise walltime`` caps its advice there.
    """
    return max(queues, key=lambda q: math.inf if q.max_walltime_s is None
               else q.max_walltime_s)


def choose_queue(spec: SystemSpec, nodes: int, walltime_s: float) -> QueueChoice | None:
    """The queue for a job of ``nodes`` nodes asking for ``walltime_s``: the default one
    (the first listed that takes the node count) when the walltime fits its limit, else
    the first listed queue taking the node count whose limit fits, else (a chained run)
    the one with the longest limit, the first listed among equals. None when no queue
    takes the node count."""
    accepting = accepting_queues(spec, nodes)
    if not accepting:
        return None
    default = accepting[0]
    jobs = f"jobs of {node_count(nodes)}"
    if fits(default, walltime_s):
        return QueueChoice(default, default, True,
                           f"{queue_text(default)}, where {jobs} land by default")
    too_short = (f"the walltime ({duration_text(walltime_s)}) is longer than the "
                 f"{duration_text(default.max_walltime_s or 0)} limit of {default.name!r}, "
                 f"where {jobs} land by default")
    fitting = [q for q in accepting if fits(q, walltime_s)]
    if fitting:
        chosen = fitting[0]
        return QueueChoice(chosen, default, True,
                           f"{queue_text(chosen)}: {too_short}; submit to "
                           f"{chosen.name!r} instead, which takes them for that long")
    longest = longest_queue(accepting)
    other = ("" if longest is default else
             f"; {longest.name!r} allows the longest jobs of that size, the fewest to chain")
    return QueueChoice(longest, default, False,
                       f"{queue_text(longest)}: no queue of {spec.name} takes "
                       f"{node_count(nodes)} for the walltime ({duration_text(walltime_s)})"
                       f"{other}")
