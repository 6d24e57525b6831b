"""Estimates: runtime at a scale, with its interval, speedup, efficiency and breakdown.

An estimate reads one artifact (the store's newest trained predictor, else the one
shipped in ``perfpredict/models``) and nothing else: no runs, no SQLAlchemy for a SQLite
store, no pandas, scikit-learn, xgboost or matplotlib.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from perfpredict import artifact
from perfpredict.errors import ArtifactError, BadInputError, NotFoundError
from perfpredict.laws import LAWS
from perfpredict.laws.base import FloatArray
from perfpredict.overhead.features import SeriesContext
from perfpredict.predictor import HybridPredictor, Prediction
from perfpredict.series import Series, SeriesKey

BUNDLED_ARTIFACT = "predictor.json"
_Num = TypeVar("_Num", float, FloatArray)


@dataclass
class Query:
    """What a user asks: an application at a node count, optionally narrowed down."""

    app: str
    nodes: float
    system: str | None = None
    problem_size: str | None = None
    variant: str | None = None
    ranks_per_node: float | None = None
    threads_per_rank: float | None = None
    io_bytes: float | None = None

    def validate(self) -> None:
        if not self.app:
            raise BadInputError("the application name is empty; pass --app NAME")
        for name in ("nodes", "ranks_per_node", "threads_per_rank"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise BadInputError(f"{name.replace('_', '-')} must be a positive number, "
                                    f"got {value:g}")
        if self.io_bytes is not None and not (math.isfinite(self.io_bytes) and self.io_bytes >= 0):
            raise BadInputError(f"io-bytes must be zero or more, got {self.io_bytes:g}")


@dataclass
class Estimate:
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
    beyond_calibration: bool
    n_runs: int
    measured_scales: list[float]
    breakdown_s: dict[str, float]
    notes: list[str]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class SeriesEntries(Protocol):
    """A trained predictor's series entries: in its document (a file), or in rows of the
    store read one application at a time (:class:`perfpredict.store.artifacts.StoredSeries`)."""

    def of_app(self, app: str) -> list[dict[str, Any]]: ...

    def apps(self) -> list[str]: ...


class InlineSeries:
    """The entries of an artifact document that holds them all."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self._by_app: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:
            self._by_app.setdefault(SeriesKey(*entry["key"]).app.casefold(), []).append(entry)

    def of_app(self, app: str) -> list[dict[str, Any]]:
        return self._by_app.get(app.casefold(), [])

    def apps(self) -> list[str]:
        return sorted({SeriesKey(*e["key"]).app for entries in self._by_app.values()
                       for e in entries})


def _stale_layout(origin: str, exc: Exception) -> ArtifactError:
    """Intact and checksummed, but written for another layout of the same format version
    (a stale file): refused rather than answered wrongly."""
    return ArtifactError(
        f"the model artifact from {origin} does not have the layout this perfpredict "
        f"reads ({type(exc).__name__}: {exc}); retrain with 'perfpredict train'")


_LAYOUT_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


