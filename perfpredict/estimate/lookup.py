"""Which trained series answers a query, in which unit, and what the answer should say
about the choice; and where the trained predictor comes from (the store's newest, else
the one shipped in ``perfpredict/models``).

Reading an artifact needs no runs, no SQLAlchemy for a SQLite store, and none of pandas,
scikit-learn, xgboost or matplotlib.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from perfpredict import artifact
from perfpredict.counts import MAX_COUNT, is_number, shown
from perfpredict.errors import ArtifactError, BadInputError, NotFoundError
from perfpredict.laws.roofline_terms import VOLUMES
from perfpredict.model.entry import SeriesEntry
from perfpredict.model.runtime import RuntimeModel
from perfpredict.names import name_key, refuse_blank, refuse_blank_system, resolve_name
from perfpredict.remedies import TRAIN

BUNDLED_ARTIFACT = "predictor.json"
#: What a document or entry of another layout raises when read (a stale artifact).
LAYOUT_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


#: How a message names a field of a :class:`Query` (``"ranks_per_node"``) to its user.
FieldName = Callable[[str], str]


def keyword_name(field: str) -> str:
    """A query field as the keyword that sets it in Python, ``Query(ranks_per_node=8)``:
    how a library caller's messages name it.

    >>> keyword_name("ranks_per_node")
    'ranks_per_node'
    """
    return field


def option_name(field: str) -> str:
    """A query field as the option that sets it (``perfpredict estimate``, ``advise``).

    >>> option_name("ranks_per_node")
    '--ranks-per-node'
    """
    return "--" + field.replace("_", "-")


def column_name(field: str) -> str:
    """A query field as the column of a query file that sets it.

    >>> column_name("ranks_per_node")
    "column 'ranks_per_node'"
    """
    return f"column {field!r}"


#: What to do with a field that holds a missing value: a frame's empty cell is NaN
#: (pandas' NA in a nullable column), which ``Query(**row)`` of the frame's row hands in.
MISSING_FIX = (", a missing value (a frame's empty cell): give None to leave it out, as "
               "Query(**row.dropna()) does")
#: The same for the node count, which no query leaves out.
MISSING_NODES_FIX = (", a missing value (a frame's empty cell): give the node count to "
                     "predict, or leave out the rows without one "
                     "(frame.dropna(subset=['nodes']))")


def missing(value: object) -> bool:
    """Whether ``value`` is a missing value as pandas and numpy write one (NaN, pandas'
    NA, NaT), told without importing pandas."""
    return (type(value).__name__ in ("NAType", "NaTType")  # whose == is no bool
            or (is_number(value) and value != value))


def missing_fix(query: Query, part: str, value: object) -> str:
    """What a message about ``value``, the field ``part`` of ``query``, adds when it is a
    missing value that a library caller gave: "must be a positive number, got nan" did
    not say that NaN is how a frame's row hands in an empty cell, nor what to do with
    one. A command line's ``--io-bytes nan`` is no frame's cell, and a query file's
    empty cell no NaN, so neither is told of frames. Asked only of a value already
    refused, so that a batch's valid queries pay nothing for it."""
    if query.field_name is not keyword_name or not missing(value):
        return ""
    return MISSING_NODES_FIX if part == "nodes" else MISSING_FIX


