"""The checkpoint signal: how long before its time limit a job is told to checkpoint
(Slurm's ``--signal=B:USR1@lead``). Imports nothing of the advice, so that the plan and
the directives can both use it.

Without ``--signal-lead`` a lead is written only for a run chained across jobs, which
must checkpoint at every limit: :data:`CHECKPOINT_SIGNAL_LEAD_S`, or a fifth of a shorter
limit. With it, the user's lead is written whenever it is given, and a lead that takes
more than that fifth of the shortest limit the job may be given is refused, not cut to
the fifth: a lead given is how long the job's checkpoint needs, and a script with a
shorter one has the job killed in the middle of writing it, losing the run's work, while
a refusal costs no more than asking again (with a shorter lead, or for a longer
walltime). perfpredict's own lead is a guess, so it is cut without a word.
"""

from __future__ import annotations

import math

from perfpredict.advise.scheduler import pbs_time
from perfpredict.durations import option_seconds
from perfpredict.errors import BadInputError

#: Lead time for the checkpoint signal when a run must be chained across jobs.
CHECKPOINT_SIGNAL_LEAD_S = 600
#: The largest share of the walltime the lead may take: under a 10-minute queue limit a
#: 600 s lead signalled the job as it started, and it checkpointed before any work.
CHECKPOINT_SIGNAL_MAX_SHARE = 0.2
#: The longest lead Slurm takes (``sig_time``, 16 bits: 0 to 65535 seconds).
SLURM_MAX_SIGNAL_LEAD_S = 65535


def checkpoint_signal_lead_s(walltime_s: float) -> int:
    """Seconds before the limit to signal a checkpoint (Slurm's ``--signal=...@lead``):
    :data:`CHECKPOINT_SIGNAL_LEAD_S`, or a fifth of a shorter walltime.

    >>> checkpoint_signal_lead_s(3600), checkpoint_signal_lead_s(600)
    (600, 120)
    """
    return int(min(CHECKPOINT_SIGNAL_LEAD_S, CHECKPOINT_SIGNAL_MAX_SHARE * walltime_s))


def signal_lead_option_s(text: str | float) -> int:
    """``--signal-lead`` in whole seconds, as Slurm's ``sig_time`` takes it: seconds or a
    clock duration (:func:`~perfpredict.durations.option_seconds`), at most
    :data:`SLURM_MAX_SIGNAL_LEAD_S`.

    >>> signal_lead_option_s("10:00")
    600
    """
    lead_s = option_seconds("--signal-lead", text)
    if not lead_s.is_integer():
        raise BadInputError(f"--signal-lead must be whole seconds (Slurm's --signal takes "
                            f"no fraction), got {text!r}; give {math.ceil(lead_s)}")
    if lead_s > SLURM_MAX_SIGNAL_LEAD_S:
        raise BadInputError(f"--signal-lead must be at most {SLURM_MAX_SIGNAL_LEAD_S} s (the "
                            f"longest Slurm's --signal takes), got {text!r}")
    return int(lead_s)


def signal_lead_for_job(given_s: int | None, limit_s: float, limit_name: str,
                  chained: bool) -> int | None:
    """The lead the job script writes: ``given_s`` (``--signal-lead``), refused when it
    takes more than :data:`CHECKPOINT_SIGNAL_MAX_SHARE` of ``limit_s``, the shortest
    limit the job may be given (its walltime, or its time-min, named by
    ``limit_name``); else :func:`checkpoint_signal_lead_s` for a ``chained`` run, and
    None (no signal) for one job that is meant to end before its limit.

    >>> signal_lead_for_job(None, 3600, "walltime", chained=False) is None
    True
    >>> signal_lead_for_job(300, 3600, "walltime", chained=False)
    300
    """
    if given_s is None:
        return checkpoint_signal_lead_s(limit_s) if chained else None
    most_s = math.floor(CHECKPOINT_SIGNAL_MAX_SHARE * limit_s)
    if given_s > most_s:
        when = ("as it starts" if given_s >= limit_s else
                f"with {100 * (1 - given_s / limit_s):.0f}% of its time gone")
        # a chained run's walltime is the queue's limit: no smaller risk lengthens it
        longer = ("" if chained else
                  f", or ask for a longer limit (a smaller --kill-risk"
                  f"{', a smaller --time-min-kill-risk' if limit_name == 'time-min' else ''})")
        raise BadInputError(
            f"--signal-lead {given_s} s is more than a fifth of the job's "
            f"{pbs_time(limit_s)} {limit_name}: it would be told to checkpoint {when}; "
            f"give at most {most_s} s{longer}")
    return given_s