class LoadedPredictor:
    """An artifact ready to answer queries. Series are fitted when first asked for, so
    that loading costs the same for a store of ten series or fifty thousand."""

    def __init__(self, doc: dict[str, Any], origin: str,
                 entries: SeriesEntries | None = None) -> None:
        if doc.get("kind") != artifact.KIND_RUNTIME:
            raise NotFoundError(f"{origin} holds no runtime predictor")
        self.origin = origin
        try:
            self.predictor = HybridPredictor.from_dict(doc["predictor"])
            self.entries = entries if entries is not None else InlineSeries(doc["series"])
            self.trained = doc["training"]
        except _LAYOUT_ERRORS as exc:
            raise _stale_layout(origin, exc) from exc
        self._contexts: dict[tuple[str, ...], tuple[Series, SeriesContext]] = {}

    def series_context(self, entry: dict[str, Any]) -> tuple[Series, SeriesContext]:
        """The series (its per-scale medians) and the fitted context an entry holds: what
        every prediction for it rests on. Advice extends it with simulated runs to value a
        benchmark before it is run (``advise next-runs``)."""
        key = tuple(entry["key"])
        if key not in self._contexts:
            try:
                self._contexts[key] = _context(entry)
            except _LAYOUT_ERRORS as exc:
                raise _stale_layout(self.origin, exc) from exc
        return self._contexts[key]

    def find_series(self, query: Query) -> tuple[dict[str, Any], list[str]]:
        """The series that answers ``query``, and notes about the choice."""
        def same(a: str, b: str) -> bool:
            return a.casefold() == b.casefold()

        try:
            found = [(SeriesKey(*e["key"]), e) for e in self.entries.of_app(query.app)]
        except _LAYOUT_ERRORS as exc:
            raise _stale_layout(self.origin, exc) from exc
        if not found:
            apps = self.entries.apps()
            # Matched without case, as the lookup above is: "LULESH2" suggests "lulesh".
            by_folded = {name.casefold(): name for name in apps}
            close = [by_folded[name] for name in difflib.get_close_matches(
                query.app.casefold(), list(by_folded), n=3, cutoff=0.5)]
            hint = f"; did you mean {', '.join(close)}?" if close else (
                f"; known applications: {', '.join(apps[:12])}{' ...' if len(apps) > 12 else ''}")
            raise NotFoundError(f"no trained series for application {query.app!r}{hint} "
                                "(ingest its runs and run 'perfpredict train')")
        for label, part, wanted in (("system", "system", query.system),
                                    ("problem size", "problem_size", query.problem_size),
                                    ("variant", "variant", query.variant)):
            if wanted is None:
                continue
            # an exact label wins over labels that merely contain it
            narrowed = ([(k, e) for k, e in found if same(getattr(k, part), wanted)]
                        or [(k, e) for k, e in found
                            if wanted.casefold() in getattr(k, part).casefold()])
            if not narrowed:
                options = sorted({getattr(k, part) for k, _ in found})
                raise NotFoundError(f"{query.app} has no runs with {label} {wanted!r}; "
                                    f"measured: {'; '.join(options[:10])}")
            found = narrowed
        for part, wanted_num in (("ranks_per_node", query.ranks_per_node),
                                 ("threads_per_rank", query.threads_per_rank)):
            if wanted_num is None:
                continue
            narrowed = [(k, e) for k, e in found
                        if getattr(k, part) in ("", _num_text(wanted_num))]
            if narrowed:
                found = narrowed
        # Prefer the best-measured series: most scales, then most runs.
        found.sort(key=lambda ke: (len(ke[1]["scales"]), ke[1]["n_runs"]), reverse=True)
        key, entry = found[0]
        notes = []
        if len(found) > 1:
            notes.append(f"{len(found)} series match; using the best measured one "
                         "(narrow with --system / --problem-size / --variant)")
        warning = self.predictor.thin_calibration(entry["weak"])
        if warning:
            notes.append(warning)
        new_app = self.predictor.new_app_note(key.app)
        if new_app:
            notes.append(new_app)
        return entry, notes

    def estimate(self, query: Query, confidence: float = 0.9) -> Estimate:
        return self.estimate_many([query], confidence)[0]

    def estimate_many(self, queries: list[Query], confidence: float = 0.9) -> list[Estimate]:
        """Estimates for many queries, predicted series by series in one vectorised call
        each (a batch of 100k queries takes seconds, not hours)."""
        out: list[Estimate | None] = [None] * len(queries)
        scales, groups = self._group(queries, confidence)
        for entry, notes, indices in groups:
            series, ctx = self.series_context(entry)
            preds = self.predictor.predict(series, scales[indices], confidence, ctx)
            for i, pred in zip(indices.tolist(), preds, strict=True):
                out[i] = _make_estimate(queries[i], entry, series, ctx, pred, float(scales[i]),
                                        confidence, list(notes))
        return [e for e in out if e is not None]

    def estimate_columns(self, queries: list[Query],
                         confidence: float = 0.9) -> dict[str, np.ndarray]:
        """The :data:`BATCH_COLUMNS` of :meth:`estimate_many`, one array each in query
        order. ``estimate --input`` writes only these, so it builds no :class:`Estimate`
        per query: with their notes, breakdowns and copies of the measured scales, those
        took most of the time of a 100k-query batch."""
        n = len(queries)
        columns = {name: np.empty(n, dtype=object if name in ("law", "series") else float)
                   for name in BATCH_COLUMNS}
        columns["beyond_measured_range"] = np.empty(n, dtype=bool)
        scales, groups = self._group(queries, confidence)
        for entry, _, indices in groups:
            series, ctx = self.series_context(entry)
            p = scales[indices]
            pred = self.predictor.predict_columns(series, p, confidence, ctx)
            speedup, efficiency = _speedup_efficiency(series, ctx, pred.runtime_s, p)
            for name, values in (
                    ("predicted_runtime_s", pred.runtime_s),
                    ("lower_runtime_s", np.maximum(pred.lower_s, 0.0)),
                    ("upper_runtime_s", pred.upper_s), ("speedup", speedup),
                    ("efficiency", efficiency), ("law", pred.law), ("series", series.name),
                    ("beyond_measured_range", p > ctx.scale_max)):
                columns[name][indices] = values
        return columns

    def _group(self, queries: list[Query], confidence: float
               ) -> tuple[FloatArray, list[tuple[dict[str, Any], list[str], np.ndarray]]]:
        """Each query's scale in its series' unit, and the queries grouped by the series
        that answers them: (artifact entry, notes on the choice, query indices). The
        confidence and every query are checked before any is predicted, so a bad one
        fails the batch at once."""
        if not 0 < confidence < 1:
            raise BadInputError(f"confidence must be between 0 and 1, got {confidence:g}")
        resolved: dict[tuple[Any, ...], tuple[dict[str, Any], list[str]]] = {}
        by_series: dict[int, tuple[dict[str, Any], list[str], list[int]]] = {}
        scales: list[float] = []
        for i, query in enumerate(queries):
            query.validate()
            lookup = (query.app, query.system, query.problem_size, query.variant,
                      query.ranks_per_node, query.threads_per_rank)
            if lookup not in resolved:
                resolved[lookup] = self.find_series(query)
            entry, notes = resolved[lookup]
            scales.append(_scale(entry, query))
            by_series.setdefault(id(entry), (entry, notes, []))[2].append(i)
        return np.asarray(scales, dtype=float), [
            (entry, notes, np.asarray(indices, dtype=np.int64))
            for entry, notes, indices in by_series.values()]


