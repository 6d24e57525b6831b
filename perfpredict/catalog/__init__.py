"""The system catalog: facts about machines (node counts, per-node peak flop/s and
bandwidths, queue limits, charge rules), each number with its source.

The shipped entries are TOML files in ``systems/``; the store's ``systems`` table holds them
together with entries users add and placeholders ingest creates. The scaling laws read the
per-node numbers; the advice reads :func:`queue_for` and :func:`charge`. See
``docs/catalog.md`` for the fields and how to add a machine.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from perfpredict.catalog.entries import (
    Queue,
    SystemSpec,
    load_toml,
    load_toml_systems,
    name_key,
    parse_toml,
    to_toml,
)

if TYPE_CHECKING:
    from perfpredict.catalog.store_sync import (
        add_system,
        add_systems_from_file,
        export_systems,
        get_system,
        list_systems,
        require_system,
        seed_catalog,
    )


def __getattr__(name: str) -> Any:
    """The store's side of the catalog (the names of ``__all__`` not defined here),
    imported when first asked for: it needs SQLAlchemy (about 0.14 s), which an estimate
    reading the shipped entries (:func:`bundled_system`) must not pay."""
    if name in __all__:
        from perfpredict.catalog import store_sync

        return getattr(store_sync, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Queue", "SystemSpec", "add_system", "add_systems_from_file", "bundled_system",
    "bundled_systems", "charge", "export_systems", "get_system", "list_systems", "load_toml",
    "load_toml_systems", "name_key",
    "parse_toml", "queue_for", "require_system", "seed_catalog", "to_toml",
]


@lru_cache(maxsize=1)
def _bundled() -> tuple[SystemSpec, ...]:
    folder = resources.files("perfpredict.catalog") / "systems"
    specs = []
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        if item.name.endswith(".toml"):
            specs.extend(parse_toml(item.read_text(encoding="utf-8"), f"catalog/{item.name}",
                                    origin="catalog"))
    return tuple(specs)


def bundled_systems() -> list[SystemSpec]:
    """The entries shipped with perfpredict, read once per process."""
    return list(_bundled())


def bundled_system(name: str) -> SystemSpec | None:
    """The shipped entry called ``name`` or having it as an alias (ignoring case, spaces
    and punctuation: :func:`name_key`), read without opening a store (an estimate must
    stay fast)."""
    return next((spec for spec in _bundled() if spec.known_as(name)), None)


def queue_for(spec: SystemSpec, nodes: int, queue_name: str | None = None) -> Queue | None:
    """The queue a job of ``nodes`` nodes lands in: the first listed queue whose node range
    holds it (entries list the default production queues first, so Frontier's 91 nodes get
    2 h, 92 get 6 h and 184 get 12 h). With ``queue_name``, only that queue is considered.
    None when no listed queue accepts the job, which advice should report: such a job may
    pend forever."""
    for queue in spec.queues:
        if (queue_name is None or queue.name == queue_name) and queue.accepts(nodes):
            return queue
    return None


def charge(spec: SystemSpec, nodes: int, hours: float, queue: Queue | None = None) -> float | None:
    """Allocation units (``spec.allocation_unit``) a job of ``nodes`` nodes running
    ``hours`` of elapsed time costs: nodes * hours * charge_factor * the queue's multiplier
    (the queue from :func:`queue_for` when not given; 1 when no queue applies). None when
    the system's charge factor is unknown, so no figure is ever made up."""
    if spec.charge_factor is None:
        return None
    queue = queue or queue_for(spec, nodes)
    multiplier = queue.charge_multiplier if queue is not None else 1.0
    return nodes * hours * spec.charge_factor * multiplier
