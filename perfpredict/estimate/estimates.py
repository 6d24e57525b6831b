"""Estimates: runtime at a scale, with its interval, speedup, efficiency and breakdown.

Every estimate, one query or a batch of 100k, is computed by one columnar path
(:meth:`LoadedPredictor.columns`): the queries are grouped by the series that answers
them and each group is predicted in one vectorised call. One :class:`Estimate` per query,
with its breakdown and measured scales, is built from those columns only when it is asked
for; ``estimate --input`` writes the columns as they are. The notes of both come from one
function, :func:`estimate_notes`, made once per series for the queries alike in what
they read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from perfpredict.config import redact_url
from perfpredict.counts import counted, is_number, plain, python_number
from perfpredict.deprecation import renamed_keyword
from perfpredict.errors import BadInputError, NotFoundError, PerfPredictError, given
from perfpredict.estimate.breakdown import (
    MachineLookup,
    io_bytes_given,
    law_breakdown,
    recorded_io_exceeds_estimate,
    recorded_io_floor_s,
    roofline_breakdown,
    roofline_notes,
    volume_arrays,
    volumes_exceed_runs,
)
from perfpredict.estimate.lookup import (
    LAYOUT_ERRORS,
    FieldName,
    InlineSeries,
    Match,
    Query,
    SeriesEntries,
    find_series,
    load_artifact,
    scale_per_node,
    stale_layout,
    unknown_app,
)
from perfpredict.figures import doublings
from perfpredict.laws.base import FloatArray
from perfpredict.laws.roofline_terms import VOLUMES
from perfpredict.model.base_estimate import formula, measured_neighbours
from perfpredict.model.entry import SeriesEntry
from perfpredict.model.peers import PeerCurves
from perfpredict.model.runtime import PEER_INTERVAL_MIN_PEERS, PEER_WEIGHT, RuntimeModel, kind_of
from perfpredict.model.series import Series, SeriesKey
from perfpredict.overhead.contexts import SUPERLINEAR_FACTOR
from perfpredict.overhead.features import SeriesContext
from perfpredict.store.handle import StoreLike, store_url_of
from perfpredict.uncertainty.conformal import check_confidence
from perfpredict.utc import utc_text

if TYPE_CHECKING:
    from perfpredict.catalog.entries import SystemSpec
    from perfpredict.estimate.explain import Explanation
    from perfpredict.estimate.untrained import StoreSeries

#: Columns ``estimate --input`` appends to each input row.
BATCH_COLUMNS = ("predicted_runtime_s", "lower_runtime_s", "upper_runtime_s", "speedup",
                 "efficiency", "law", "series", "beyond_measured_range",
                 "below_measured_range", "notes")
#: Every column :meth:`LoadedPredictor.columns` gives, one value per query.
COLUMNS = (*BATCH_COLUMNS, "scale", "overhead_coefficient", "extrapolation_log2",
           "beyond_calibration", "noise_floor", "peer_series", "at_widest_error",
           "volumes_exceed_runs", "recorded_io_exceeds_estimate")
#: The columns an estimate's notes read (:func:`estimate_notes`), beside its series...
NOTE_COLUMNS = ("scale", "extrapolation_log2", "beyond_measured_range",
                "below_measured_range", "peer_series", "beyond_calibration",
                "at_widest_error", "noise_floor", "volumes_exceed_runs",
                "recorded_io_exceeds_estimate")
#: ... and with its query's node count and which roofline volumes it gives (bit i for
#: the i-th of :data:`~perfpredict.laws.roofline_terms.VOLUMES`), all they read of an
#: estimate (the roofline's notes do not depend on how much: :func:`roofline_notes`),
#: and whether it gives an I/O volume, 0 included (:func:`io_bytes_given`).
NOTE_READS = (*NOTE_COLUMNS, "nodes", "roofline_volumes", "io_bytes_given")
_TEXT_COLUMNS = ("law", "series", "notes")
_BOOL_COLUMNS = ("beyond_measured_range", "below_measured_range", "beyond_calibration",
                 "noise_floor", "at_widest_error", "volumes_exceed_runs",
                 "recorded_io_exceeds_estimate")
_INT_COLUMNS = ("peer_series",)
#: How a query is made, for a caller who handed in something else.
QUERY_EXAMPLE = "perfpredict.estimate.Query(app='bert', nodes=64)"


def query_list(queries: Iterable[Query]) -> list[Query]:
    """``queries`` as the list a batch of estimates reads twice (once to check and group
    them, once to make their answers): a generator, ``estimate_many(Query(...) for n in
    nodes)`` as a notebook writes a sweep, or a tuple is taken as it comes. One Query, or
    anything else that holds no queries, is refused saying what to pass, where it was a
    TypeError from deep inside ("object of type 'Query' has no len()"); so is a
    DataFrame of queries, saying how to make its rows queries."""
    if isinstance(queries, Query):
        raise BadInputError("expected queries, as a list of Query, not one Query; pass "
                            "[query], or call estimate(query) for one")
    if hasattr(queries, "to_dict") and hasattr(queries, "columns"):
        # a DataFrame of queries, a notebook's likeliest, iterates as its column names:
        # "expected a Query ..., not a str"
        raise BadInputError("expected queries, as a list of Query, not a "
                            f"{type(queries).__name__}; make one Query per row, its empty cells "
                            "left out: [Query(**row.dropna()) for _, row in frame.iterrows()]")
    if isinstance(queries, (str, bytes, dict)) or not isinstance(queries, Iterable):
        raise BadInputError(f"expected queries, as a list of Query ([{QUERY_EXAMPLE}, "
                            f"...]), not a {type(queries).__name__}")
    return list(queries)


@dataclass
class Estimate:
    """One query's answer, what ``perfpredict estimate --format json`` prints (``as_dict``).

    - ``predicted_runtime_s`` and its interval ``lower_runtime_s`` .. ``upper_runtime_s``,
      which holds the runtime with probability ``confidence`` (0.9: a 90% interval);
    - ``series``, the measured curve that answers (app, system, problem size, variant and
      layout), its ``n_runs`` at ``measured_scales`` (in ``scale_unit``, nodes or ranks);
      ``nodes`` as asked, ``scale`` the same in that unit;
    - ``speedup`` and ``efficiency`` against the smallest measured scale, as ``scaling``
      says: strong, the speedup is the runtime there over the runtime here and the
      efficiency that over the scale ratio; weak, the efficiency is that runtime ratio
      and the speedup Gustafson's scaled speedup (the efficiency times the scale ratio);
    - ``law`` and its ``formula``, the ``overhead_coefficient`` that corrects it, and
      ``breakdown_s``, where the time goes (seconds by part);
    - how far it reaches: ``extrapolation_doublings`` beyond the largest measured scale,
      ``beyond_measured_range``, ``below_measured_range``, ``beyond_calibration``;
    - ``notes``, the sentences that qualify it, as the command prints them.

    >>> e = estimate(None, Query(app="bert", nodes=64))  # the bundled predictor
    >>> round(e.predicted_runtime_s), round(e.lower_runtime_s), round(e.upper_runtime_s)
    (103, 53, 180)
    """

    app: str
    system: str
    problem_size: str
    variant: str
    series: str
    nodes: float
    scale: float
    scale_unit: str
    confidence: float
    predicted_runtime_s: float
    lower_runtime_s: float
    upper_runtime_s: float
    speedup: float
    efficiency: float
    scaling: str  # "strong" or "weak": what speedup and efficiency mean
    law: str
    formula: str
    overhead_coefficient: float
    extrapolation_doublings: float
    beyond_measured_range: bool
    #: Below the smallest measured scale: the laws extrapolated downward, which no
    #: backtest measures, under the interval calibrated between measured scales.
    below_measured_range: bool
    beyond_calibration: bool
    #: Other series of the application and input whose measured speed-up to this scale
    #: the estimate weighs in (:data:`perfpredict.model.runtime.PEER_WEIGHT`).
    peer_series: int
    n_runs: int
    measured_scales: list[float]
    breakdown_s: dict[str, float]
    notes: list[str]
    #: How the estimate was made, step by step, multiplying out to it
    #: (:class:`perfpredict.estimate.explain.Explanation`): given where asked for
    #: (``explain=True``; ``estimate --explain``), else None.
    explanation: Explanation | None = None

    def __repr__(self) -> str:
        # what a notebook shows of estimate(...): the answer, its interval and how many
        # notes qualify it, where the dataclass's repr spelled out the law's formula, the
        # breakdown and every note (2,000 characters for one Castro estimate, the runtime
        # in the middle of it); as_dict() holds them all
        return (f"Estimate(series={self.series!r}, nodes={self.nodes:g}, "
                f"predicted_runtime_s={self.predicted_runtime_s:.4g}, "
                f"lower_runtime_s={self.lower_runtime_s:.4g}, "
                f"upper_runtime_s={self.upper_runtime_s:.4g}, confidence={self.confidence:g}, "
                f"extrapolation_doublings={self.extrapolation_doublings:.2g}, "
                f"n_notes={len(self.notes)})")

    def as_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready data; ``explanation`` only where one was asked for,
        so that the JSON of an estimate without it is as it was."""
        values = asdict(self)
        if self.explanation is None:
            del values["explanation"]
        return values

    def as_csv_row(self) -> dict[str, Any]:
        """The fields as one CSV row (``estimate --format csv``): those that are one value
        each, then ``notes`` joined with "; " as a batch row's are, so that a CSV reader
        does not lose the warnings (beyond the machine, fitted now, not trained since).

        An estimate with its :attr:`explanation` is refused: the explanation is a chain
        of steps and peers, nested, that one row has no cells for, and it would be left
        out without a word."""
        if self.explanation is not None:
            raise BadInputError("an explanation (--explain) is a chain of steps that one CSV "
                                "row cannot hold; ask for it in json (--format json, its "
                                "field 'explanation') or as the table (--format table)")
        flat = {k: v for k, v in self.as_dict().items() if not isinstance(v, (dict, list))}
        return {**flat, "notes": "; ".join(self.notes)}


