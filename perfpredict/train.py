"""Training: the store's runs -> a sealed runtime-predictor artifact, saved in the store.

The artifact carries the learned predictor and, for every series with two or more
measured scales, its measured medians and fitted law parameters, so that an estimate
needs neither the runs nor the training libraries.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

from perfpredict import __version__, artifact
from perfpredict._listing import listing
from perfpredict.deprecation import renamed_keyword
from perfpredict.errors import BadInputError, NotTrainedError
from perfpredict.model.entry import SeriesEntry
from perfpredict.model.fit import HybridPredictor, strong_applications, too_few_applications
from perfpredict.model.runtime import kind_of
from perfpredict.model.series import (
    Series,
    build_series,
    unstudied_jobs,
    unstudied_note,
    why_no_training_series,
)
from perfpredict.store.handle import Store, takes_store

#: Fewest scheduler jobs (with submit times) worth fitting a walltime advisor on.
MIN_WALLTIME_JOBS = 200
#: Most strong-scaling series per application, on average, of a store shaped like a
#: center's (:meth:`TrainReport.could_learn_with_bundled`)
FEW_SERIES_PER_APPLICATION = 2
__all__ = ["TrainReport", "train"]
__dir__ = listing(globals(), __all__)


@dataclass
class TrainReport:
    """What :func:`train` did, what ``perfpredict train --format json`` prints
    (``as_dict``): ``n_runs`` read, ``n_series`` the predictor can estimate (of which
    ``n_series_learned_from`` taught it), per scaling kind ("strong", "weak") the
    ``base_law``, whether its learned correction applies (``apply_correction``) and what
    its intervals were calibrated on (``calibrated_by``); the saved artifact's
    ``artifact_sha256``, and the walltime advisor's jobs and systems. Where nothing could
    be trained, ``untrained_because`` says why and what would train one."""

    n_runs: int
    n_series: int = 0
    n_series_learned_from: int = 0
    base_law: dict[str, str] | None = None
    apply_correction: dict[str, bool] | None = None
    #: per scaling kind, what its intervals were calibrated on ("application", "series"),
    #: and how many series of the kind (with 3+ scales) taught the predictor, not
    #: counting those it was only calibrated on
    calibrated_by: dict[str, str] | None = None
    n_series_by_kind: dict[str, int] | None = None
    #: fewest series of a kind for its learned correction to apply
    min_series_for_correction: int = 0
    metrics: dict[str, float] | None = None
    artifact_sha256: str | None = None
    walltime_jobs: int = 0  # jobs the walltime advisor was fitted on (0: not fitted)
    #: systems with a walltime advisor of their own, and those with too few jobs for one
    walltime_systems: list[str] = field(default_factory=list)
    walltime_skipped: dict[str, int] = field(default_factory=dict)
    #: with ``--with-bundled``: the bundled data sets trained on beside the store, and
    #: their runs (in ``n_runs`` too); None without it
    bundled_datasets: list[str] | None = None
    #: the bundled data sets borrowed from, for want of applications in the store
    #: (:func:`too_few_applications`): the intervals calibrated on them too, half of
    #: strong scaling's correction and all of weak scaling's learned with them (all of
    #: it, and the slope drift, in a store of weak scaling alone); None: not so
    borrowed_datasets: list[str] | None = None
    n_runs_bundled: int = 0
    #: the store's own strong-scaling applications with a series of 3+ scales
    n_strong_applications: int = 0
    #: the applications that learned half of their correction from their own series
    #: alone (eight or more of them, beside other applications)
    own_correction_applications: list[str] | None = None
    #: the dask workers the runtime predictor was trained on (``--dask``), on whose
    #: number it depends (:func:`perfpredict.distributed.local_workers`); None: trained
    #: in this process
    dask_workers: int | None = None
    #: why no runtime predictor was trained, and what would train one; None: trained
    untrained_because: str | None = None
    #: completed scheduler jobs no series takes (no problem size or variant), and their
    #: formats (:func:`perfpredict.model.series.unstudied_jobs`); counted where the runs
    #: are read in this process: not by a ``dask`` training that fits no walltime advisor
    n_unstudied_jobs: int = 0
    unstudied_formats: list[str] = field(default_factory=list)
    #: with ``app``: the applications the store's predictor before this one had series
    #: of and this one has none of (its series fitted at each estimate from now on)
    replaced_applications: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def __repr__(self) -> str:
        # what a notebook shows of train(...): how much it learned from and how well,
        # where the dataclass's repr spelled out every field (900 characters, the
        # checksum and the per-kind settings among them); as_dict() holds them all
        metrics = {k: float(f"{v:.3g}") for k, v in (self.metrics or {}).items()}
        return (f"TrainReport(n_runs={self.n_runs}, n_series={self.n_series}, "
                f"n_series_learned_from={self.n_series_learned_from}, metrics={metrics}, "
                f"walltime_jobs={self.walltime_jobs}, "
                f"borrowed_datasets={self.borrowed_datasets})")

    def headline(self) -> str:
        """The summary's first line: what was trained, on how many runs. A store of
        scheduler accounting alone trains the walltime advisor and no runtime predictor,
        and "Trained on 28476 runs." read as if the runtime predictor had learned from
        them, the line after it saying otherwise. (With neither trained, :func:`train`
        raises instead of reporting.)"""
        if self.artifact_sha256 is not None:
            return f"Trained on {self.n_runs} runs."
        return (f"Read {self.n_runs} runs: trained the walltime advisor only, no runtime "
                "predictor.")

    def unstudied_note(self) -> str | None:
        """What a trained report says of the completed scheduler jobs no series takes:
        a center that ingested its accounting beside a few benchmark tables would
        otherwise not know why those jobs taught no runtime."""
        return unstudied_note(self.n_unstudied_jobs, self.unstudied_formats)

    def correction_state(self, kind: str) -> str:
        """Whether the learned correction applies to scaling kind ``kind``, and if not,
        why: too few series of the kind to learn it from, or it did not beat the plain
        base on them (cross-fitted). With too few series to judge it, a correction half
        borrowed from the bundled data sets applies unjudged
        (:meth:`perfpredict.model.fit.HybridPredictor._correction_trees`), and says so:
        its nested-extrapolation error on the store's few series may be above the law's."""
        if self.correction_applies(kind):
            if self.too_few_series(kind):
                return (f"on, half of it borrowed and unjudged (only {self.n_series_of(kind)} "
                        f"series, {self.min_series_for_correction} needed to judge it)")
            return "on"
        if self.too_few_series(kind):
            return (f"off (only {self.n_series_of(kind)} series, "
                    f"{self.min_series_for_correction} needed: predictions are the base "
                    "law's)")
        return "off (did not beat the law)"

    def correction_applies(self, kind: str) -> bool:
        return bool(self.apply_correction and self.apply_correction.get(kind))

    def n_series_of(self, kind: str) -> int:
        """Series of scaling kind ``kind`` (3+ scales) the predictor learned from."""
        return (self.n_series_by_kind or {}).get(kind, 0)

    def too_few_series(self, kind: str) -> bool:
        """Whether the store held some series of scaling kind ``kind`` but too few to
        learn a correction for them."""
        return 0 < self.n_series_of(kind) < self.min_series_for_correction

    def could_borrow_correction(self) -> bool:
        """Whether strong-scaling series went without a correction for want of series,
        half of one neither borrowed (``--no-borrow-bundled``) nor learned on the bundled
        data sets (``--with-bundled``): in store-cut backtests of stores of four series
        of one data set, the half borrowed by default lowered the MAPE in 19 of 20 (data
        set, split) cells and tied the last (docs/accuracy.md, "Stores of a few series")."""
        return (self.bundled_datasets is None and self.too_few_series("strong")
                and not self.correction_applies("strong"))

    def could_borrow_applications(self) -> bool:
        """Whether the strong-scaling correction applies and was learned from a few
        applications, two or more but fewer than the 8 that calibrate intervals on their
        own, the bundled data sets not trained on: such a correction carries one code's
        saturation to another, and by default only half of it is learned with the bundled
        data sets. In five store-cut backtests of three seeds of a store of the four HPC
        data sets (six applications), training on them in full (``--with-bundled``)
        lowered the extrapolation MAPE from 20.5% to 20.2%, beating the best single law
        on all four data sets instead of three, and raised the few-shot MAPE from 20.7%
        to 21.4% (docs/accuracy.md, "With the bundled data sets in training")."""
        return (self.bundled_datasets is None and self.correction_applies("strong")
                and 1 < self.n_strong_applications < self.min_series_for_correction)

    def could_learn_with_bundled(self) -> bool:
        """Whether the store learned from itself alone, holding 8 or more strong-scaling
        applications, but from FEW_SERIES_PER_APPLICATION series of each or fewer on
        average, the bundled data sets not trained on: a center's store of a dozen codes
        each scaled once or twice, where the parts that carry stores of many series (an
        application's own half of the correction, peer curves) have little to learn
        from. In store-cut backtests of such stores drawn from five data sets (MLPerf
        Training, VASP, CP2K, Castro and RELeARN; ten draws of one or two series of each
        of nine strong-scaling applications), training on the other bundled data sets in
        full (``--with-bundled``) lowered the pooled MAPE from 41.9% to 35.3%
        (extrapolation) and 40.7% to 33.7% (few-shot) with two series per application;
        with one it brought the 90% intervals from holding 0.76-0.78 of the runs to
        0.94-0.96, the MAPE 35.6% to 37.1% and 38.0% to 35.8% (docs/accuracy.md, "Stores
        shaped like a center's")."""
        n_applications = self.n_strong_applications
        return (self.bundled_datasets is None and self.borrowed_datasets is None
                and n_applications >= self.min_series_for_correction
                and self.n_series_of("strong") <= FEW_SERIES_PER_APPLICATION * n_applications)

    def could_borrow_for_weak_scaling(self) -> bool:
        """Whether weak-scaling series were learned from beside fewer than the 8
        strong-scaling applications that calibrate on their own, the bundled data sets
        neither trained on nor borrowed from (``--no-borrow-bundled``; borrowing, weak
        scaling learns its correction with them:
        :meth:`perfpredict.model.fit.HybridPredictor._borrows_wholly`). The two kinds
        share the correction trees, and weak scaling learns from strong scaling's many
        examples: RELeARN scored 5.1% MAPE in the acceptance store (its 90% intervals
        holding 0.96-1.0 of its runs), but in store-cut backtests learning from the store
        alone 19.2% beside no strong scaling (coverage 0.38) and 20.1% / 26.2% beside
        Castro (extrapolation / few-shot; 0.14 / 0.17), against 6.2% (1.0) and 7.9% /
        8.0% (0.99) borrowing (seeds 0-2; docs/accuracy.md, "Weak scaling in a store of
        few applications")."""
        return (self.bundled_datasets is None and self.borrowed_datasets is None
                and self.n_series_of("weak") > 0
                and self.n_strong_applications < self.min_series_for_correction)

    def strong_calibrated_by_series(self) -> bool:
        """Whether strong-scaling series were trained on but too few applications of them
        to calibrate their intervals by application (leaving applications out), the
        bundled data sets not borrowed to make up for it (``--no-borrow-bundled``):
        such intervals held 0.46-0.83 of the test runs beyond the measured range in
        store-cut backtests of stores of one HPC data set (docs/accuracy.md)."""
        return bool(self.calibrated_by and self.calibrated_by.get("strong") == "series"
                    and self.n_series_of("strong") > 0)


def series_entries(series_list: list[Series]) -> list[dict[str, Any]]:
    """What an estimate needs to know about each series with two or more measured
    scales (:class:`SeriesEntry`, as JSON), all series' laws fitted at once."""
    return [entry.to_dict() for entry in SeriesEntry.each_of(series_list)]


def build_artifact(series_list: list[Series], n_runs: int,
                   predictor: HybridPredictor | None = None,
                   client: Any | None = None,
                   borrowed_series: list[Series] | None = None,
                   runs_read_epoch_s: float | None = None) -> dict[str, Any]:
    """Fit the hybrid on ``series_list`` (on ``client``'s dask cluster, when given;
    borrowing from ``borrowed_series``, :meth:`HybridPredictor.fit`) and pack it with
    the series' entries. ``runs_read_epoch_s``, when the runs were read from the store
    (default: now), tells an estimate which runs ingested since the predictor has not
    learned from (:meth:`perfpredict.estimate.estimates.LoadedPredictor.unseen_runs_note`)."""
    runs_read_epoch_s = time.time() if runs_read_epoch_s is None else runs_read_epoch_s
    predictor = predictor or HybridPredictor()
    predictor.fit(series_list, client=client, borrowed_series=borrowed_series)
    entries = series_entries(series_list)
    fingerprint = hashlib.sha256(json.dumps(
        [[e["key"], e["scales"], e["medians_s"]] for e in entries]).encode()).hexdigest()
    training = {"n_runs": n_runs, "n_series": len(entries), "data_fingerprint": fingerprint,
                "runs_read_epoch_s": runs_read_epoch_s}
    if client is not None:  # the trees depend on the number of workers
        training["dask_workers"] = len(client.scheduler_info()["workers"])
    return artifact.seal({
        "kind": artifact.KIND_RUNTIME, "perfpredict_version": __version__,
        "created_epoch_s": time.time(), "training": training,
        "predictor": predictor.model_.to_dict(), "series": entries,
    })


def _bundled_series(store,  # type: ignore[no-untyped-def]
                    stored: list[Series]) -> tuple[list[Series], list[str]]:
    """The series of the bundled data sets that training on ``stored`` leaves out, and
    the names of the data sets they come from: those of the data sets ``store`` does not
    hold, but those whose key a stored series has (a copy ingested from elsewhere); and
    of a data set it holds (in any release), the applications ``stored`` has none of,
    which ``train --app`` left out (the held copy's series of a trained application are
    the store's own; borrowed as well they would count twice). A data set none of whose
    series is left out is not named: a store moved by ``runs export`` and ``ingest csv``
    holds the bundled runs from its export, and ``train`` said it borrowed them."""
    # installed from datasets/ (pyproject's package-dir), which mypy does not map
    from perfpredict import datasets  # type: ignore[attr-defined]

    held = set(datasets.releases_in(store))  # in any release
    keys, apps = {s.key for s in stored}, {s.key.app for s in stored}
    found, names = [], []
    for name in datasets.NAMES:
        mine = [s for s in datasets.series([name]) if s.key not in keys
                and (name not in held or s.key.app not in apps)]
        if mine:
            found += mine
            names.append(name)
    return found, names


def _train_runtime(store, series_list: list[Series],  # type: ignore[no-untyped-def]
                   n_runs: int, with_bundled: bool, borrow_bundled: bool,
                   runs_read_epoch_s: float, client: Any | None = None) -> TrainReport:
    """Fit and save the runtime predictor when some series has three or more scales (on
    ``client``'s dask cluster, when given), from the runs read at ``runs_read_epoch_s``."""
    from perfpredict.store.artifacts import save_artifact

    report = TrainReport(n_runs=n_runs,
                         n_strong_applications=len(strong_applications(series_list)))
    if with_bundled:
        bundled, report.bundled_datasets = _bundled_series(store, series_list)
        report.n_runs_bundled = sum(int(s.runtime_s.size) for s in bundled)
        report.n_runs += report.n_runs_bundled
        series_list = series_list + bundled
    borrowed: list[Series] = []
    if borrow_bundled and not with_bundled and too_few_applications(series_list):
        borrowed, report.borrowed_datasets = _bundled_series(store, series_list)
    if any(s.scales.size >= 3 for s in series_list):
        doc = save_artifact(store, build_artifact(series_list, report.n_runs, client=client,
                                                  borrowed_series=borrowed,
                                                  runs_read_epoch_s=runs_read_epoch_s))
        predictor = doc["predictor"]
        report.n_series = doc["training"]["n_series"]
        report.dask_workers = doc["training"].get("dask_workers")
        report.n_series_learned_from = predictor["n_series"]
        report.base_law = {kind: predictor["base"] for kind in predictor["apply_correction"]}
        report.apply_correction = predictor["apply_correction"]
        report.calibrated_by = predictor["calibrated_by"]
        report.own_correction_applications = sorted(predictor["app_correction_trees"])
        report.n_series_by_kind = {kind: sum(1 for s in series_list if kind_of(s) == kind
                                             and s.scales.size >= 3)
                                   for kind in predictor["apply_correction"]}
        report.min_series_for_correction = predictor["min_series_for_calibration"]
        report.metrics = predictor["metrics"]
        report.artifact_sha256 = doc["sha256"]
    return report


@renamed_keyword("apps", "app")
@takes_store
def train(store: Store, app: str | list[str] | None = None,
          dask: str | None = None, with_bundled: bool = False,
          borrow_bundled: bool = True) -> TrainReport:
    """Train on the store's runs (optionally only those of ``app``, one application's
    name or several; ``apps``, its name before, is deprecated) and save the artifacts there:
    the runtime predictor when some series has three or more scales, and the walltime
    advisor when the store holds scheduler jobs with submit times.

    ``dask``, a scheduler address or ``"local"``, trains the runtime predictor on
    dask.distributed (see :mod:`perfpredict.distributed`); None trains in this process.
    ``with_bundled`` trains the runtime predictor on the public data sets shipped with
    perfpredict too (whatever ``app`` says), without storing them: a store with a few
    runs of a code borrows how other codes scaled, which its own runs cannot show. A data
    set the store holds, or a bundled series whose key a stored one has, counts once.
    Without it, ``borrow_bundled`` borrows from the bundled data sets when the store has
    too few strong-scaling applications to calibrate its intervals on applications left
    out (:func:`perfpredict.model.fit.too_few_applications`): they calibrate the
    intervals too and teach half of the correction, the rest of the predictor the
    store's own.
    """
    from perfpredict.store.artifacts import trained_applications
    from perfpredict.store.queries import (
        count_submitted_jobs,
        named_apps,
        resolved_app_names,
        runs_frame,
    )

    if dask is not None and not isinstance(dask, str):  # was "no attribute 'partition'"
        raise BadInputError(f"dask must be a scheduler's address or 'local', as text "
                            f"('tcp://host:8786', 'local:4'), not {dask!r}")
    if app is not None and not named_apps(app):
        # app=runs.app[mask].unique() that came out empty trained every application and
        # replaced the store's predictor with that
        raise BadInputError("app names no application (an empty collection); leave it out "
                            "(None) to train on every application")
    # as every command finds an application (BERT is the store's bert), before a dask
    # cluster starts for a name the store does not hold
    app = resolved_app_names(store, app)
    before = trained_applications(store.url) if app else []  # [] trains every one
    frame = None
    read_epoch_s = time.time()  # before the read: a file ingested while it trains is unseen
    if dask is None:
        frame = runs_frame(store, app=app)
        report = _train_runtime(store, build_series(frame), len(frame), with_bundled,
                                borrow_bundled, read_epoch_s)
    else:
        from perfpredict.distributed import dask_training, read_series

        with dask_training(dask) as client:
            report = _train_runtime(store, *read_series(client, store.url, app),
                                    with_bundled, borrow_bundled, read_epoch_s,
                                    client=client)
    if before and report.artifact_sha256 is not None:
        now = {name.casefold() for name in trained_applications(store.url)}
        report.replaced_applications = [a for a in before if a.casefold() not in now]
    n_jobs = count_submitted_jobs(store, app=app)
    if frame is None and (n_jobs >= MIN_WALLTIME_JOBS or report.artifact_sha256 is None):
        # the walltime advisor is fitted, and why nothing else was said, in this process
        frame = runs_frame(store, app=app)
    if frame is not None:
        report.n_unstudied_jobs, report.unstudied_formats = unstudied_jobs(frame)
    if report.artifact_sha256 is None:
        report.untrained_because = why_no_training_series(frame)
    if n_jobs >= MIN_WALLTIME_JOBS:
        from perfpredict.advise.walltime import SystemAdvisors, save_walltime_advisor
        from perfpredict.advise.walltime.systems import MIN_SYSTEM_JOBS, usable_jobs

        counts = usable_jobs(frame)
        if (counts >= MIN_SYSTEM_JOBS).any():
            advisors = SystemAdvisors().fit(frame)
            save_walltime_advisor(store, advisors)
            report.walltime_jobs = advisors.n_jobs_
            report.walltime_systems = sorted(advisors.advisors_)
            report.walltime_skipped = advisors.skipped_
        else:
            report.walltime_skipped = {str(k): int(v) for k, v in counts.items()}
    if report.artifact_sha256 is None and not report.walltime_jobs:
        jobs = (f"the store holds {report.n_runs} runs, fewer than {MIN_WALLTIME_JOBS} of "
                "them scheduler jobs with submit times, and " if report.n_runs else "")
        raise NotTrainedError(f"nothing to train on: {jobs}{report.untrained_because}")
    return report
