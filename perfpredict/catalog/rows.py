"""The catalog's entries as rows of the store's ``systems`` table and back, and which of
the entries a store and the shipped catalog hold answers a name: plain data, no
SQLAlchemy, so that ``estimate`` reads its machine's entry through the standard
library's sqlite3 (:func:`perfpredict.catalog.lookup.system_entry`) by the rules
``advise`` and ``systems show`` read it by through the store
(:func:`perfpredict.catalog.store_sync.get_system`).

Scalar facts live in columns (so SQL and the laws can use them directly); queues, sources,
scheduler, aliases and notes live in the JSON ``details`` column. ``origin`` says where a
row came from: ``catalog`` (shipped), ``ingest`` (a placeholder created when a log named an
unknown system) or ``user`` (``systems add``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from perfpredict.catalog.entries import INGEST_SOURCE, NUMERIC_FIELDS, Queue, SystemSpec, queue_dict

_COLUMNS = [*NUMERIC_FIELDS, "allocation_unit"]


def spec_to_row(spec: SystemSpec) -> dict[str, Any]:
    """The ``systems`` row for ``spec``."""
    row: dict[str, Any] = {"name": spec.name, "origin": spec.origin}
    row.update({column: getattr(spec, column) for column in _COLUMNS})
    row["details"] = {
        "scheduler": spec.scheduler,
        "queues": [queue_dict(q) for q in spec.queues],
        "sources": dict(spec.sources),
        "aliases": list(spec.aliases),
        "notes": spec.notes,
    }
    return row


def row_to_spec(row: Mapping[Any, Any]) -> SystemSpec:
    """A stored row as a spec. Ingest placeholders carry their note under ``note`` and no
    sources; their log-derived numbers are attributed to the ingest so that an export of
    them stays re-addable. ``details`` as SQLAlchemy reads it (a dict) or as sqlite3
    does (its JSON text)."""
    details = row.get("details") or {}
    details = dict(json.loads(details) if isinstance(details, str) else details)
    origin = row.get("origin") or "catalog"
    sources = dict(details.get("sources") or {})
    if origin == "ingest":
        for column in NUMERIC_FIELDS:
            if row.get(column) is not None:
                sources.setdefault(column, INGEST_SOURCE)
    values: dict[str, Any] = {column: row.get(column) for column in _COLUMNS}
    for column in ("nodes", "cores_per_node", "gpus_per_node", "time_granularity_s"):
        if values[column] is not None:
            values[column] = int(values[column])
    return SystemSpec(
        name=row["name"],
        **values,
        scheduler=details.get("scheduler"),
        queues=tuple(Queue(**q) for q in details.get("queues") or []),
        sources=sources,
        aliases=tuple(details.get("aliases") or []),
        notes=details.get("notes") or details.get("note"),
        origin=origin,
    )


def follows_the_catalog(held: SystemSpec, shipped: SystemSpec) -> bool:
    """Whether the stored ``held`` is to be replaced by the ``shipped`` entry of its name:
    an ingest placeholder, or an entry an earlier release shipped (never the user's)."""
    return held.origin == "ingest" or (held.origin == "catalog" and held != shipped)


def with_shipped(stored: Iterable[SystemSpec],
                 shipped: Iterable[SystemSpec]) -> dict[str, SystemSpec]:
    """The entries of a store by name as seeding it with the ``shipped`` ones would leave
    them (:func:`perfpredict.catalog.store_sync.seed_catalog`): a shipped entry the store
    lacks added, one it holds unedited or as an ingest placeholder brought up to date,
    and every entry a user added or edited kept, over the shipped one of its name."""
    by_name = {spec.name: spec for spec in stored}
    for spec in shipped:
        if spec.name not in by_name or follows_the_catalog(by_name[spec.name], spec):
            by_name[spec.name] = spec
    return by_name


def entry_named(specs: Iterable[SystemSpec], name: str) -> SystemSpec | None:
    """Of ``specs``, the entry called ``name`` or having it as an alias (compared by
    :func:`~perfpredict.names.name_key`): an entry of the catalog or a user before an
    ingest placeholder of the same machine (which holds only what a log told), an exact
    name before an alias."""
    candidates = [spec for spec in specs if spec.known_as(name)]
    if not candidates:
        return None
    return min(candidates, key=lambda spec: (spec.origin == "ingest", spec.name != name))