@dataclass
class Query:
    """What a user asks: an application at a node count, optionally narrowed down.

    ``app`` (the application's name, as stored or bundled) at ``nodes`` (a whole number
    of nodes), narrowed where several series match by ``system``, ``problem_size`` and
    ``variant`` (the exact label, else part of it), and by the layout,
    ``ranks_per_node`` and ``threads_per_rank``. The run's volumes, all nodes
    together, turn into time through the system's catalog entry (the roofline law):
    ``io_bytes`` read and written, ``net_bytes`` sent over the network, ``flops``
    (FP64 operations) and ``mem_bytes`` moved to and from memory. None leaves a field
    out; a frame's empty cell (NaN) is refused, saying so, and so is an empty or blank
    name (:func:`~perfpredict.names.refuse_blank`), which names nothing.

    >>> Query(app="bert", nodes=64, system="dgxa100")  # doctest: +ELLIPSIS
    Query(app='bert', nodes=64, system='dgxa100', ...)
    """

    app: str
    nodes: float
    system: str | None = None
    problem_size: str | None = None
    variant: str | None = None
    ranks_per_node: float | None = None
    threads_per_rank: float | None = None
    #: the run's volumes, all nodes together, that the roofline law turns into time
    #: with the catalog's numbers (:data:`~perfpredict.laws.roofline_terms.VOLUMES`):
    #: bytes read and written, bytes sent over the network, floating-point operations
    #: (FP64, as the catalog's peak), bytes moved to and from memory
    io_bytes: float | None = None
    net_bytes: float | None = None
    flops: float | None = None
    mem_bytes: float | None = None
    #: How messages about this query name its fields: as the keywords that set them
    #: (``ranks_per_node``, for a library caller), as the options that do
    #: (:func:`option_name`, ``--ranks-per-node``, for a command line), or as the columns
    #: of a query file (:func:`column_name`, ``estimate --input``, whose messages also
    #: name the file and line). One wording served all and read as one: "pass
    #: --ranks-per-node" to a file's user, "--nodes must be a positive number" to a
    #: notebook's, who had written ``nodes=``.
    field_name: FieldName = field(default=keyword_name, compare=False, repr=False)

    def validate(self) -> None:
        """Refuse a query no job could be, naming each field as :attr:`field_name` does."""
        name = self.field_name
        for part in ("app", "system", "problem_size", "variant"):
            value = getattr(self, part)
            if value is not None and not isinstance(value, str):
                raise BadInputError(f"{name(part)} must be text, got {value!r}"
                                    f"{missing_fix(self, part, value)}")
        refuse_blank(self.app or "", name("app"), "give the application's name")  # None too
        refuse_blank_system(self.system, name("system"))
        for part, label in (("problem_size", "problem size"), ("variant", "variant")):
            refuse_blank(getattr(self, part), name(part),
                         f"give a {label} (its label, or part of it), or leave {name(part)} out")
        if self.nodes is None:
            raise BadInputError(f"{name('nodes')} must be a number, got None; give the "
                                "node count to predict")
        for part in ("nodes", "ranks_per_node", "threads_per_rank", *VOLUMES):
            value = getattr(self, part)
            if value is not None and not is_number(value):
                raise BadInputError(f"{name(part)} must be a number, got {value!r}"
                                    f"{missing_fix(self, part, value)}")
        for part in ("nodes", "ranks_per_node", "threads_per_rank"):
            value = getattr(self, part)
            if value is not None and value > MAX_COUNT:  # a typo an estimate would answer
                raise BadInputError(f"{name(part)} must be at most {MAX_COUNT}, got "
                                    f"{shown(value)}")
            if value is not None and not (math.isfinite(value) and value > 0):
                raise BadInputError(f"{name(part)} must be a positive number, got "
                                    f"{value:g}{missing_fix(self, part, value)}")
        # as ingest reads a layout: whole threads, and ranks per node a mean over the nodes
        # (MLPerf HPC's 0.5 on 128 nodes) only where it makes whole ranks
        if self.threads_per_rank is not None and self.threads_per_rank % 1:
            raise BadInputError(f"{name('threads_per_rank')} must be a whole number, got "
                                f"{self.threads_per_rank:g}")
        if self.ranks_per_node is not None and (self.nodes * self.ranks_per_node) % 1:
            raise BadInputError(f"{name('ranks_per_node')} {self.ranks_per_node:g} on "
                                f"{self.nodes:g} node{'' if self.nodes == 1 else 's'} is "
                                f"{self.nodes * self.ranks_per_node:g} ranks; give a ranks "
                                "per node that makes whole ranks")
        for part in VOLUMES:
            value = getattr(self, part)
            if value is not None and not math.isfinite(value):  # was "must be zero or more"
                raise BadInputError(f"{name(part)} must be finite, got {value:g}"
                                    f"{missing_fix(self, part, value)}")
            if value is not None and value < 0:
                raise BadInputError(f"{name(part)} must be zero or more, got {value:g}")

    def roofline_volumes(self) -> dict[str, float]:
        """The volumes the query gives the roofline law, by field: a volume of None and
        of 0 are alike, no term."""
        return {part: value for part in VOLUMES if (value := getattr(self, part))}

    def series_wanted(self) -> tuple[Any, ...]:
        """What decides the series that answers, and the words of its choice's note:
        queries alike in it share one :class:`Match`."""
        return (self.app, self.system, self.problem_size, self.variant, self.ranks_per_node,
                self.threads_per_rank, self.field_name)


