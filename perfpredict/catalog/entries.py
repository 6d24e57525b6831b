"""A system's catalog entry: the facts the scaling laws and the advice need about a machine,
each number with the document it comes from.

Entries are written as TOML (one file per system, or many under ``[[systems]]`` in an
export). Reading validates strictly, because a wrong number silently skews every roofline
term and charge computed from it: unknown keys, wrong types, negative or non-finite numbers
and numbers without a source are refused with a message naming the file, the key and the
fix. A number nobody knows stays absent (``None``) rather than guessed.

Units are in the names: ``_bytes``, ``_s``, ``_bytes_per_s``, ``flops`` per second.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from perfpredict.errors import BadInputError, named_path
from perfpredict.names import name_key

#: Where a system's record came from: the shipped catalog, a log that named an unknown
#: system (a placeholder to complete), or ``systems add``.
ORIGINS = ("catalog", "ingest", "user")

#: Source given to numbers an ingest placeholder derived from a log, so that an exported
#: placeholder stays re-addable under the "every number has a source" rule.
INGEST_SOURCE = "derived by 'perfpredict ingest' from the log named in this entry's notes"


@dataclass(frozen=True)
class Queue:
    """A queue, partition or QOS and the node range and walltime it accepts.

    ``max_nodes`` absent means "up to the whole machine"; ``max_walltime_s`` absent means
    the documentation states no limit. ``charge_multiplier`` scales the system's charge
    (premium queues charge more, some low-priority queues nothing).
    """

    name: str
    min_nodes: int = 1
    max_nodes: int | None = None
    max_walltime_s: float | None = None
    charge_multiplier: float = 1.0

    def accepts(self, nodes: int) -> bool:
        """Whether a job of ``nodes`` nodes fits this queue's node range."""
        return nodes >= self.min_nodes and (self.max_nodes is None or nodes <= self.max_nodes)