class Group(NamedTuple):
    """The queries (their indices) that one series answers alike, with the choice's
    notes."""

    match: Match
    indices: np.ndarray


class LoadedPredictor:
    """An artifact ready to answer queries. Series are fitted when first asked for, so
    that loading costs the same for a store of ten series or fifty thousand."""

    def __init__(self, doc: dict[str, Any], origin: str,
                 entries: SeriesEntries | None = None, db_url: str | None = None) -> None:
        from perfpredict import artifact

        if doc.get("kind") != artifact.KIND_RUNTIME:
            raise NotFoundError(f"{origin} holds no runtime predictor")
        self.origin = origin
        self.db_url = db_url  # the store whose runs explain an application not trained on
        #: whether the store's own predictor answers (else the shipped one), and when it
        #: was trained
        self.stored = entries is not None
        self.trained_epoch_s = float(doc.get("created_epoch_s") or 0.0)
        try:
            self.predictor = RuntimeModel.from_dict(doc["predictor"])
            self.entries = entries if entries is not None else InlineSeries.of_document(doc)
            self.trained = doc["training"]
        except LAYOUT_ERRORS as exc:
            raise stale_layout(origin, exc) from exc
        self._contexts: dict[SeriesKey, tuple[Series, SeriesContext]] = {}
        self._peers: dict[str, PeerCurves] = {}
        self._unseen_notes: dict[str, str | None] = {}
        self._store_series: dict[str, StoreSeries] = {}
        self._machines: dict[str, SystemSpec | None] = {}

    def __repr__(self) -> str:
        # what a notebook shows of load_predictor(store): where the predictor came from,
        # what it covers and when it was trained (the default repr said none of it), the
        # store's URL without its password
        store = f", store={redact_url(self.db_url)!r}" if self.db_url is not None else ""
        trained = utc_text(self.trained_epoch_s) if self.trained_epoch_s else "unknown"
        return (f"LoadedPredictor(origin={self.origin!r}{store}, "
                f"n_series={self.trained.get('n_series')}, "
                f"n_applications={self.entries.n_applications}, trained={trained!r})")

    def series_context(self, entry: SeriesEntry) -> tuple[Series, SeriesContext]:
        """The series (its per-scale medians) and the fitted context an entry holds: what
        every prediction for it rests on. Advice extends it with simulated runs to value a
        benchmark before it is run (``advise next-runs``)."""
        if entry.key not in self._contexts:
            try:
                self._contexts[entry.key] = entry.context()
            except LAYOUT_ERRORS as exc:
                raise stale_layout(self.origin, exc) from exc
        return self._contexts[entry.key]

    def peers(self, series: Series) -> PeerCurves:
        """The measured curves of the trained series of ``series``' application: its
        peers among them weigh in beyond its measured range (:mod:`perfpredict.model.peers`).
        Read one application at a time, as the entries are."""
        app = series.key.app
        if app not in self._peers:
            try:
                self._peers[app] = PeerCurves.of(
                    (e.key, e.scale_unit, e.weak, e.scales, e.medians_s)
                    for e in self.entries.of_app(app))
            except LAYOUT_ERRORS as exc:
                raise stale_layout(self.origin, exc) from exc
        return self._peers[app]

    def unseen_runs_note(self, app: str) -> str | None:
        """What an estimate of ``app`` should say when the store holds runs of it that
        this predictor never learned from: runs ingested after ``train`` read the store,
        or, where the store holds no trained predictor and the shipped one answers, any
        but those of the bundled data sets it was trained on. The answer rests on the
        runs as they were (a series' largest measured node count, its level), so the
        user is told to retrain rather than left to read an old curve as the store's.
        None where there are none, or no store. Read once per application."""
        if self.db_url is None:
            return None
        if app not in self._unseen_notes:
            from perfpredict.store.reading import runs_by_batch_checksum, runs_deleted_since

            if self.stored:
                since_s = float(self.trained.get("runs_read_epoch_s")
                                or self.trained_epoch_s)
                n_new = sum(runs_by_batch_checksum(self.db_url, app, since_s).values())
                n_gone = runs_deleted_since(self.db_url, app, since_s)
                n_runs = n_new + n_gone
                note = _store_changed_note(app, since_s, n_new, n_gone)
            else:
                counts = runs_by_batch_checksum(self.db_url, app)
                if counts:  # rarely: the data sets' checksums cost an import
                    from perfpredict import datasets  # type: ignore[attr-defined]

                    shipped = {releases[-1] for releases in datasets.RELEASES.values()}
                    counts = {k: n for k, n in counts.items() if k not in shipped}
                n_runs = sum(counts.values())
                note = (f"answered by the predictor shipped with perfpredict: the store "
                        f"holds {counted(n_runs, 'run')} of {app} but no "
                        "trained predictor of its own; run 'perfpredict train' to learn "
                        "from them")
            self._unseen_notes[app] = note if n_runs else None
        return self._unseen_notes[app]

    def find_series(self, query: Query) -> Match:
        """The series that answers ``query``, and notes about the choice: a series the
        predictor was trained with (:func:`find_series`), else, where none of them
        answers, one of the store's series that it was not trained with, fitted now
        (:meth:`store_series`): a code's first runs answer as soon as they are
        ingested, and ``train`` makes them part of the predictor (the application's own
        correction, its other series as peers)."""
        try:
            try:
                return find_series(self.entries, self.predictor, query, self.db_url)
            except NotFoundError as exc:
                if self.db_url is None:
                    raise
                refused = exc
            untrained = self.store_series(query.app)
            if not untrained.entries:
                if untrained.why_none is not None:
                    raise NotFoundError(f"no trained series for application {query.app!r}: "
                                        f"{untrained.why_none}") from None
                if untrained.stored_apps and not self.entries.of_app(query.app.strip()):
                    # a name neither knows: the store's applications are as likely meant
                    raise unknown_app(query.app, [*self.entries.apps(),
                                                  *untrained.stored_apps]) from None
                raise refused
            match = find_series(untrained.beside(self.entries), self.predictor, query,
                                self.db_url)
        except LAYOUT_ERRORS as exc:
            raise stale_layout(self.origin, exc) from exc
        if not untrained.holds(match.entry):
            return match
        # the application never trained on, such intervals held 0.87 / 0.84 of the runs
        # beyond the cut (VASP's 0.82 / 0.76) in the store-cut backtest, against 0.93
        # trained with (docs/accuracy.md, "A series the predictor was not trained with")
        predictor = (f"this predictor (trained {utc_text(self.trained_epoch_s)})"
                     if self.stored else "the predictor shipped with perfpredict")
        return match._replace(fitted_now=True, notes=[*match.notes, (
            f"fitted now: {predictor} was not trained with this series, so its laws were "
            f"fitted to the store's {counted(match.entry.n_runs, 'run')} of it for this "
            "estimate, the learned correction and the interval are the predictor's, and the "
            "interval may be too narrow; run 'perfpredict train' to learn from them")])

    def store_series(self, app: str) -> StoreSeries:
        """The store's series of ``app`` that the predictor was not trained with, fitted
        now (:func:`perfpredict.estimate.untrained.store_series`); read once per
        application."""
        from perfpredict.estimate.untrained import store_series

        wanted = app.strip().casefold()
        if wanted not in self._store_series:
            assert self.db_url is not None
            self._store_series[wanted] = store_series(self.db_url, app, self.entries)
        return self._store_series[wanted]

    def estimate(self, query: Query, confidence: float = 0.9,
                 explain: bool = False) -> Estimate:
        """The estimate for one query at a whole number of nodes, as a job asks for them
        (``estimate_many`` also answers at the fractional node counts that a series
        measured in ranks reaches, for the points advice plots), with a note where the
        catalog says the machine has fewer nodes (:meth:`machine_nodes`): the laws answer
        at any scale.
        ``explain``: with its :attr:`Estimate.explanation`, the steps it was made in."""
        given(query, Query, QUERY_EXAMPLE).validate()
        if query.nodes % 1:
            raise BadInputError(f"{query.field_name('nodes')} must be a whole number, "
                                f"got {query.nodes:g}")
        return self._estimates([query], confidence, explain)[0]

    def machine(self, system: str) -> SystemSpec | None:
        """The catalog entry of ``system`` whose numbers the roofline and the machine's
        size read: the store's where it has one (``systems add``), else the shipped one,
        which a new user's estimate of a known machine reads too
        (:func:`perfpredict.catalog.lookup.system_entry`); None where neither has one.
        Read once per system, and only by the estimates that need it."""
        if system not in self._machines:
            from perfpredict.catalog.lookup import system_entry

            self._machines[system] = system_entry(self.db_url, system)
        return self._machines[system]

    def machine_nodes(self, system: str) -> int | None:
        """The node count the catalog gives ``system`` (:meth:`machine`); None where it
        gives none."""
        spec = self.machine(system)
        return int(spec.nodes) if spec is not None and spec.nodes else None

    def estimate_many(self, queries: Iterable[Query], confidence: float = 0.9,
                      explain: bool = False) -> list[Estimate]:
        """One :class:`Estimate` per query, in order, built from :meth:`columns`, each
        with the notes :meth:`estimate` gives its query (a node count the machine does
        not have too: a list of queries had it not, where one query and a batch's row
        did); ``explain``: each with its :attr:`Estimate.explanation`. ``queries``: any
        iterable of :class:`Query` (:func:`query_list`). A query refused as bad input is
        named by its index among them: "--ranks-per-node must be a positive number, got
        nan" did not say which of a frame's thousand rows held it."""
        queries = query_list(queries)
        try:
            return self._estimates(queries, confidence, explain)
        except BadInputError as exc:
            if exc.query_index is None or len(queries) == 1:
                raise
            raise type(exc)(f"the query at index {exc.query_index} of the {len(queries)}: "
                            f"{exc.reason}") from None

    def _estimates(self, queries: list[Query], confidence: float,
                   explain: bool) -> list[Estimate]:
        columns, groups, volumes = self._columns(queries, confidence)
        notes = self._notes(queries, columns, groups, volumes, confidence)
        out: list[Estimate | None] = [None] * len(queries)
        for group in groups:
            series, ctx = self.series_context(group.match.entry)
            parts = (self.predictor.point_parts(series, columns["scale"][group.indices], ctx,
                                                self.peers(series)) if explain else None)
            for k, i in enumerate(group.indices.tolist()):
                row = {name: values[i] for name, values in columns.items()}
                result = _make_estimate(queries[i], group.match, series, ctx, self.machine,
                                        row, confidence, list(notes[i]))
                if parts is not None:
                    from perfpredict.estimate.explain import explain as explain_one

                    result.explanation = explain_one(
                        series, ctx, parts, k, result.scale,
                        self.predictor.apply_correction[kind_of(series)], confidence,
                        result.lower_runtime_s, result.upper_runtime_s)
                out[i] = result
        return [e for e in out if e is not None]

    def exceedance(self, query: Query, runtime_s: float) -> float:
        """P(runtime > ``runtime_s``) for ``query``, from the interval model directly.
        ``runtime_s`` must be a positive number of seconds: a negative one or NaN was an
        IndexError from inside the interval model."""
        if not (is_number(runtime_s) and math.isfinite(runtime_s) and runtime_s > 0):
            raise BadInputError(f"runtime_s must be a positive number of seconds, got "
                                f"{runtime_s!r}")
        scales, [group] = self._group([query], 0.5)
        series, ctx = self.series_context(group.match.entry)
        return float(self.predictor.exceedance(series, scales, runtime_s, ctx,
                                               self.peers(series))[0])

    def smallest_tail(self, query: Query) -> float:
        """The smallest P(runtime > a walltime) the calibration errors resolve for
        ``query`` (:meth:`RuntimeModel.smallest_tail`): an :meth:`exceedance` below it
        is an upper bound of this, not a figure."""
        scales, [group] = self._group([query], 0.5)
        series, ctx = self.series_context(group.match.entry)
        return float(self.predictor.smallest_tail(series, scales, ctx,
                                                  self.peers(series))[0])

    def columns(self, queries: Iterable[Query], confidence: float = 0.9
                ) -> dict[str, np.ndarray]:
        """The :data:`COLUMNS` of the estimates for ``queries``, one array each in query
        order: what a batch writes, without an :class:`Estimate` per query (with their
        breakdowns and copies of the measured scales, those took most of the time of a
        100k-query batch). ``notes`` holds, as a tuple, the notes :meth:`estimate` gives
        the query, the one about the store's runs ingested since training included:
        each row says all that qualifies its answer, as a batch's rows are read (one at
        a time, filtered, sorted, split by application, loaded into a spreadsheet) with
        nothing printed beside them, where a line on stderr would be gone with the
        terminal; a row of the batch and the estimate of its query tell the same."""
        queries = query_list(queries)
        columns, groups, volumes = self._columns(queries, confidence)
        columns["notes"] = self._notes(queries, columns, groups, volumes, confidence)
        return columns

    def _notes(self, queries: list[Query], columns: dict[str, np.ndarray],
               groups: list[Group], volumes: dict[str, FloatArray],
               confidence: float) -> np.ndarray:
        """Each query's notes (:func:`estimate_notes`) as a tuple, in query order, the
        catalog's machine size read once per system and only beyond the measured range.
        Made once per series and values of what the notes read (:data:`NOTE_READS`): the
        rows alike in them share one tuple. The benchmark's 100k queries over 200
        series make 23k, 0.3 s of a 5.2 s batch on a loaded machine (docs/performance.md);
        told alike by a dict of the values' tuples (numpy's unique rows, which sort a
        structured view, took about twice as long)."""
        from operator import attrgetter

        notes = np.empty(len(queries), dtype=object)
        read = np.column_stack(
            [columns[name].astype(float) for name in NOTE_COLUMNS]
            + [np.fromiter(map(attrgetter("nodes"), queries), float, len(queries)),
               _volume_bits(volumes), io_bytes_given(queries)])
        sizes: dict[str, int | None] = {}
        for group in groups:
            series, ctx = self.series_context(group.match.entry)
            about = SeriesNotes(group.match, series, ctx,
                                self.predictor.apply_correction[kind_of(series)],
                                None if group.match.fitted_now
                                else self.unseen_runs_note(series.key.app),
                                queries[group.indices[0]].field_name, self.machine)
            system = series.key.system
            slots: dict[tuple[float, ...], int] = {}
            alike = np.fromiter((slots.setdefault(values, len(slots)) for values in
                                 map(tuple, read[group.indices].tolist())),
                                np.int64, group.indices.size)
            made = np.empty(len(slots), dtype=object)
            for k, values in enumerate(slots):
                row = dict(zip(NOTE_READS, values, strict=True))
                if row["beyond_measured_range"] and system not in sizes:
                    sizes[system] = self.machine_nodes(system)
                made[k] = tuple(estimate_notes(about, row, confidence, sizes.get(system)))
            notes[group.indices] = made[alike]
        return notes

    def _columns(self, queries: list[Query], confidence: float
                 ) -> tuple[dict[str, np.ndarray], list[Group], dict[str, FloatArray]]:
        """The :data:`COLUMNS` but the notes, the queries' groups by series, and the
        queries' roofline volumes (:func:`volume_arrays`), which the notes read too."""
        n = len(queries)
        columns = {name: np.empty(n, dtype=object if name in _TEXT_COLUMNS
                                  else bool if name in _BOOL_COLUMNS
                                  else np.int64 if name in _INT_COLUMNS else float)
                   for name in COLUMNS if name != "notes"}  # made apart: _notes
        scales, groups = self._group(queries, confidence)
        volumes = volume_arrays(queries)
        io_given = io_bytes_given(queries)
        for group in groups:
            series, ctx = self.series_context(group.match.entry)
            p = scales[group.indices]
            pred = self.predictor.predict_columns(series, p, confidence, ctx,
                                                  self.peers(series))
            base_s = self.predictor.predict_columns(
                series, np.array([ctx.scale_min]), confidence, ctx).runtime_s[0]
            speedup, efficiency = _speedup_efficiency(series, ctx, pred.runtime_s, p, base_s)
            for name, values in (
                    ("predicted_runtime_s", pred.runtime_s),
                    ("lower_runtime_s", np.maximum(pred.lower_s, 0.0)),
                    ("upper_runtime_s", pred.upper_s), ("speedup", speedup),
                    ("efficiency", efficiency), ("law", pred.law), ("series", series.name),
                    ("beyond_measured_range", p > ctx.scale_max),
                    ("below_measured_range", p < ctx.scale_min), ("scale", p),
                    ("overhead_coefficient", pred.overhead_coefficient),
                    ("extrapolation_log2", pred.extrapolation_log2),
                    ("beyond_calibration", pred.beyond_calibration),
                    ("noise_floor", pred.noise_floor), ("peer_series", pred.peer_series),
                    ("at_widest_error", pred.at_widest_error),
                    ("volumes_exceed_runs", volumes_exceed_runs(
                        series, ctx, self.machine, {name: values[group.indices]
                                      for name, values in volumes.items()},
                        p, pred.runtime_s)),
                    ("recorded_io_exceeds_estimate", recorded_io_exceeds_estimate(
                        series, ctx, self.machine, io_given[group.indices], p, pred.runtime_s))):
                columns[name][group.indices] = values
        return columns, groups, volumes

    def _group(self, queries: list[Query], confidence: float
               ) -> tuple[FloatArray, list[Group]]:
        """Each query's scale in its series' unit, and the queries grouped by the series
        that answers them. The confidence and every query are checked before any is
        predicted, so a bad one fails the batch at once."""
        check_confidence(confidence)
        resolved: dict[tuple[Any, ...], Match] = {}
        by_series: dict[tuple[Any, ...], tuple[Match, list[int]]] = {}
        scales: list[float] = []
        for i, query in enumerate(queries):
            try:
                given(query, Query, QUERY_EXAMPLE).validate()
                wanted = query.series_wanted()
                if wanted not in resolved:
                    resolved[wanted] = self.find_series(query)
                match = resolved[wanted]
                scales.append(query.nodes * scale_per_node(match.entry, query))
            except PerfPredictError as exc:
                exc.query_index = i
                raise
            # by the match's notes too: a query that names no system is answered by the
            # series one naming it would be, but its note names the other series that
            # match it (grouped by series alone, it said the first query's); and by how
            # the query names its fields, which the notes name as it does
            by_series.setdefault((id(match.entry), query.field_name, *match.notes),
                                 (match, []))[1].append(i)
        return np.asarray(scales, dtype=float), [
            Group(match, np.asarray(indices, dtype=np.int64))
            for match, indices in by_series.values()]