class SeriesEntries(Protocol):
    """A trained predictor's series entries: in its document (the shipped file), or in
    rows of the store read one application at a time
    (:class:`perfpredict.store.artifacts.StoredSeries`)."""

    def of_app(self, app: str) -> list[SeriesEntry]: ...

    def apps(self) -> list[str]: ...

    @property
    def n_applications(self) -> int: ...


class InlineSeries:
    """The entries of an artifact document that holds them all (the shipped predictor, a
    predictor trained in memory), read one application at a time, as the store's are:
    ``by_app`` holds each application's entry documents, or their JSON texts as the
    shipped predictor keeps them (:data:`perfpredict.artifact.SERIES_TEXTS`), built
    into entries when that application is asked for."""

    def __init__(self, by_app: Mapping[str, Sequence[dict[str, Any] | str]]) -> None:
        self._names = sorted(by_app)
        self._docs: dict[str, list[dict[str, Any] | str]] = {}
        for app, docs in by_app.items():
            self._docs.setdefault(app.casefold(), []).extend(docs)
        self._by_app: dict[str, list[SeriesEntry]] = {}

    @classmethod
    def of_document(cls, doc: dict[str, Any]) -> InlineSeries:
        if artifact.SERIES_TEXTS in doc:
            return cls(doc[artifact.SERIES_TEXTS])
        return cls.of_entries(doc[artifact.SERIES])

    @classmethod
    def of_entries(cls, entries: list[dict[str, Any]]) -> InlineSeries:
        by_app: dict[str, list[dict[str, Any]]] = {}
        for doc in entries:
            by_app.setdefault(SeriesEntry.app_of(doc), []).append(doc)
        return cls(by_app)

    def of_app(self, app: str) -> list[SeriesEntry]:
        wanted = app.casefold()
        if wanted not in self._by_app:
            self._by_app[wanted] = [
                SeriesEntry.from_dict(json.loads(doc) if isinstance(doc, str) else doc)
                for doc in self._docs.get(wanted, [])]
        return self._by_app[wanted]

    def apps(self) -> list[str]:
        return list(self._names)

    @property
    def n_applications(self) -> int:
        """The applications, case aside, as estimates look them up."""
        return len(self._docs)


def stale_layout(origin: str, exc: Exception) -> ArtifactError:
    """Intact and checksummed, but written for another layout (a stale file or store):
    refused rather than answered wrongly."""
    return ArtifactError(
        f"the model artifact from {origin} does not have the layout this perfpredict "
        f"reads ({type(exc).__name__}: {exc}); retrain with 'perfpredict train'")


class Match(NamedTuple):
    """The series that answers a query, and what the answer should say about the choice."""

    entry: SeriesEntry
    notes: list[str]
    #: fitted at the estimate from the store's runs, which the predictor was not trained
    #: with (:mod:`perfpredict.estimate.untrained`)
    fitted_now: bool = False


#: How many of the other series that match a query its note names.
_OTHERS_NAMED = 3