def _scale(entry: dict[str, Any], query: Query) -> float:
    """The series' own scale unit for a query given in nodes."""
    if entry["scale_unit"] != "ranks":
        return query.nodes
    rpn = query.ranks_per_node or entry["ranks_per_node"]
    if rpn is None:
        key = SeriesKey(*entry["key"])
        raise BadInputError(
            f"{key.app} on {key.system} [{key.problem_size}] is measured in MPI ranks, not "
            "nodes; pass --ranks-per-node so the node count can be turned into ranks")
    return query.nodes * rpn


def _make_estimate(query: Query, entry: dict[str, Any], series: Series, ctx: SeriesContext,
                   pred: Prediction, scale: float, confidence: float,
                   notes: list[str]) -> Estimate:
    speedup, efficiency = _speedup_efficiency(series, ctx, pred.runtime_s, scale)
    law = ctx.laws.get(pred.law) or ctx.laws["amdahl"]
    beyond = scale > ctx.scale_max
    if beyond:
        notes.append(f"extrapolating {pred.extrapolation_log2:.1f} doublings beyond the "
                     f"largest measured scale ({ctx.scale_max:g} {series.scale_unit})")
    if pred.beyond_calibration:
        notes.append("farther than any extrapolation the interval was calibrated on; "
                     "the interval was widened in proportion and may still be too narrow")
    return Estimate(
        app=series.key.app, system=series.key.system, problem_size=series.key.problem_size,
        variant=series.key.variant, series=series.name, nodes=query.nodes, scale=scale,
        scale_unit=series.scale_unit,
        confidence=confidence, predicted_runtime_s=pred.runtime_s,
        lower_runtime_s=max(pred.lower_s, 0.0), upper_runtime_s=pred.upper_s,
        speedup=speedup, efficiency=efficiency, scaling="weak" if series.weak else "strong",
        law=pred.law, formula=law.formula(),
        overhead_coefficient=pred.overhead_coefficient,
        extrapolation_doublings=max(pred.extrapolation_log2, 0.0),
        beyond_measured_range=beyond, beyond_calibration=pred.beyond_calibration,
        n_runs=entry["n_runs"], measured_scales=[float(s) for s in ctx.scales],
        breakdown_s=(_roofline_breakdown(series, ctx, query, scale, pred.runtime_s, notes)
                     or _breakdown(law.params(), pred.law, scale, pred.runtime_s,
                                   entry.get("io_share"))),
        notes=notes)