@dataclass(frozen=True)
class SystemSpec:
    """One machine (or one partition of a machine whose nodes differ, e.g. Perlmutter's
    GPU and CPU nodes), per node unless the name says otherwise.

    ``peak_flops_per_node`` is the FP64 vector peak of the node's accelerators when it has
    any (host CPUs not counted), else of its CPUs; ``mem_bw_bytes_per_s_per_node`` is the
    bandwidth of the memory those flops are fed from (GPU HBM on GPU nodes).
    ``charge_factor`` is allocation units per node-hour. ``origin`` is store bookkeeping and
    not part of an entry's identity (two specs with the same facts compare equal).
    """

    name: str
    nodes: int | None = None
    cores_per_node: int | None = None
    gpus_per_node: int | None = None
    peak_flops_per_node: float | None = None
    mem_bw_bytes_per_s_per_node: float | None = None
    node_memory_bytes: float | None = None
    net_injection_bw_bytes_per_s: float | None = None
    net_latency_s: float | None = None
    fs_bw_bytes_per_s: float | None = None
    charge_factor: float | None = None
    allocation_unit: str | None = None
    time_granularity_s: int | None = None
    scheduler: str | None = None
    queues: tuple[Queue, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    notes: str | None = None
    origin: str = field(default="catalog", compare=False)

    def __post_init__(self) -> None:
        # An alias that compares equal (name_key) to the name or an earlier alias finds
        # nothing more: it is dropped, the first spelling kept. The shipped entries list
        # their own names among their aliases ("frontier" for Frontier, JUWELS-Booster's
        # three spellings of itself), and 'systems show' repeated them ("m1, M1, mach"
        # for mach); refusing them instead would refuse those entries and every export
        # holding them. What is no text is left to the reader's validation to refuse.
        if isinstance(self.name, str) and isinstance(self.aliases, Sequence) and all(
                isinstance(alias, str) for alias in self.aliases):
            seen, distinct = {name_key(self.name)}, []
            for alias in self.aliases:
                if name_key(alias) not in seen:
                    seen.add(name_key(alias))
                    distinct.append(alias)
            object.__setattr__(self, "aliases", tuple(distinct))

    def known_as(self, name: str) -> bool:
        """Whether ``name`` is this system's name or one of its aliases, compared by
        :func:`name_key` (so a log's "JUWELS Booster" finds `JUWELS-Booster`)."""
        return name_key(name) in {name_key(n) for n in (self.name, *self.aliases)}

    def sourced_fields(self) -> list[str]:
        """Fields that carry a fact and therefore need a source (numbers and queues)."""
        present = [name for name in NUMERIC_FIELDS if getattr(self, name) is not None]
        return present + (["queues"] if self.queues else [])

    def unsourced_fields(self) -> list[str]:
        """Facts without a source; empty for every valid entry."""
        return [name for name in self.sourced_fields() if not self.sources.get(name)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with every field (absent numbers as ``None``)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "queues":
                value = [queue_dict(q) for q in value]
            elif f.name == "sources":
                value = dict(value)
            elif f.name == "aliases":
                value = list(value)
            out[f.name] = value
        return out


def queue_dict(queue: Queue) -> dict[str, Any]:
    """A queue as a dict without its absent limits (what TOML and the store hold)."""
    out: dict[str, Any] = {"name": queue.name, "min_nodes": queue.min_nodes}
    if queue.max_nodes is not None:
        out["max_nodes"] = queue.max_nodes
    if queue.max_walltime_s is not None:
        out["max_walltime_s"] = queue.max_walltime_s
    out["charge_multiplier"] = queue.charge_multiplier
    return out


# --- validation -----------------------------------------------------------------------------

#: Integer facts and the smallest value that makes sense.
INT_FIELDS: dict[str, int] = {
    "nodes": 1, "cores_per_node": 1, "gpus_per_node": 0, "time_granularity_s": 1,
}
#: Real-valued facts; ``True`` when zero is allowed.
FLOAT_FIELDS: dict[str, bool] = {
    "peak_flops_per_node": False, "mem_bw_bytes_per_s_per_node": False,
    "node_memory_bytes": False, "net_injection_bw_bytes_per_s": False,
    "net_latency_s": False, "fs_bw_bytes_per_s": False, "charge_factor": True,
}
#: The largest whole number a store keeps (PostgreSQL's INTEGER; SQLite's is wider, but an
#: entry exported from SQLite must add to a PostgreSQL store too), and far more than any
#: machine's nodes, cores or seconds of time granularity.
MAX_WHOLE_NUMBER = 2**31 - 1
NUMERIC_FIELDS = [*INT_FIELDS, *FLOAT_FIELDS]
STR_FIELDS = ["allocation_unit", "scheduler", "notes"]
#: The most characters of a system's name (the store's ``systems.name`` column).
MAX_NAME_CHARS = 200
TOP_LEVEL_KEYS = ["name", *NUMERIC_FIELDS, *STR_FIELDS, "queues", "sources", "aliases"]
#: Facts a ``[sources]`` table may name (strings like the scheduler may be sourced too).
SOURCE_KEYS = [*NUMERIC_FIELDS, "queues", "allocation_unit", "scheduler"]
QUEUE_KEYS = ["name", "min_nodes", "max_nodes", "max_walltime_s", "charge_multiplier"]


class _Reader:
    """Validates one entry's raw TOML table, raising with file, line and key on the first
    problem so that the user fixes one thing at a time with an exact pointer."""

    def __init__(self, path: str | Path, text: str, prefix: str = "") -> None:
        self.path, self.text, self.prefix = path, text, prefix

    def fail(self, key: str, reason: str) -> BadInputError:
        return BadInputError(f"key {self.prefix}{key}: {reason}", path=self.path,
                             line_no=_line_of(self.text, f"{self.prefix}{key}"))

    def unknown_keys(self, table: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
        for key in table:
            if where and key in TOP_LEVEL_KEYS and key not in allowed:
                # TOML files a key under the last header: the entry's nodes below a queue
                table_name = "[[queues]]" if where.startswith("queues") else "[sources]"
                raise self.fail(f"{where}{key}", f"is a key of the entry, but below a "
                                f"{table_name} header TOML reads it as that table's; move it "
                                "above the entry's first [...] header")
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean '{close[0]}'?" if close else (
                    "allowed keys: " + ", ".join(allowed))
                raise self.fail(f"{where}{key}", f"unknown key; remove it or fix its spelling "
                                f"({hint}); see docs/catalog.md")

    def integer(self, key: str, value: Any, minimum: int, minimum_from: str = "") -> int:
        """A whole number from ``minimum`` on; ``minimum_from`` names the key that set the
        minimum ("5 is below min_nodes 10", not a bare "below 10")."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected a whole number, got {_shown(value)}; write it "
                            "without quotes or decimals, or leave the key out if unknown")
        if value < minimum:
            below = f"{minimum_from} {minimum}" if minimum_from else str(minimum)
            raise self.fail(key, f"{value} is below {below}; give the documented value or "
                            "leave the key out if unknown")
        if value > MAX_WHOLE_NUMBER:
            raise self.fail(key, f"{value} is above {MAX_WHOLE_NUMBER}, the most a store "
                            "keeps; give the documented value or leave the key out if unknown")
        return value

    def real(self, key: str, value: Any, zero_ok: bool) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected a number, got {_shown(value)}; write it without "
                            "quotes (e.g. 1.0e11), or leave the key out if unknown")
        number = float(value)
        if not math.isfinite(number) or number < 0 or (number == 0 and not zero_ok):
            bound = "zero or more" if zero_ok else "more than zero"
            raise self.fail(key, f"{value} must be finite and {bound}; give the documented "
                            "value in the unit the key names, or leave the key out if unknown")
        return number

    def string(self, key: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a non-empty string, got {_shown(value)}; quote it")
        if not value.strip():  # quoted already: "quote it" sent the user looking for quotes
            raise self.fail(key, f"is {'empty' if not value else 'blank'}; give its text")
        if "\x00" in value:  # PostgreSQL's text refuses it: an internal error there
            raise self.fail(key, "holds a NUL character (\\u0000), which a store cannot "
                            "keep; remove it")
        return value

    def queue(self, index: int, raw: Any) -> Queue:
        where = f"queues[{index}]"
        if not isinstance(raw, dict):
            raise self.fail(where, "expected a table; write each queue as a [[queues]] block")
        self.unknown_keys(raw, QUEUE_KEYS, f"{where}.")
        if "name" not in raw:
            raise self.fail(f"{where}.name", "missing; every queue needs its scheduler name")
        min_nodes = self.integer(f"{where}.min_nodes", raw.get("min_nodes", 1), 1)
        max_nodes = raw.get("max_nodes")
        if max_nodes is not None:
            max_nodes = self.integer(f"{where}.max_nodes", max_nodes, min_nodes, "min_nodes")
        walltime = raw.get("max_walltime_s")
        return Queue(
            name=self.string(f"{where}.name", raw["name"]),
            min_nodes=min_nodes,
            max_nodes=max_nodes,
            max_walltime_s=None if walltime is None else self.real(
                f"{where}.max_walltime_s", walltime, False),
            charge_multiplier=self.real(f"{where}.charge_multiplier",
                                        raw.get("charge_multiplier", 1.0), True),
        )

    def source(self, key: str, value: Any, values: Mapping[str, Any]) -> str:
        """The source of ``key``, refused where it is not text or the entry does not set
        ``key``: both are most often a fact written below the ``[sources]`` header, which
        TOML files under it (``allocation_unit = "CU"`` there was stored as the source of
        an allocation unit the entry lacked, with no word)."""
        moved = (f"keys below the [sources] header belong to it, so write {key} = ... "
                 "above that header")
        if not isinstance(value, str):
            raise self.fail(f"sources.{key}", f"expected the URL or document title {key} "
                            f"comes from, got {_shown(value)}; {moved}, and its source here "
                            "in quotes")
        if values.get(key) in (None, ()):  # () is no queues
            fix = "add the [[queues]] blocks it documents" if key == "queues" else moved
            raise self.fail(f"sources.{key}", f"gives a source for {key}, which this entry "
                            f"does not set; {fix}, or remove this line")
        return self.string(f"sources.{key}", value)

    def names_compare(self, name: str, aliases: Sequence[str]) -> None:
        """Refuse a name or alias of punctuation only: names compare ignoring case and
        punctuation (:func:`name_key`), so ``--`` would be every such name, and a log's
        system ``?`` would be stored as this machine."""
        for key, value in [("name", name), *((f"aliases[{i}]", a) for i, a in enumerate(aliases))]:
            if not name_key(value):
                raise self.fail(key, f"{value!r} has no letter or digit, and names compare "
                                "ignoring case and punctuation, so it would stand for any such "
                                "name; give the name that logs and users write")

    def queues_distinct(self, queues: Sequence[Queue]) -> None:
        """Refuse a queue name given twice: a copied block whose name was not changed, and
        advice naming that queue would not say which of the two limits it used."""
        first_of: dict[str, int] = {}
        for index, queue in enumerate(queues):
            earlier = first_of.setdefault(queue.name, index)
            if earlier != index:
                raise self.fail(f"queues[{index}].name",
                                f"queue {queue.name!r} is also queues[{earlier}]; give each "
                                "[[queues]] block the name its scheduler takes, or remove one")

    def queues_fit(self, queues: Sequence[Queue], nodes: int | None) -> None:
        """Refuse a queue that takes more nodes than the machine has: one of the two
        numbers is a typo, and the advice would recommend node counts no job can get."""
        for index, queue in enumerate(queues):
            bound = max(queue.min_nodes, queue.max_nodes or 0)
            if nodes is not None and bound > nodes:
                key = "max_nodes" if queue.max_nodes and queue.max_nodes > nodes else "min_nodes"
                raise self.fail(f"queues[{index}].{key}",
                                f"queue {queue.name!r} takes up to {bound} nodes, more than the "
                                f"machine's {nodes} (key nodes); fix the one that is wrong")

    def spec(self, raw: Mapping[str, Any], origin: str) -> SystemSpec:
        self.unknown_keys(raw, TOP_LEVEL_KEYS, "")
        if "name" not in raw:
            raise self.fail("name", "missing; every entry needs the system's name")
        values: dict[str, Any] = {"name": self.string("name", raw["name"]).strip()}
        if len(values["name"]) > MAX_NAME_CHARS:
            raise self.fail("name", f"{len(values['name'])} characters long, more than the "
                            f"{MAX_NAME_CHARS} a store keeps; shorten it")
        for key, minimum in INT_FIELDS.items():
            if key in raw:
                values[key] = self.integer(key, raw[key], minimum)
        for key, zero_ok in FLOAT_FIELDS.items():
            if key in raw:
                values[key] = self.real(key, raw[key], zero_ok)
        for key in STR_FIELDS:
            if key in raw:
                values[key] = self.string(key, raw[key])
        queues = raw.get("queues", [])
        if not isinstance(queues, list):
            raise self.fail("queues", "expected an array of tables; write [[queues]] blocks")
        values["queues"] = tuple(self.queue(i, q) for i, q in enumerate(queues))
        self.queues_distinct(values["queues"])
        self.queues_fit(values["queues"], values.get("nodes"))
        aliases = raw.get("aliases", [])
        if not isinstance(aliases, list):
            raise self.fail("aliases", "expected an array of strings, e.g. [\"opal\"]")
        values["aliases"] = tuple(self.string(f"aliases[{i}]", a) for i, a in enumerate(aliases))
        self.names_compare(values["name"], values["aliases"])
        sources = raw.get("sources", {})
        if not isinstance(sources, dict):
            raise self.fail("sources", "expected a table; write a [sources] block")
        self.unknown_keys(sources, SOURCE_KEYS, "sources.")
        values["sources"] = {k: self.source(k, v, values) for k, v in sources.items()}
        spec = SystemSpec(**values, origin=origin)
        missing = spec.unsourced_fields()
        if missing:
            raise self.fail(missing[0], f'has no source; add {missing[0]} = "URL or document '
                            'title" to the [sources] table (every number needs one), or leave '
                            "the key out if it is not documented")
        return spec


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


#: A TOML table header, ``[sources]`` or ``[[systems.queues]]``: dotted bare or quoted
#: names only, so that a line of a multi-line array (``["a", "b"]``) is not taken for one.
_HEADER = re.compile(r"""^\s*(\[\[?)\s*([\w\-."' ]+?)\s*\]\]?\s*(#.*)?$""")
#: One step of a key path: ``queues[3]`` is ("queues", 3), ``sources`` is ("sources", None).
_Step = tuple[str, "int | None"]


def _steps(dotted: str) -> tuple[_Step, ...]:
    found = (re.fullmatch(r"([^\[]+)(?:\[(\d+)\])?", part) for part in dotted.split("."))
    return tuple((m.group(1), None if m.group(2) is None else int(m.group(2)))
                 for m in found if m)


def _header_table(header: re.Match[str], counts: dict[tuple[Any, ...], int]) -> tuple[_Step, ...]:
    """The table a header opens, as steps; ``counts`` tracks how many blocks of each array
    of tables came before, so the third ``[[systems.queues]]`` after the fifth
    ``[[systems]]`` is ``systems[4].queues[2]`` (TOML attaches it to the latest entry)."""
    names = [name.strip().strip("\"'") for name in header.group(2).split(".")]
    table: tuple[_Step, ...] = ()
    for name in names[:-1]:
        seen = counts.get((*table, name))
        table = (*table, (name, None if seen is None else seen - 1))
    if header.group(1) == "[[":
        counts[(*table, names[-1])] = counts.get((*table, names[-1]), 0) + 1
        return (*table, (names[-1], counts[(*table, names[-1])] - 1))
    return (*table, (names[-1], None))


def _line_of(text: str, key: str) -> int | None:
    """1-based line of ``key``, a path such as ``systems[4].queues[3].max_nodes``, looked
    up in its own table: in an export of fifteen entries, the fifth entry's ``nodes`` is
    not the first entry's. A key its table lacks (a queue without a name) points at the
    table's header; one with no table at all, nowhere."""
    *tables, leaf = key.split(".")
    wanted = _steps(".".join(tables)) if tables else ()
    assignment = re.compile(rf"^\s*\"?{re.escape(_steps(leaf)[0][0])}\"?\s*=")
    counts: dict[tuple[Any, ...], int] = {}
    table: tuple[_Step, ...] = ()
    header_line = None
    for line_no, line in enumerate(text.split("\n"), start=1):
        header = _HEADER.match(line)
        if header:
            table = _header_table(header, counts)
            if table == wanted and header_line is None:
                header_line = line_no
        elif table == wanted and assignment.match(line):
            return line_no
    return header_line


def parse_toml(text: str, path: str | Path, *, origin: str = "user") -> list[SystemSpec]:
    """The entries in one TOML document: a single system (top-level keys) or many
    (``[[systems]]``, as ``systems export`` writes them). The TOML parser is imported
    here, when a document is read: an estimate that finds its machine in no shipped
    file reads none."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise BadInputError(f"not valid TOML ({exc}); fix the syntax at that spot",
                            path=path, line_no=int(found.group(1)) if found else None) from exc
    if "systems" in document:
        entries = document["systems"]
        extra = [k for k in document if k != "systems"]
        if extra or not isinstance(entries, list) or not entries:
            raise BadInputError(
                "key systems: a file with [[systems]] blocks must hold nothing else; put "
                "every entry in its own [[systems]] block (as 'perfpredict systems export' "
                "writes them) or write a single entry with top-level keys", path=path)
        return [_Reader(path, text, f"systems[{i}].").spec(raw, origin)
                for i, raw in enumerate(entries)]
    return [_Reader(path, text).spec(document, origin)]


def load_toml_systems(path: str | Path, *, origin: str = "user") -> list[SystemSpec]:
    """Every entry in the TOML file at ``path``, validated; ``-`` reads standard input, as
    ``ingest`` and ``estimate --input`` do (``perfpredict systems export | perfpredict
    --db OTHER systems add -`` copies a catalog; it was "-: no such file")."""
    from perfpredict.ingest._text.lines import STDIN_NAME, STDIN_PATH

    if str(named_path(path, "a catalog's TOML file")) == STDIN_PATH:
        if sys.stdin is None or sys.stdin.isatty():  # nothing piped in: it would wait
            raise BadInputError("standard input is a terminal, not a pipe; pipe the TOML in "
                                "(perfpredict systems export | perfpredict --db OTHER "
                                "systems add -) or give a file", path=STDIN_NAME)
        try:
            text = sys.stdin.read().removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            raise BadInputError("cannot read it (UnicodeDecodeError); give UTF-8 TOML",
                                path=STDIN_NAME) from exc
        return parse_toml(text, STDIN_NAME, origin=origin)
    path = Path(path)
    try:  # an editor's "UTF-8 with BOM" too: the mark is no TOML, and nothing shows it
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise BadInputError("no such file; check the path", path=path) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read it ({type(exc).__name__}); give a UTF-8 TOML file",
                            path=path) from exc
    return parse_toml(text, path, origin=origin)


def load_toml(path: str | Path, *, origin: str = "user") -> SystemSpec:
    """The one entry in the TOML file at ``path``, validated (see :func:`parse_toml`)."""
    specs = load_toml_systems(path, origin=origin)
    if len(specs) != 1:
        raise BadInputError(f"holds {len(specs)} entries where one was expected; split it "
                            "or add it with 'perfpredict systems add'", path=path)
    return specs[0]


# --- writing ---------------------------------------------------------------------------------

def _shortest_float(value: float) -> str:
    """``1.912e+14`` rather than ``191200000000000.0``: the way the documentation states
    it, and still exactly the same float when read back."""
    plain = repr(value)
    for digits in range(1, 18):
        scientific = f"{value:.{digits - 1}e}"
        if float(scientific) == value:
            return min(plain, scientific, key=len)
    return plain


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _shortest_float(value)
    if isinstance(value, str):
        # JSON string escapes are a subset of TOML basic-string escapes; TOML also
        # forbids a raw DEL, which JSON leaves alone.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _toml_lines(spec: SystemSpec, table: str | None) -> list[str]:
    """One entry as TOML lines: top-level keys when ``table`` is None, else inside
    ``[[table]]`` with its sub-tables named ``table.sources`` and ``table.queues``."""
    lines = [f"[[{table}]]"] if table else []
    lines.append(f"name = {_toml_value(spec.name)}")
    for key in [*NUMERIC_FIELDS, "allocation_unit", "scheduler", "notes"]:
        value = getattr(spec, key)
        if value is not None:
            lines.append(f"{key} = {_toml_value(value)}")
    if spec.aliases:
        lines.append(f"aliases = {_toml_value(spec.aliases)}")
    prefix = f"{table}." if table else ""
    if spec.sources:
        lines += ["", f"[{prefix}sources]"]
        lines += [f"{key} = {_toml_value(url)}" for key, url in spec.sources.items()]
    for queue in spec.queues:
        lines += ["", f"[[{prefix}queues]]"]
        lines += [f"{key} = {_toml_value(v)}" for key, v in queue_dict(queue).items()]
    return lines


def to_toml(spec: SystemSpec) -> str:
    """One entry as a TOML document that :func:`load_toml` reads back to an equal spec."""
    return "\n".join(_toml_lines(spec, None)) + "\n"


def many_to_toml(specs: Sequence[SystemSpec]) -> str:
    """Several entries as one TOML document of ``[[systems]]`` blocks."""
    blocks = ["\n".join(_toml_lines(spec, "systems")) for spec in specs]
    return "\n\n".join(blocks) + "\n" if blocks else ""