def find_series(entries: SeriesEntries, model: RuntimeModel, query: Query,
                db_url: str | None = None) -> Match:
    """The series that answers ``query``: the application's series (the application,
    system, problem size and variant each found as every command finds a name,
    :func:`~perfpredict.names.resolve_name`: as given, else the one name equal but for
    case and surrounding white space; else a system, problem size or variant finds the
    labels that contain it, a system also its catalog aliases), then by layout (a series
    of unknown layout fits any), and the best measured of the rest; a narrowing that
    leaves none is refused, naming what was measured, and a name two spellings match
    alike is refused, naming both. An application with none is refused with the names
    it may have meant; the store's series of it that no predictor was trained with are
    the caller's to add (:mod:`perfpredict.estimate.untrained`)."""
    found = list(entries.of_app(query.app.strip()))
    app = resolve_name(query.app, {e.key.app for e in found}, "application")
    if app is None:
        raise unknown_app(query.app, entries.apps())
    found = [e for e in found if e.key.app == app]
    for label, part, wanted in (("system", "system", query.system),
                                ("problem size", "problem_size", query.problem_size),
                                ("variant", "variant", query.variant)):
        if wanted is None:
            continue
        name = resolve_name(wanted, {getattr(e.key, part) for e in found}, label)
        narrowed = ([e for e in found if getattr(e.key, part) == name] if name is not None
                    else _containing(wanted, found, part))
        if not narrowed and part == "system" and db_url is not None:
            spellings = catalog_spellings(db_url, wanted)  # an alias of its machine
            narrowed = [e for e in found if name_key(e.key.system) in spellings]
        if not narrowed:
            raise _unmeasured(app, label, wanted, {getattr(e.key, part) for e in found},
                              query.field_name(part))
        found = narrowed
    for part, wanted_num in (("ranks_per_node", query.ranks_per_node),
                             ("threads_per_rank", query.threads_per_rank)):
        if wanted_num is None:
            continue
        narrowed = [e for e in found if getattr(e.key, part) in ("", _num_text(wanted_num))]
        if not narrowed:  # another layout scales otherwise: not answered as if it were one
            measured = sorted({getattr(e.key, part) for e in found}, key=float)
            raise NotFoundError(
                f"{app} has no runs with {_num_text(wanted_num)} "
                f"{part.replace('_', ' ')}; measured: {', '.join(measured)} (give one of "
                f"those in {query.field_name(part)}, or none for the measured layout)")
        found = narrowed
    # Prefer the best-measured series: most scales, then most runs.
    found.sort(key=lambda e: (len(e.scales), e.n_runs), reverse=True)
    entry = found[0]
    notes = []
    if len(found) > 1:
        others = "; ".join(e.key.name for e in found[1:1 + _OTHERS_NAMED])
        more = len(found) - 1 - _OTHERS_NAMED
        others += f"; and {more} more" if more > 0 else ""
        narrow = " / ".join(map(query.field_name, ("system", "problem_size", "variant")))
        notes.append(f"{len(found)} series match; using the best measured one (most "
                     f"scales, then most runs), not {others} (narrow with {narrow})")
    return Match(entry, notes + _unrecorded_layout(entry, query)
                 + calibration_notes(model, entry.key.app, entry.weak))


def _unrecorded_layout(entry: SeriesEntry, query: Query) -> list[str]:
    """What to say of a layout the query gives and the chosen series' runs do not record
    (a CSV without ranks_per_node): such a series answers for any layout, so ``--ranks-per-
    node 7`` was answered as ``64`` would be, where a series that records its layout
    refuses another. Not said of ranks per node in a series measured in ranks, which
    turns the node count into its scale."""
    unchecked = [(part, f"the {_num_text(wanted)} given in {query.field_name(part)}")
                 for part, wanted in (("ranks_per_node", query.ranks_per_node),
                                      ("threads_per_rank", query.threads_per_rank))
                 if wanted is not None and getattr(entry.key, part) == ""
                 and not (part == "ranks_per_node" and entry.scale_unit == "ranks")]
    if not unchecked:
        return []
    unrecorded = " or ".join(part.replace("_", " ") for part, _ in unchecked)
    given = " and ".join(text for _, text in unchecked)
    return [f"the runs of {entry.key.name} do not record their {unrecorded}, so {given} "
            "could not be checked against them: the estimate is their curve's, whatever "
            "layout they ran with"]