def _volume_bits(volumes: dict[str, FloatArray]) -> FloatArray:
    """Which roofline volumes each query gives (:func:`volume_arrays`), as the bits of a
    number (bit i for the i-th of :data:`VOLUMES`), for the notes to read and queries
    alike in them to share."""
    n_queries = len(volumes[VOLUMES[0]])
    return sum(((volumes[volume] != 0) * 2.0 ** bit for bit, volume in enumerate(VOLUMES)),
               np.zeros(n_queries))


def _store_changed_note(app: str, trained_epoch_s: float, n_new: int, n_gone: int) -> str:
    """What an estimate of ``app`` says when the store's runs of it changed since its
    predictor read them at ``trained_epoch_s``: ``n_new`` ingested since, ``n_gone`` it
    learned from deleted since (``runs delete``)."""
    trained = utc_text(trained_epoch_s)
    new = (f"the store holds {counted(n_new, 'run')} of {app} ingested since this predictor "
           f"was trained ({trained}), which it has not learned from")
    if not n_gone:
        return f"{new}; run 'perfpredict train' to use {'it' if n_new == 1 else 'them'}"
    retrain = "run 'perfpredict train' to answer from the runs it holds"
    if not n_new:
        return (f"the store no longer holds {counted(n_gone, 'run')} of {app} that this "
                f"predictor learned from: they were deleted since it was trained "
                f"({trained}); {retrain}")
    return (f"{new}, and no longer holds {counted(n_gone, 'run')} that it learned from, "
            f"deleted since; {retrain}")


