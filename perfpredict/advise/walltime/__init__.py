"""Walltime advice: the time limit to request so that at most a chosen share of jobs is killed.

How it works (``advise walltime``):

1. **What is known at submission** (:mod:`.features`): the job's request (time, processors,
   nodes), time of day, and the history of jobs that *ended before it was submitted*: its
   user's, its application's, its account's.
2. **A distribution, not a number** (:mod:`.advisor`, :mod:`.distribution`). One XGBoost
   model per store learns, per job, the quantiles of its log runtime at
   :data:`QUANTILE_LEVELS` (``reg:quantileerror``; the ``survival:aft`` objective, which
   treats TIMEOUT runs as lower bounds, is the alternative ``method="aft"``: on KTH-SP2 it
   was calibrated as well but less tight, see ``docs/walltime.md``). One row per job: an
   earlier design repeated each job once per candidate walltime for a classifier, 45 rows a
   job, which needed 45M rows for a million-job store.
3. **Risk spent where it buys the most.** Walltimes are chosen from round candidates (1 min
   ... 30 days, :data:`CANDIDATE_WALLTIMES_S`). Each job gets the candidate that maximises
   its expected tightness (E[runtime / walltime] over the runs that fit) minus a price times
   its kill probability; one price for all jobs is a Lagrange multiplier, so the risk budget
   goes to jobs whose runtimes are predictable. The price is set, per advised job, on the
   last ``calibration_jobs`` jobs that ended before it was submitted and that the model did
   not train on (at first: the time-ordered holdout, the last ``holdout_fraction`` of the
   store by submit time), as the lowest price that would have killed at most ``kill_risk``
   of them (split-conformal count: ``(kills + 1) / (n + 1) <= kill_risk``). The window
   follows the store as new jobs are ingested, so the calibration tracks drift.
4. **Probabilities that mean what they say** (:mod:`.calibration`). The reported
   ``kill_probability`` is the model's raw probability mapped, by isotonic regression on the
   same window, to the share of such choices that were killed there;
   ``request_kill_probability`` likewise for outrunning the job's own request
   (``request_likely_too_short`` above one half).
5. **Capped at the user's request.** A job is killed at the limit it is submitted with; the
   advice replaces the request only when it is tighter and, unless ``allow_above_request``,
   never exceeds it (a user who asks for 2 h may know something the log does not); jobs that
   overran their own request count as kills in the calibration, so the risk asked for
   includes them. Jobs without a request (NASA-iPSC) are not capped.
6. **Capped at the queue limit.** Where the catalog lists the system's queues, no advice
   exceeds the longest limit of the queues that take the job's node count (a longer job
   may pend forever); the row names the queue, and its kill probability is the one at the
   cap (:mod:`.service` looks the queues up, :mod:`.advisor` caps).

Every submitted job counts, failed and cancelled ones too: at submission nobody knows a job
will fail, and a job killed by its limit is killed whatever it would have done later.
Censored runs (TIMEOUT) are lower bounds: "killed at any walltime below the observed
runtime" is exactly what they tell, and below the request that is all the calibration
needs; above it (``allow_above_request``) their outcome is unknown and they count as
killed.

The modules: :mod:`.features` (the history known at submission), :mod:`.distribution`
(kill probabilities and tightness from the predicted quantiles), :mod:`.calibration` (the
price of a kill and the reported probabilities), :mod:`.advisor` (:class:`WalltimeAdvisor`:
fit, advise, JSON, on one system's jobs), :mod:`.systems` (:class:`SystemAdvisors`, one
advisor per system of a store), :mod:`.service` (what ``train`` and the CLI call on a
store).

Example::

    advisors = fit_walltime_advisor(store)
    rows = advisors.advise(history, jobs, kill_risk=0.05)   # DataFrames of runs
"""

from perfpredict._listing import listing
from perfpredict.advise.walltime.advisor import ARTIFACT_KIND, WalltimeAdvisor, slurm_time
from perfpredict.advise.walltime.calibration import KILL_PRICES, MIN_CALIBRATION_JOBS
from perfpredict.advise.walltime.distribution import CANDIDATE_WALLTIMES_S, QUANTILE_LEVELS
from perfpredict.advise.walltime.service import (
    WalltimeAdvice,
    advise_walltime,
    fit_walltime_advisor,
    jobs_frame,
    load_walltime_advisor,
    read_jobs,
    save_walltime_advisor,
    summarize,
)
from perfpredict.advise.walltime.systems import SYSTEMS_ARTIFACT_KIND, SystemAdvisors

__all__ = ["ARTIFACT_KIND", "CANDIDATE_WALLTIMES_S", "KILL_PRICES", "MIN_CALIBRATION_JOBS",
           "QUANTILE_LEVELS", "SYSTEMS_ARTIFACT_KIND", "SystemAdvisors", "WalltimeAdvice",
           "WalltimeAdvisor", "advise_walltime",
           "fit_walltime_advisor", "jobs_frame", "load_walltime_advisor", "read_jobs",
           "save_walltime_advisor", "slurm_time", "summarize"]
__dir__ = listing(globals(), __all__)
