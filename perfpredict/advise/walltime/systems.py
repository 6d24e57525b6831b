"""One walltime advisor per system of a store: what ``train`` fits and ``advise walltime``
uses.

A center's store holds the accounting of several machines. Fitted on them pooled, one
machine's jobs taught the trees and the calibration of another's: a store of the
synthetic Slurm cluster's 530 jobs and KTH's SP2 log (28,476 jobs) advised the Slurm
jobs 744 node-hours at an expected kill share of 8.2% (kill risk 5%; 240 node-hours and
2.4% on the Slurm jobs' own history), one of them a walltime below its own predicted
runtime; and the training end of the latest machine refused every job of an older log.
Each system is advised by trees and a calibration of its own jobs; a system with too
few jobs to learn and calibrate on gets no advisor, and its jobs are refused saying so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict import artifact
from perfpredict.advise.walltime.advisor import HOLDOUT_FRACTION, WalltimeAdvisor, jobs_needed
from perfpredict.counts import counted
from perfpredict.errors import ArtifactError, NotTrainedError, PerfPredictError

if TYPE_CHECKING:
    import pandas as pd

SYSTEMS_ARTIFACT_KIND = "walltime_advisors"
#: Usable jobs (submit time and runtime) a system needs: enough to learn on and to
#: calibrate on the jobs after them (:class:`WalltimeAdvisor`'s holdout, a quarter). At
#: twice MIN_CALIBRATION_JOBS a system of 100-199 jobs passed, and its advisor's refusal
#: ("needs at least 100 ..., the store has 150") failed train and advice for every system.
MIN_SYSTEM_JOBS = jobs_needed()


def usable_jobs(history: pd.DataFrame) -> pd.Series:
    """Per system, its jobs with a submit time and a runtime (what an advisor learns on)."""
    usable = history[history["submit_epoch_s"].notna() & history["runtime_s"].notna()]
    return usable.groupby("system", sort=True)["system"].size()


class SystemAdvisors:
    """A :class:`WalltimeAdvisor` per system, with its parameters shared."""

    def __init__(self, **params: Any) -> None:
        self.params = params

    def fit(self, history: pd.DataFrame) -> SystemAdvisors:
        """An advisor per system with :data:`MIN_SYSTEM_JOBS` usable jobs or more, each
        on that system's jobs alone (``n_jobs_`` of them in all); ``skipped_`` names the
        others and their counts."""
        counts = usable_jobs(history)
        fitted = counts[counts >= self._jobs_needed()]
        self.skipped_ = {str(name): int(n) for name, n in counts.items() if name not in fitted}
        if fitted.empty:
            raise PerfPredictError(
                f"walltime advice needs at least {self._jobs_needed()} past jobs of one system "
                "with submit time and runtime to learn and calibrate on; the store has "
                + (", ".join(f"{n} of {name}" for name, n in counts.items()) or "none")
                + "; ingest scheduler accounting (sacct, swf, pbs) first")
        self.advisors_ = {str(name): WalltimeAdvisor(**self.params).fit(
            history[history["system"] == name]) for name in fitted.index}
        self.n_jobs_ = int(fitted.sum())
        return self

    def advise(self, history: pd.DataFrame, jobs: pd.DataFrame, kill_risk: float = 0.05,
               *, allow_above_request: bool = False,
               time_min_kill_risk: float | None = None) -> list[dict[str, Any]]:
        """One advice row per row of ``jobs``, in their order, each from its system's
        advisor reading its system's history."""
        for name in dict.fromkeys(jobs["system"]):
            if name not in self.advisors_:
                raise NotTrainedError(self._no_advisor(str(name)))
        rows: list[dict[str, Any]] = [{} for _ in range(len(jobs))]
        positions = jobs.reset_index(drop=True)
        for name, mine in positions.groupby("system", sort=False).groups.items():
            advice = self.advisors_[str(name)].advise(
                history[history["system"] == name], positions.loc[mine], kill_risk,
                allow_above_request=allow_above_request,
                time_min_kill_risk=time_min_kill_risk)
            for position, row in zip(mine, advice, strict=True):
                rows[position] = row
        return rows

    def __repr__(self) -> str:
        # what a notebook shows of fit_walltime_advisor(store): the systems advised and
        # the jobs learned from, not the default <... object at 0x...>
        if not hasattr(self, "advisors_"):
            return f"SystemAdvisors({_params_text(self.params)})"
        return (f"SystemAdvisors(systems={sorted(self.advisors_)!r}, n_jobs={self.n_jobs_}, "
                f"skipped={self.skipped_!r})")

    def _jobs_needed(self) -> int:
        """The usable jobs a system needs for an advisor of these parameters."""
        return jobs_needed(self.params.get("holdout_fraction", HOLDOUT_FRACTION))

    def _no_advisor(self, system: str) -> str:
        advised = ", ".join(self.advisors_)
        if system not in self.skipped_:
            return (f"no walltime advisor for system {system!r}: it had no jobs when the "
                    f"advisors were trained (advised systems: {advised}); run "
                    "'perfpredict train' again")
        return (f"no walltime advisor for system {system!r}: its history held "
                f"{counted(self.skipped_[system], 'job')} with submit time and runtime when the "
                f"advisors were trained, {self._jobs_needed()} are needed to learn and calibrate "
                f"on (advised systems: {advised}); ingest more of its accounting and run "
                "'perfpredict train' again")

    # -- persistence (JSON, no pickle) ---------------------------------------------------

    def to_json(self) -> str:
        """Every system's advisor document in one sealed artifact."""
        return artifact.dumps({
            "kind": SYSTEMS_ARTIFACT_KIND, "params": self.params, "skipped": self.skipped_,
            "n_jobs": self.n_jobs_,
            "systems": {name: a.document() for name, a in self.advisors_.items()}})

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> SystemAdvisors:
        """Build the advisors from a verified artifact document."""
        if document.get("kind") != SYSTEMS_ARTIFACT_KIND:
            raise ArtifactError(f"this is a {document.get('kind')!r} artifact, not the "
                                "walltime advisors; run 'perfpredict train' to make them")
        try:
            advisors = cls(**document["params"])
            advisors.skipped_ = {str(k): int(v) for k, v in document["skipped"].items()}
            advisors.n_jobs_ = int(document["n_jobs"])
            advisors.advisors_ = {name: WalltimeAdvisor.from_document(doc)
                                  for name, doc in document["systems"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ArtifactError(f"the walltime advisors' document is damaged ({exc}); run "
                                "'perfpredict train' again") from exc
        return advisors


def _params_text(params: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in params.items())
