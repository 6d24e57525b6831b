"""Advice on top of the estimates: what to request of the scheduler, and why.

- :mod:`.plan`: ``advise_plan(store, PlanRequest(app=...))``, the node count, walltime,
  node-hours and job-script directives of ``perfpredict advise``;
- :mod:`.walltime`: ``advise_walltime(store, "jobs.csv", kill_risk=0.05)``, walltimes for
  jobs about to be submitted (``perfpredict advise walltime``);
- :mod:`.next_runs`: ``plan_next_runs(store, request)``, the benchmark runs that narrow a
  prediction the most within a budget (``perfpredict advise next-runs``).

Each is imported when first named (``perfpredict.advise.plan``), not with this package:
a plain estimate imports this package for none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict._imports import lazy_attribute
from perfpredict._listing import listing

if TYPE_CHECKING:
    from perfpredict.advise import next_runs as next_runs
    from perfpredict.advise import plan as plan
    from perfpredict.advise import walltime as walltime

__all__ = ["next_runs", "plan", "walltime"]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, name, {}, __all__)


__dir__ = listing(globals(), __all__)