def _make_estimate(query: Query, match: Match, series: Series, ctx: SeriesContext,
                   machine: MachineLookup, row: dict[str, Any], confidence: float,
                   notes: list[str]) -> Estimate:
    """One query's estimate from its row of :meth:`LoadedPredictor.columns` and its notes
    (:func:`estimate_notes`), its roofline's breakdown from ``machine``'s entry."""
    runtime_s, scale = float(row["predicted_runtime_s"]), float(row["scale"])
    law_name = str(row["law"])
    # The geometric mean has no parts of its own: its time is split in the proportions of
    # its Amdahl + log member (serial, parallel, communication); weak scaling's in those
    # of Gustafson's law, whose parts mean something there (an Amdahl fit to a flat
    # curve put RELeARN's whole runtime in communication).
    parts_law = law_name if law_name in ctx.laws else (
        "gustafson" if series.weak and "gustafson" in ctx.laws
        else "amdahl_log" if "amdahl_log" in ctx.laws else "amdahl")
    beyond = bool(row["beyond_measured_range"])
    key = series.key
    return Estimate(
        app=key.app, system=key.system, problem_size=key.problem_size, variant=key.variant,
        series=series.name, scale=scale, scale_unit=series.scale_unit,
        # plain numbers, as json writes them: a numpy count or confidence was not
        nodes=python_number(query.nodes), confidence=python_number(confidence),
        predicted_runtime_s=runtime_s,
        lower_runtime_s=float(row["lower_runtime_s"]),
        upper_runtime_s=float(row["upper_runtime_s"]), speedup=float(row["speedup"]),
        efficiency=float(row["efficiency"]), scaling="weak" if series.weak else "strong",
        law=law_name, formula=formula(ctx, law_name, with_drift=beyond and not series.weak,
                                measured_at=measured_neighbours(ctx, scale, not series.weak)),
        overhead_coefficient=float(row["overhead_coefficient"]),
        extrapolation_doublings=max(float(row["extrapolation_log2"]), 0.0),
        beyond_measured_range=beyond, below_measured_range=bool(row["below_measured_range"]),
        beyond_calibration=bool(row["beyond_calibration"]),
        peer_series=int(row["peer_series"]),
        n_runs=match.entry.n_runs, measured_scales=[float(s) for s in ctx.scales],
        breakdown_s=(roofline_breakdown(series, ctx, machine, query, scale, runtime_s)
                     or law_breakdown(ctx.laws[parts_law].params(), parts_law, scale,
                                      runtime_s, match.entry.io_share)),
        notes=notes)