def _speedup_efficiency(series: Series, ctx: SeriesContext, runtime_s: _Num,
                        scale: _Num) -> tuple[_Num, _Num]:
    """Speedup over the smallest measured scale's median, and parallel efficiency (for
    weak scaling, the speedup itself); for one query or, as arrays, for many."""
    speedup = float(ctx.medians_s[0]) / runtime_s
    return speedup, (speedup if series.weak else speedup * ctx.scale_min / scale)


def _num_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _context(entry: dict[str, Any]) -> tuple[Series, SeriesContext]:
    scales = np.asarray(entry["scales"], dtype=float)
    medians = np.asarray(entry["medians_s"], dtype=float)
    series = Series(key=SeriesKey(*entry["key"]), scale_unit=entry["scale_unit"], scale=scales,
                    runtime_s=medians, weak=entry["weak"],
                    problem_size_num=entry["problem_size_num"],
                    ranks_per_node=entry["ranks_per_node"],
                    threads_per_rank=entry["threads_per_rank"], io_share=entry["io_share"])
    laws = {name: LAWS[name].from_state(doc["state"]) for name, doc in entry["laws"].items()}
    summary = np.array([np.nan if v is None else v for v in entry["summary"]], dtype=float)
    return series, SeriesContext(series, scales, medians, laws, summary)


def _roofline_breakdown(series: Series, ctx: SeriesContext, query: Query, scale: float,
                        runtime_s: float, notes: list[str]) -> dict[str, float]:
    """Compute / communication / I/O split from the roofline law when the query gives its
    I/O volume, with the file-system numbers from the system catalog; empty otherwise.

    The parts are scaled to the hybrid's prediction, which stays the estimate."""
    if not query.io_bytes:
        return {}
    from perfpredict.laws.roofline import Roofline  # imported by the queries it serves

    if ctx.scales.size < Roofline.min_scales:
        return {}
    if series.scale_unit != "nodes":
        notes.append("the series is measured in ranks, not nodes, so --io-bytes could not "
                     "be turned into I/O time (per-node bandwidth needs node counts)")
        return {}
    from perfpredict.catalog import bundled_system

    spec = bundled_system(series.key.system)
    if spec is None:
        notes.append(f"{series.key.system} is not in the shipped catalog, so --io-bytes could "
                     "not be turned into I/O time")
        return {}
    roofline = Roofline(query.io_bytes, spec.fs_bw_bytes_per_s,
                        spec.net_injection_bw_bytes_per_s, spec.net_latency_s)
    roofline.fit(ctx.scales, ctx.medians_s)
    notes.extend(f"roofline: {reason}" for reason in roofline.fallbacks_)
    if not roofline.fallbacks_:
        notes.append(f"I/O time from {spec.name}'s file-system bandwidth in the catalog")
    parts = roofline.breakdown_s(scale)
    total = sum(parts.values())
    return {k: v * runtime_s / total for k, v in parts.items()} if total > 0 else {}


def _breakdown(params: dict[str, float], law: str, scale: float, runtime_s: float,
               io_share: float | None) -> dict[str, float]:
    """Where the time goes, where the law says so: serial, parallel, communication, I/O."""
    parts: dict[str, float] = {}
    if law in ("amdahl", "amdahl_log"):
        parts = {"serial_s": params["serial_s"], "parallel_s": params["parallel_s"] / scale}
        if law == "amdahl_log":
            parts["communication_s"] = params["comm_s_per_log2p"] * math.log2(scale)
        total = sum(parts.values())
        if total > 0:  # the overhead coefficient scales every part alike
            parts = {k: v * runtime_s / total for k, v in parts.items()}
    if io_share is not None:
        parts["io_staging_s"] = runtime_s * io_share
    return parts


