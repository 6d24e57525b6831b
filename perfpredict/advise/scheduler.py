"""How batch schedulers write a time limit and a chain of jobs. Imports nothing of the
advice, so that the plan, the directives and the reports can all use it without importing
one another."""

from __future__ import annotations

import math


def pbs_time(walltime_s: float) -> str:
    """PBS ``-l walltime`` as ``HH:MM:SS`` (hours may exceed 24), rounded up to a second.

    >>> pbs_time(90061)
    '25:01:01'
    """
    total_s = math.ceil(walltime_s - 1e-9)
    return f"{total_s // 3600:02d}:{total_s % 3600 // 60:02d}:{total_s % 60:02d}"


#: How each scheduler of the catalog (``scheduler`` of a system) runs a job after another
#: ends, whatever its exit: how a checkpointed run is chained past a queue's time limit.
CHAIN_AFTER = {"slurm": "sbatch --dependency=afterany:JOBID",
               "pbs": "qsub -W depend=afterany:JOBID"}


def chain_hint(scheduler: str | None) -> str:
    """How to chain jobs on a machine run by ``scheduler``: its own command where the
    catalog knows it (a PBS machine was told to use sbatch), else the rule in words.

    >>> chain_hint("pbs"), chain_hint(None)
    ('qsub -W depend=afterany:JOBID', "a dependency on the previous job's end, whatever its exit")
    """
    return CHAIN_AFTER.get(scheduler or "", "a dependency on the previous job's end, "
                           "whatever its exit")