class SeriesNotes(NamedTuple):
    """What the notes of every estimate one series answers read beside the estimate's own
    row: the choice of the series (:attr:`Match.notes`), whether its scaling kind is
    corrected, the store's runs the predictor has not learned from, how its queries name
    their fields; read once per series, not per query."""

    match: Match
    series: Series
    ctx: SeriesContext
    corrected: bool
    unseen_runs: str | None
    #: how the queries name their fields (:attr:`Query.field_name`)
    field_name: FieldName
    #: the catalog entry of a system (:meth:`LoadedPredictor.machine`), for the roofline
    machine: MachineLookup


#: How the note on a scale below every measured one reads after its distance
#: (:func:`below_range_note`).
_BELOW_RANGE = "below the smallest measured scale"


def below_range_note(note: str) -> bool:
    """Whether an estimate's note is the one on a scale below every measured one, which
    advice, planning for a node count there, says in words of its own (the node counts
    measured, and what to measure before budgeting on it)."""
    return note.split(" ", 2)[-1].startswith(_BELOW_RANGE)  # after "1.5 doublings"


def estimate_notes(about: SeriesNotes, row: dict[str, Any], confidence: float,
                   machine_nodes: int | None = None) -> list[str]:
    """The notes of one estimate, in the order it prints them: the choice of its series,
    how far it extrapolates (beyond or below the measured range), the peers weighed in,
    its interval's limits, the roofline's I/O, the runs ingested since training, and a
    node count beyond ``machine_nodes`` (the catalog's; None: not said).

    The one maker of an estimate's notes, one query's (``perfpredict estimate``) and each
    row's of a batch (``estimate --input``'s ``notes`` column), so that they cannot drift
    apart. ``row`` holds the :data:`NOTE_READS` of the estimate and its query, as numbers,
    and the notes read nothing else of either, so that a batch makes them once per
    series for the rows alike in those (:meth:`LoadedPredictor.columns`)."""
    series, ctx = about.series, about.ctx
    scale = float(row["scale"])
    notes = list(about.match.notes)
    beyond = bool(row["beyond_measured_range"])
    if beyond:
        notes.append(f"extrapolating {doublings(row['extrapolation_log2'])} beyond the "
                     f"largest measured scale ({ctx.scale_max:g} {series.scale_unit})")
        if not about.corrected:
            # stores of four series, store-cut: median error -27% (VASP) to -11%
            # (PencilFFTs) on codes that stop scaling (docs/accuracy.md)
            notes.append(f"no learned correction for {kind_of(series)} scaling (too few "
                         "series to learn one, or it did not beat the laws): the estimate "
                         "is the laws' mean, which ran optimistic for codes that stop "
                         "scaling; see what 'perfpredict train' said")
    if ctx.laws_scale_min > ctx.scale_min:
        before = float(ctx.scales[np.searchsorted(ctx.scales, ctx.laws_scale_min) - 1])
        notes.append(f"the laws were fitted to the runs from {ctx.laws_scale_min:g} "
                     f"{series.scale_unit} on: from {before:g} to {ctx.laws_scale_min:g} "
                     f"the runs beat ideal scaling by more than {SUPERLINEAR_FACTOR - 1:.0%} "
                     "(a cache effect, most likely), a step the laws would carry on "
                     "without end")
    if row["below_measured_range"]:
        notes.append(f"{doublings(math.log2(ctx.scale_min / scale))} {_BELOW_RANGE} "
                     f"({ctx.scale_min:g} {series.scale_unit}): the laws "
                     "extrapolated downward, which no backtest measures, and the interval "
                     "is the one calibrated between measured scales; a run nearer this "
                     "scale would tell")
    n_peers = int(row["peer_series"])
    if n_peers:
        # how each peer is read (between its measured scales, fading beyond them) is the
        # user guide's to say: a batch writes this note on a third of its rows
        notes.append(f"{n_peers} other series of {series.key.app} on this input measured "
                     f"from {ctx.scale_max:g} toward {scale:g} {series.scale_unit}: the "
                     "estimate weighs this series' runtime "
                     f"at {ctx.scale_max:g} times their median speed-up {PEER_WEIGHT:.0%} "
                     "(in log space) against the model's own prediction"
                     + (", and narrows the interval as two independent estimates would"
                        if n_peers >= PEER_INTERVAL_MIN_PEERS else ""))
    if row["beyond_calibration"]:
        notes.append("farther than any extrapolation the interval was calibrated on; "
                     "the interval was widened in proportion and may still be too narrow")
    if row["at_widest_error"]:
        notes.append(f"at {100 * confidence:g}% the interval is as wide as the widest error "
                     "the model was calibrated on at this distance: too few calibration "
                     "examples resolve this confidence, so it may be too narrow")
    if row["noise_floor"]:
        notes.append("one run per measured scale says nothing about run-to-run noise: the "
                     "interval is widened to the noise of trained series with repeats (of "
                     f"{series.key.app}'s own where three or more have them)")
    volumes = tuple(volume for bit, volume in enumerate(VOLUMES)
                    if int(row["roofline_volumes"]) >> bit & 1)
    notes.extend(roofline_notes(series, ctx, about.machine, volumes, about.field_name,
                                bool(row["io_bytes_given"])))
    if row["volumes_exceed_runs"]:
        notes.append(f"the volumes given need more time on {series.key.system} than the "
                     "measured runs or this estimate took (the flops at its peak, the memory "
                     "traffic at its bandwidth, the network and I/O bytes at theirs): they "
                     "are not the measured runs'; check that they are the run's, all nodes "
                     "together, and the catalog's numbers ('perfpredict systems show "
                     f"{series.key.system}')")
    floor_s = (recorded_io_floor_s(series, ctx, about.machine, np.array([scale]))
               if row["recorded_io_exceeds_estimate"] else None)
    if floor_s is not None:
        notes.append(f"the I/O the runs recorded needs {float(floor_s[0]):.3g} s at "
                     f"{series.key.system}'s file-system bandwidth at {scale:g} nodes, more "
                     "than this estimate: it is optimistic unless the I/O shrinks at this "
                     "scale")
    if about.unseen_runs is not None:
        notes.append(about.unseen_runs)
    # no run measured a scale the machine does not have: only beyond them can it
    outgrown = None
    if beyond and machine_nodes is not None and series.scale_unit == "nodes":
        from perfpredict.catalog import outgrown_note  # read only where a size is known

        outgrown = outgrown_note(series.key.system, machine_nodes, ctx.scale_max)
    if outgrown:  # the rule advice sweeps by: the entry bounds nothing
        notes.append(outgrown)
    elif beyond and machine_nodes is not None and row["nodes"] > machine_nodes:
        # plain, not :g: a query file's 1e6 (or 1000000) nodes read "1e+06 nodes"
        notes.append(f"{plain(row['nodes'])} nodes are more than {series.key.system} has "
                     f"({machine_nodes:,} in the catalog): no job runs at this scale there")
    return notes