def bundled_artifact_path() -> Path:
    """The shipped predictor beside ``perfpredict.models``' own file. Not through
    ``importlib.resources``: its import (with zipfile, tempfile and random) cost every
    estimate about 4 ms, and perfpredict is installed as plain files anyway."""
    from importlib.util import find_spec

    spec = find_spec("perfpredict.models")
    if spec is None or spec.origin is None:
        raise NotFoundError("perfpredict.models is not installed; reinstall perfpredict")
    return Path(spec.origin).with_name(BUNDLED_ARTIFACT)


def load_predictor(db_url: str | None) -> LoadedPredictor:
    """The store's newest predictor, else the bundled one trained on the shipped data."""
    from perfpredict.store.artifacts import load_latest_runtime

    if db_url is not None:
        found = load_latest_runtime(db_url)
        if found is not None:
            return LoadedPredictor(found[0], "the store", found[1])
    path = bundled_artifact_path()
    if not path.exists():
        raise NotFoundError("no trained predictor in the store and none shipped; run "
                            "'perfpredict train'")
    return LoadedPredictor(artifact.read_file(path), f"the bundled predictor ({path.name})")


def estimate(db_url: str | None, query: Query, confidence: float = 0.9) -> Estimate:
    """One estimate; see :class:`Estimate` for what it holds."""
    return load_predictor(db_url).estimate(query, confidence)


#: Columns ``estimate --input`` appends to each input row.
BATCH_COLUMNS = ("predicted_runtime_s", "lower_runtime_s", "upper_runtime_s", "speedup",
                 "efficiency", "law", "series", "beyond_measured_range")
_QUERY_COLUMNS = {"app": str, "nodes": float, "system": str, "problem_size": str,
                  "variant": str, "ranks_per_node": float, "threads_per_rank": float,
                  "io_bytes": float}


def read_queries(path: Path) -> tuple[list[str], list[dict[str, str]], list[Query]]:
    """The query CSV's header, raw rows and parsed queries; bad rows name their line."""
    import csv

    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            header = list(reader.fieldnames or [])
            rows = list(reader)
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read the query file: {exc}", path=path) from exc
    for needed in ("app", "nodes"):
        if needed not in header:
            raise BadInputError(f"the header has no '{needed}' column; a query file needs "
                                "at least app and nodes", path=path, line_no=1)
    queries = []
    for line_no, row in enumerate(rows, start=2):
        values: dict[str, Any] = {}
        for name, kind in _QUERY_COLUMNS.items():
            text = (row.get(name) or "").strip()
            if not text:
                continue
            try:
                values[name] = kind(text)
            except ValueError:
                raise BadInputError(f"column {name!r} must be a number, got {text!r}",
                                    path=path, line_no=line_no) from None
        if "nodes" not in values or "app" not in values:
            raise BadInputError("app and nodes are required on every row", path=path,
                                line_no=line_no)
        query = Query(**values)
        try:
            query.validate()
        except BadInputError as exc:
            raise BadInputError(exc.reason, path=path, line_no=line_no) from None
        queries.append(query)
    return header, rows, queries


def estimate_csv(db_url: str | None, path: Path, out: Any, confidence: float = 0.9) -> int:
    """Answer every row of a query CSV, same order, input columns first; returns rows."""
    import csv

    header, rows, queries = read_queries(path)
    columns = load_predictor(db_url).estimate_columns(queries, confidence)
    kept = [c for c in header if c not in BATCH_COLUMNS]  # runtime_s is kept, not used
    answers = zip(*([_csv_value(v) for v in columns[c].tolist()] for c in BATCH_COLUMNS),
                  strict=True)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*kept, *BATCH_COLUMNS])
    for row, answer in zip(rows, answers, strict=True):
        writer.writerow([*(row.get(c, "") for c in kept), *answer])
    return len(rows)


def _csv_value(value: Any) -> Any:
    return f"{value:.6g}" if isinstance(value, float) else value
