"""What ``systems add`` does to an entry the store already holds under the same name: the
facts an entry gives go over the held ones, the facts it leaves out are kept, and the
change is described fact by fact. Plain data, no store.

An entry names a machine the catalog ships (Frontier) or one added before, most often to
correct one number ("Frontier has 9,856 nodes now"). Stored as given, it replaced the
whole entry: the per-node peak and bandwidths the roofline reads, the queues ``advise``
caps walltimes by and the charge factor were gone, and ``systems add`` said only
"added". A fact is dropped only on request (``replace``), and the description says which.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from perfpredict.catalog.entries import NUMERIC_FIELDS, SystemSpec
from perfpredict.counts import first_names, shown
from perfpredict.names import name_key

#: The facts of an entry, each kept or given whole (a queue list is one fact, with one
#: source); ``name`` is the entry's identity and ``aliases`` are only ever added to.
FACT_FIELDS = [*NUMERIC_FIELDS, "allocation_unit", "scheduler", "queues", "notes"]


def _has(spec: SystemSpec, field_name: str) -> bool:
    """Whether ``spec`` states ``field_name`` (TOML has no null: a key left out is None,
    and no queues is an empty tuple)."""
    return getattr(spec, field_name) not in (None, ())


def merged(held: SystemSpec, given: SystemSpec) -> SystemSpec:
    """``given`` over ``held``: each fact, with its source, from ``given`` where it
    states it, else from ``held``; the aliases of both (a name logs used for the machine
    keeps finding it). The result has ``given``'s origin."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for field_name in FACT_FIELDS:
        spec = given if _has(given, field_name) else held
        values[field_name] = getattr(spec, field_name)
        if field_name in spec.sources:
            sources[field_name] = spec.sources[field_name]
    return SystemSpec(
        name=held.name,
        **values,
        sources=sources,
        aliases=(*held.aliases, *given.aliases),
        origin=given.origin,
    )


def _fact_change(held: SystemSpec, stored: SystemSpec, field_name: str) -> str | None:
    """How ``field_name`` went from ``held`` to ``stored``, None where it did not: a
    number with both values ("nodes 9408 -> 9856", "unknown" where absent), any other
    fact by its name, a source alone as "the source of" the fact."""
    before, after = getattr(held, field_name), getattr(stored, field_name)
    if before == after:
        if held.sources.get(field_name) == stored.sources.get(field_name):
            return None
        return f"the source of {field_name}"
    if field_name in NUMERIC_FIELDS:
        return (
            f"{field_name} {'unknown' if before is None else shown(before)} -> "
            f"{'unknown' if after is None else shown(after)}"
        )
    return field_name


#: What adding or removing an entry did (:class:`SystemChange`).
Action = Literal["added", "completed", "updated", "replaced", "unchanged", "removed", "restored"]


@dataclass(frozen=True)
class SystemChange:
    """What adding or removing an entry did to the store's catalog, for its user to read.

    ``action`` is ``added`` (a name the store did not hold), ``completed`` (an ingest
    placeholder, which holds no facts, given its entry), ``updated`` (facts given over a
    held entry, the others kept), ``replaced`` (the held entry replaced whole, on
    request), ``unchanged`` (every fact given is the one held: nothing is written, so a
    shipped entry goes on following the catalog of later releases), ``removed`` (an entry
    of the user's or ingest's taken out) or ``restored`` (an entry added over a shipped
    one taken out, the shipped one in force again). ``changed`` lists each fact that
    changed, ``kept`` the held facts an update left out, ``dropped`` those a replacement
    or a restore removed, ``new_aliases`` the names added; ``kept_from`` says whose the
    held entry was. ``spec`` is the entry in force now (the removed one for ``removed``)."""

    spec: SystemSpec
    action: Action
    changed: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    new_aliases: tuple[str, ...] = ()
    kept_from: str = "the stored entry"

    def summary(self) -> str:
        """One line: ``updated Frontier: changed nodes 9408 -> 9856; kept cores_per_node,
        ... from the shipped catalog``."""
        head = f"{self.action} {self.spec.name}"
        if self.action == "completed":
            return f"{head} (the placeholder ingest made for a log's name)"
        if self.action == "unchanged":
            return summaries([self])[0]
        if self.action == "restored":
            head += " as shipped"
        parts = [f"changed {', '.join(self.changed)}"] if self.changed else []
        if self.new_aliases:
            parts.append(f"added aliases {', '.join(self.new_aliases)}")
        if self.kept:
            parts.append(f"kept {', '.join(self.kept)} from {self.kept_from}")
        if self.dropped:
            parts.append(f"dropped {', '.join(self.dropped)}")
        return f"{head}: {'; '.join(parts)}" if parts else head


def change_to(held: SystemSpec | None, given: SystemSpec, *, whole: bool) -> SystemChange:
    """What storing ``given`` over ``held`` (None: the store holds no entry of the name)
    does: ``given`` replaces an ingest placeholder, and ``held`` whole when ``whole``;
    else it is :func:`merged` over ``held``. ``held`` of origin ``catalog`` is the
    shipped entry, which is what its kept facts are said to come from."""
    if held is None:
        return SystemChange(given, "added")
    if held.origin == "ingest":
        return SystemChange(given, "completed")
    stored = given if whole else merged(held, given)
    held_names = {name_key(n) for n in (held.name, *held.aliases)}
    new_aliases = tuple(a for a in stored.aliases if name_key(a) not in held_names)
    gone = tuple(f for f in FACT_FIELDS if _has(held, f) and not _has(stored, f))
    gone_aliases = tuple(a for a in held.aliases if not stored.known_as(a))
    changes = tuple(
        c
        for f in FACT_FIELDS
        if _has(stored, f)
        for c in [_fact_change(held, stored, f)]
        if c is not None
    )
    if not (changes or new_aliases or gone or gone_aliases):
        return SystemChange(held, "unchanged")
    kept = () if whole else tuple(f for f in FACT_FIELDS if _has(held, f) and not _has(given, f))
    return SystemChange(
        stored,
        "replaced" if whole else "updated",
        changed=changes,
        kept=kept,
        dropped=gone + tuple(f"alias {a}" for a in gone_aliases),
        new_aliases=new_aliases,
        kept_from="the shipped catalog" if held.origin == "catalog" else "the stored entry",
    )


def summaries(changes: Sequence[SystemChange]) -> list[str]:
    """A line per change (:meth:`SystemChange.summary`), the entries left unchanged
    named together in the last: ``systems export`` added back to the store it came from
    is a line, not one per machine saying nothing happened."""
    same = [change.spec.name for change in changes if change.action == "unchanged"]
    lines = [change.summary() for change in changes if change.action != "unchanged"]
    if same:
        lines.append(f"unchanged {first_names(same)}: every fact given is the one stored")
    return lines