def _speedup_efficiency(series: Series, ctx: SeriesContext, runtime_s: FloatArray,
                        scale: FloatArray, base_runtime_s: float
                        ) -> tuple[FloatArray, FloatArray]:
    """Speedup over the predicted runtime at the smallest measured scale, and parallel
    efficiency: both values from one curve, so the base is 100% by definition. Against
    the measured median there, the model's miss at the base entered every value (172%
    efficiency at the base, issue 14 item 16). For weak scaling, the efficiency is the
    base runtime over the runtime, and the speedup Gustafson's scaled speedup, the work
    done per unit of time against the base's: the efficiency times the scale ratio."""
    ratio = base_runtime_s / runtime_s
    if series.weak:
        return ratio * scale / ctx.scale_min, ratio
    return ratio, ratio * ctx.scale_min / scale


@renamed_keyword("db_url", "store")
def load_predictor(store: StoreLike | None) -> LoadedPredictor:
    """The newest predictor of the store at ``store`` (``sqlite:///path.db``,
    ``postgresql+psycopg://...``, a SQLite file's path, or an open Store), else, when
    the store has none, the bundled one trained on the shipped data. A store that is not
    there is :class:`~perfpredict.errors.NotFoundError`. ``None`` asks for the bundled
    predictor alone; the store the CLI would use is ``perfpredict.config.resolve_db_url()``."""
    url = None if store is None else store_url_of(store)
    doc, origin, entries = load_artifact(url)
    return LoadedPredictor(doc, origin, entries, url)


@renamed_keyword("db_url", "store")
def estimate(store: StoreLike | None, query: Query, confidence: float = 0.9,
             explain: bool = False) -> Estimate:
    """One estimate from the predictor :func:`load_predictor` finds for ``store`` (a
    store open, its URL or a SQLite file's path; None: the bundled predictor) for
    ``query`` (:class:`Query`), its interval holding the runtime with probability
    ``confidence`` (0.9: a 90% interval); see :class:`Estimate` for what it holds,
    runtimes in seconds (``explain``: with its :attr:`~Estimate.explanation`, the steps
    it was made in, which multiply out to it). For many, load the predictor once and
    call its ``estimate_many``."""
    return load_predictor(store).estimate(query, confidence, explain)