def _containing(wanted: str, found: list[SeriesEntry], part: str) -> list[SeriesEntry]:
    """The series whose ``part`` label contains ``wanted``, case aside: those where it
    stands as whole words if any do, else all. "NREP=1" is CP2K's "H2O-dft-ls NREP=1 (96
    atoms)", not also its NREP=10 to NREP=19, and VASP's "NCORE=4" not "NCORE=48", which
    the best-measured rule would otherwise pick whenever it has more scales."""
    needle = wanted.strip().casefold()
    containing = [e for e in found if needle in getattr(e.key, part).casefold()]
    # not preceded or followed by a letter or digit (an underscore or a dash bounds too)
    whole = re.compile(rf"(?<![^\W_]){re.escape(needle)}(?![^\W_])")
    return [e for e in containing if whole.search(getattr(e.key, part).casefold())] or containing


#: How many measured labels the refusal of an unmeasured one names.
_MEASURED_NAMED = 10


def _unmeasured(app: str, label: str, wanted: str, measured: set[str],
                field: str) -> NotFoundError:
    """A system, problem size or variant no series of ``app`` was measured with (at two
    or more scales; a run at one scale is no series): the measured labels closest to
    ``wanted`` first, then the rest in order, and how many are left out. VASP's 211
    variants listed alphabetically put ten ARCHER builds first, none of them the one a
    typo in an ARCHER2 build meant."""
    from perfpredict.names import close_names  # on a typo's path only

    # "series", not "runs": the store may hold a run or two of it, at one scale, which
    # no law can be fitted to (CP2K's NREP=13, one run at 2048 nodes)
    missing = (f"{app} has no series with {label} {wanted!r} (runs at two or more "
               "scales, which a law needs)")
    options = sorted(measured - {""})
    if not options:
        return NotFoundError(f"{missing}; no series of it names a {label}: leave {field} "
                             "out")
    close = close_names(wanted, options)
    named = [*close, *(o for o in options if o not in close)][:_MEASURED_NAMED]
    more = f"; and {len(options) - len(named)} more" if len(options) > len(named) else ""
    return NotFoundError(f"{missing}; measured: {'; '.join(named)}{more} (give one of "
                         f"those, or part of one, in {field})")


def catalog_spellings(db_url: str, system: str) -> set[str]:
    """The name keys of the store's catalog entry that ``system`` names by its name or an
    alias (``aliases = ["xmach"]`` in a ``systems add`` file), so that a series measured
    on the machine is found by any of them; empty where none does. Read without
    SQLAlchemy, as an estimate reads the store."""
    from perfpredict.store.reading import query_rows

    wanted = name_key(system)
    for name, details in query_rows(db_url, "SELECT name, details FROM systems") or ():
        aliases = (json.loads(details) if isinstance(details, str) else details or {}).get(
            "aliases") or []
        keys = {name_key(n) for n in (name, *aliases)}
        if wanted in keys:
            return keys
    return set()


