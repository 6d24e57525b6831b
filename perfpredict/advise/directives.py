"""Batch-script directives for a recommendation: ``#SBATCH`` for Slurm, ``#PBS`` for PBS Pro.

The layout comes from the measured series (or the user's --ranks-per-node and
--threads-per-rank), because the prediction holds only for the layout it was measured
with. A value nobody knows is left out with a comment saying so, never guessed.

A time-min (``advise --time-min-kill-risk``) is Slurm's ``--time-min``, and on PBS a
shrink-to-fit job: ``-l min_walltime`` and ``-l max_walltime`` in place of ``-l
walltime``, which PBS then sets itself between the two when it starts the job (OpenPBS's
pbs_resources(7B): a job with ``min_walltime`` is shrink-to-fit, and ``max_walltime``
defaults to five years, so it is always written). PBS has no ``--signal``: at the limit
it sends SIGTERM and, after the queue's ``kill_delay``, SIGKILL, so a lead for the
checkpoint (``advise --signal-lead``) is said as a comment on how to time it in the job.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from perfpredict.advise.scheduler import chain_hint, pbs_time
from perfpredict.advise.selection import node_count
from perfpredict.durations import format_seconds
from perfpredict.errors import BadInputError

if TYPE_CHECKING:
    from perfpredict.advise.plan import Plan

SCHEDULERS = ("sbatch", "pbs")
#: The catalog's scheduler (``scheduler`` of a system) each ``--emit`` writes for.
EMITTED_FOR = {"sbatch": "slurm", "pbs": "pbs"}


def directives(plan: Plan, scheduler: str) -> str:
    """The job-script header that requests ``plan``'s recommendation."""
    from perfpredict.advise.walltime import slurm_time

    if scheduler not in SCHEDULERS:
        raise BadInputError(f"--emit must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
    nodes = plan.recommended.nodes
    rpn, threads = plan.ranks_per_node, plan.threads_per_rank
    lines = [f"# {plan.series}: {node_count(nodes)}, predicted "
             f"{format_seconds(plan.recommended.predicted_runtime_s)} s; walltime at kill risk "
             f"{plan.request.kill_risk:g} (perfpredict advise)"]
    if plan.queue != plan.default_queue:
        # the catalog's queue names are not always what the scheduler takes (Frontier's
        # "batch (bin 5)" is a priority bin), so the queue is said, not written as -p / -q:
        # submitted without it, the job lands where its walltime is refused
        lines.append(f"# queue {plan.queue_reason}")
    if scheduler == "sbatch":
        lines.append(f"#SBATCH --nodes={nodes}")
        lines.append(f"#SBATCH --ntasks-per-node={rpn}" if rpn else
                     "# --ntasks-per-node: ranks per node unknown; pass --ranks-per-node")
        lines.append(f"#SBATCH --cpus-per-task={threads}" if threads else
                     "# --cpus-per-task: threads per rank unknown; pass --threads-per-rank")
        lines.append(f"#SBATCH --time={slurm_time(plan.walltime_s)}")
        lines += _time_min_lines(plan, "#SBATCH --time-min", slurm_time)
        if plan.signal_lead_s is not None:
            chain = f"; chain {plan.chained_jobs} jobs" if plan.chained_jobs > 1 else ""
            lines.append(f"#SBATCH --signal=B:USR1@{plan.signal_lead_s}  # checkpoint "
                         f"before the limit{chain}")
    else:
        select = f"select={nodes}"
        select += f":mpiprocs={rpn}" if rpn else ""
        select += f":ompthreads={threads}" if threads else ""
        lines.append(f"#PBS -l {select}")
        if not rpn:
            lines.append("# mpiprocs: ranks per node unknown; pass --ranks-per-node")
        if not threads:
            lines.append("# ompthreads: threads per rank unknown; pass --threads-per-rank")
        lines += _time_min_lines(plan, "#PBS -l min_walltime", pbs_time)
        # shrink-to-fit: PBS sets the walltime itself, from min_walltime to max_walltime
        limit = "max_walltime" if plan.time_min_shortens else "walltime"
        lines.append(f"#PBS -l {limit}={pbs_time(plan.walltime_s)}")
        if plan.chained_jobs > 1:
            lines.append(f"# the queue caps the walltime: checkpoint before the limit and "
                         f"chain {plan.chained_jobs} jobs ({chain_hint('pbs')})")
        # perfpredict's own lead for a chain goes unsaid: the chain's comment says it
        if plan.request.signal_lead is not None and plan.signal_lead_s is not None:
            lines.append(_pbs_signal_comment(plan, plan.signal_lead_s))
    return "\n".join(lines)


def _time_min_lines(plan: Plan, directive: str, written: Callable[[float], str]
                    ) -> list[str]:
    """The time-min ``directive`` (``#SBATCH --time-min``, ``#PBS -l min_walltime``),
    its value ``written`` as the scheduler takes it, after a comment that says what it
    means; the comment alone where the time-min would shorten nothing, and nothing
    without a time-min."""
    if plan.time_min is None:
        return []
    name, risk = directive.split()[-1], plan.time_min.kill_risk
    if plan.chained_jobs > 1:
        return [f"# {name}: none, the run is chained across {plan.chained_jobs} jobs that "
                f"each run to their limit, so there is nothing to shorten"]
    if not plan.time_min_shortens:
        return [f"# {name}: at --time-min-kill-risk {risk:g} the runtime quantile rounds "
                f"up to the walltime itself, so there is nothing to shorten"]
    # at most the risk: a time-min below the walltime is that risk's quantile rounded up
    return [f"# {name}: the scheduler may cut the limit to this to start the job sooner; "
            f"a job given only that long is killed with probability at most {risk:g} "
            f"(--time-min-kill-risk): checkpoint, or accept that risk",
            f"{directive}={written(plan.time_min.time_min_s)}"]


def _pbs_signal_comment(plan: Plan, lead_s: int) -> str:
    """How to checkpoint ``lead_s`` before the limit on PBS, which signals nothing ahead
    of it: time the signal in the job, from the walltime PBS sets where it sets it (a
    shrink-to-fit job)."""
    when = ("the walltime PBS sets (qstat -f $PBS_JOBID: Resource_List.walltime) less "
            f"{lead_s}" if plan.time_min_shortens
            else str(math.floor(plan.walltime_s - lead_s)))
    return (f"# checkpoint {lead_s} s before the limit: PBS signals nothing ahead of it, so "
            f"time it in the job, e.g. run the launch command under 'timeout "
            f"--signal=USR1 SECONDS' with SECONDS {when}")


def emit_warnings(plan: Plan, scheduler: str) -> list[str]:
    """The advice's warnings, and first, where the catalog says the machine runs another
    scheduler than ``scheduler`` writes for, that one: ``#SBATCH`` lines in a PBS job
    script are comments to qsub, so the job would run on its queue's defaults (one node,
    its default walltime), silently."""
    machine = plan.scheduler
    if machine is None or EMITTED_FOR[scheduler] == machine:
        return plan.warnings
    fix = next((f"use --emit {emit}" for emit, runs in EMITTED_FOR.items() if runs == machine),
               f"perfpredict writes no {machine} directives: write them from the advice")
    return [f"{plan.catalog_system} runs {machine} (the catalog), and --emit {scheduler} "
            f"writes {EMITTED_FOR[scheduler]} directives, which {machine} does not read; "
            f"{fix}", *plan.warnings]


def directives_document(plan: Plan, scheduler: str) -> dict[str, Any]:
    """``--emit`` for a script (``--format json``): the advice as ``advise --format json``
    gives it, with the directives' text under ``directives``, the ``scheduler`` they
    are for, and the warnings of :func:`emit_warnings`. A script that writes and submits
    the job reads the node count, layout and walltime as numbers beside the text,
    parsing neither."""
    return {**plan.as_dict(), "scheduler": scheduler, "directives": directives(plan, scheduler),
            "warnings": emit_warnings(plan, scheduler)}
