"""Batch-script directives for a recommendation: ``#SBATCH`` for Slurm, ``#PBS`` for PBS Pro.

The layout comes from the measured series (or the user's --ranks-per-node and
--threads-per-rank), because the prediction holds only for the layout it was measured
with. A value nobody knows is left out with a comment saying so, never guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict.advise.scheduler import chain_hint, pbs_time
from perfpredict.advise.selection import node_count
from perfpredict.durations import format_seconds
from perfpredict.errors import BadInputError

if TYPE_CHECKING:
    from perfpredict.advise.plan import Plan

SCHEDULERS = ("sbatch", "pbs")
#: Lead time for the checkpoint signal when a run must be chained across jobs.
CHECKPOINT_SIGNAL_LEAD_S = 600
#: The largest share of the walltime the lead may take: under a 10-minute queue limit a
#: 600 s lead signalled the job as it started, and it checkpointed before any work.
CHECKPOINT_SIGNAL_MAX_SHARE = 0.2


def checkpoint_signal_lead_s(walltime_s: float) -> int:
    """Seconds before the limit to signal a checkpoint (Slurm's ``--signal=...@lead``):
    :data:`CHECKPOINT_SIGNAL_LEAD_S`, or a fifth of a shorter walltime.

    >>> checkpoint_signal_lead_s(3600), checkpoint_signal_lead_s(600)
    (600, 120)
    """
    return int(min(CHECKPOINT_SIGNAL_LEAD_S, CHECKPOINT_SIGNAL_MAX_SHARE * walltime_s))


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
        if plan.chained_jobs > 1:
            lines.append(f"#SBATCH --signal=B:USR1@{checkpoint_signal_lead_s(plan.walltime_s)}"
                         "  # checkpoint "
                         f"before the limit; chain {plan.chained_jobs} jobs")
    else:
        select = f"select={nodes}"
        select += f":mpiprocs={rpn}" if rpn else ""
        select += f":ompthreads={threads}" if threads else ""
        lines.append(f"#PBS -l {select}")
        if not rpn:
            lines.append("# mpiprocs: ranks per node unknown; pass --ranks-per-node")
        if not threads:
            lines.append("# ompthreads: threads per rank unknown; pass --threads-per-rank")
        lines.append(f"#PBS -l walltime={pbs_time(plan.walltime_s)}")
        if plan.chained_jobs > 1:
            lines.append(f"# the queue caps the walltime: checkpoint before the limit and "
                         f"chain {plan.chained_jobs} jobs ({chain_hint('pbs')})")
    return "\n".join(lines)


def directives_document(plan: Plan, scheduler: str) -> dict[str, Any]:
    """``--emit`` for a script (``--format json``): the advice as ``advise --format json``
    gives it, with the directives' text under ``directives`` and the ``scheduler`` they
    are for. A script that writes and submits the job reads the node count, layout and
    walltime as numbers beside the text, parsing neither."""
    return {**plan.as_dict(), "scheduler": scheduler, "directives": directives(plan, scheduler)}