def calibration_notes(model: RuntimeModel, app: str, weak: bool) -> list[str]:
    """What an estimate of ``app`` should say about how its interval was calibrated: a
    scaling kind with too few series of its own, an application nothing was trained on,
    strong scaling calibrated by series for want of applications.

    The last because such intervals held too few runs beyond the measured range: in the
    store-cut backtest of a store of four HPC data sets (VASP, CP2K, Castro, PencilFFTs:
    six strong-scaling applications, so calibrated by series) they held 0.73 of the test
    runs in extrapolation and 0.75 in few-shot; the same store trained with the bundled
    data sets too (more than eight applications, so calibrated by application) 0.90 and
    0.91 (docs/accuracy.md). Weak scaling is calibrated by series in the bundled data and
    held 0.87-1.0 of RELeARN's runs, so it gets no such note.
    """
    notes = []
    n_series = model.thinly_calibrated(weak)
    if n_series is not None:
        kind = "weak" if weak else "strong"
        notes.append(f"only {n_series} {kind}-scaling series with 3+ scales "
                     f"{'was' if n_series == 1 else 'were'} trained on, so the interval "
                     "is calibrated on all series pooled and may be too "
                     "narrow; train on more series (e.g. 'perfpredict datasets load')")
    if model.is_new_app(app):
        if model.calibration(weak) == "application":
            notes.append(f"no other series of {app} was trained on: nothing of the "
                         "application to borrow, and the interval is calibrated on "
                         "applications left out of training")
        else:
            notes.append(f"no other series of {app} was trained on, and too few "
                         "applications to calibrate intervals for a new one: nothing of "
                         "the application to borrow, and the interval may be too narrow")
    elif n_series is None and not weak and model.calibration(weak) == "series":
        notes.append(f"fewer than {model.min_series_for_calibration} strong-scaling "
                     "applications were trained on, so the interval is calibrated by series "
                     "and may be too narrow beyond the measured range; train without "
                     "--no-borrow-bundled to calibrate it on the bundled "
                     "applications too")
    return notes


def unknown_app(app: str, known: list[str]) -> NotFoundError:
    """An application the predictor has no series of and the store no runs of (a typo,
    most likely): the names of ``known`` it may have meant."""
    from perfpredict.names import close_names  # on a typo's path only

    apps = sorted(set(known))
    close = close_names(app, apps)  # without case, as the lookup matches
    hint = f"; did you mean {', '.join(close)}?" if close else (
        f"; known applications: {', '.join(apps[:12])}{' ...' if len(apps) > 12 else ''}")
    return NotFoundError(f"no trained series for application {app!r}{hint} "
                         f"(ingest its runs and run {TRAIN})")


def scale_per_node(entry: SeriesEntry, query: Query) -> float:
    """How many of the series' own scale units one node is: 1 for a series measured in
    nodes, the ranks per node (the query's, else the series') for one measured in ranks."""
    if entry.scale_unit != "ranks":
        return 1.0
    rpn = query.ranks_per_node or entry.ranks_per_node
    if rpn is None:
        key = entry.key
        raise BadInputError(
            f"{key.app} on {key.system} [{key.problem_size}] is measured in MPI ranks, not "
            f"nodes; give {query.field_name('ranks_per_node')} so the node count can be "
            "turned into ranks")
    return rpn


def _num_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def bundled_artifact_path() -> Path:
    """The shipped predictor beside ``perfpredict.models``' own file. Not through
    ``importlib.resources``: its import (with zipfile, tempfile and random) cost every
    estimate about 4 ms, and perfpredict is installed as plain files anyway."""
    from importlib.util import find_spec

    spec = find_spec("perfpredict.models")
    if spec is None or spec.origin is None:
        raise NotFoundError("perfpredict.models is not installed; reinstall perfpredict")
    return Path(spec.origin).with_name(BUNDLED_ARTIFACT)


def load_artifact(db_url: str | None) -> tuple[dict[str, Any], str, SeriesEntries | None]:
    """The store's newest runtime predictor, else the bundled one trained on the shipped
    data: its document, where it came from, and its entries when they are stored apart
    from the document (None: they are in it). A store named by ``db_url`` must exist: a
    mistyped path would otherwise answer from the bundled predictor without a word."""
    from perfpredict.store.artifacts import load_latest_runtime
    from perfpredict.store.location import url_to_read

    if db_url is not None:
        url_to_read(db_url, named=True)
        found = load_latest_runtime(db_url)
        if found is not None:
            return found[0], "the store", found[1]
    path = bundled_artifact_path()
    if not path.exists():
        raise NotFoundError(f"no trained predictor in the store and none shipped; run {TRAIN}")
    return artifact.read_file(path), f"the bundled predictor ({path.name})", None
