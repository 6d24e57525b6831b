"""The system catalog: facts about machines (node counts, per-node peak flop/s and
bandwidths, queue limits, charge rules), each number with its source.

The shipped entries are TOML files in ``systems/``; the store's ``systems`` table holds them
together with entries users add and placeholders ingest creates. The scaling laws read the
per-node numbers; the advice reads :func:`queue_for` and :func:`charge`. See
``docs/catalog.md`` for the fields and how to add a machine.
"""

from __future__ import annotations

import importlib
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfpredict._listing import listing
from perfpredict.names import name_key

if TYPE_CHECKING:
    from perfpredict.catalog.entries import (
        Queue,
        SystemSpec,
        load_toml,
        load_toml_systems,
        parse_toml,
        to_toml,
    )
    from perfpredict.catalog.merge import SystemChange
    from perfpredict.catalog.store_sync import (
        add_system,
        add_systems_from_file,
        export_systems,
        get_system,
        list_systems,
        remove_system,
        require_system,
        seed_catalog,
    )

#: The module of each name of ``__all__`` not defined here, imported when first asked
#: for: the store's side of the catalog needs SQLAlchemy (about 0.14 s), and the entries'
#: fields and TOML reading (1.6 ms) are not needed by an estimate whose machine no
#: shipped file names (:func:`bundled_system`).
_LAZY = {**dict.fromkeys(("Queue", "SystemSpec", "load_toml", "load_toml_systems",
                          "parse_toml", "to_toml"), "entries"),
         **dict.fromkeys(("add_system", "add_systems_from_file", "export_systems",
                          "get_system", "list_systems", "remove_system", "require_system",
                          "seed_catalog"),
                         "store_sync"),
         "SystemChange": "merge"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"perfpredict.catalog.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Queue", "SystemChange", "SystemSpec", "add_system", "add_systems_from_file",
    "bundled_system", "bundled_systems", "charge", "export_systems", "get_system",
    "list_systems", "load_toml", "load_toml_systems", "name_key", "outgrown_note",
    "parse_toml", "queue_for", "remove_system", "require_system", "seed_catalog", "to_toml",
]
__dir__ = listing(globals(), __all__)


#: The shipped entries, a TOML file per machine, beside this module (as the bundled data
#: sets are beside theirs).
_SYSTEMS = Path(__file__).resolve().parent / "systems"


@lru_cache(maxsize=1)
def _shipped_files() -> tuple[tuple[str, str, str], ...]:
    """Each shipped file's name, text and text as :func:`name_key` reads names, read
    once per process."""
    return tuple((path.name, text, name_key(text)) for path in sorted(_SYSTEMS.glob("*.toml"))
                 for text in [path.read_text(encoding="utf-8")])


@cache
def _file_entries(file_name: str, text: str) -> tuple[SystemSpec, ...]:
    from perfpredict.catalog.entries import parse_toml

    return tuple(parse_toml(text, f"catalog/{file_name}", origin="catalog"))


def bundled_systems() -> list[SystemSpec]:
    """The entries shipped with perfpredict, read once per process."""
    return [spec for file_name, text, _ in _shipped_files()
            for spec in _file_entries(file_name, text)]


def bundled_system(name: str) -> SystemSpec | None:
    """The shipped entry called ``name`` or having it as an alias (ignoring case, spaces
    and punctuation: :func:`name_key`), read without opening a store (an estimate must
    stay fast). Only the files whose text holds the name so read are parsed: an estimate
    of a machine the catalog lacks (every MLPerf submitter's) parsed all fifteen, and
    imported the TOML parser, to find none (about 7 ms of its 0.15 s)."""
    key = name_key(name)
    return next((spec for file_name, text, keyed in _shipped_files() if key in keyed
                 for spec in _file_entries(file_name, text) if spec.known_as(name)), None)


def outgrown_note(name: str, machine_nodes: int, measured_nodes: float) -> str | None:
    """What an estimate and advice say where the catalog gives ``name`` fewer nodes
    (``machine_nodes``) than a stored run measured (``measured_nodes``): the entry is
    out of date (the machine grew, or the entry describes a partition) and bounds no node
    count. None where it does not. Said the same by both: ``estimate`` called a scale
    beyond the runs more than the machine has where ``advise`` swept past it unsaid."""
    if machine_nodes >= measured_nodes:
        return None
    return (f"{name} has {machine_nodes:,} nodes in the catalog, fewer than the "
            f"{measured_nodes:g} a stored run measured: the entry is out of date and bounds "
            "no node count ('perfpredict systems add' corrects it)")


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
