"""The catalog in the store's ``systems`` table: seeding the shipped entries, listing,
looking up, adding, removing and exporting (the rows' shape and the rules of a lookup:
:mod:`perfpredict.catalog.rows`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Connection

from perfpredict.catalog.entries import (
    SystemSpec,
    load_toml_systems,
    many_to_toml,
    name_key,
    parse_toml,
    to_toml,
)
from perfpredict.catalog.merge import SystemChange, change_to
from perfpredict.catalog.rows import (
    entry_named,
    follows_the_catalog,
    row_to_spec,
    spec_to_row,
    with_shipped,
)
from perfpredict.counts import counted
from perfpredict.errors import BadInputError, NotFoundError, given
from perfpredict.names import close_names, refuse_blank_system
from perfpredict.store import Store
from perfpredict.store.dialect import insert_ignoring_duplicates
from perfpredict.store.handle import takes_store
from perfpredict.store.schema import runs, systems


def _names(spec: SystemSpec) -> set[str]:
    return {name_key(n) for n in (spec.name, *spec.aliases)}


def _check_clashes(conn: Connection, specs: list[SystemSpec],
                   path: str | Path | None = None) -> None:
    """Refuse entries whose name or aliases name another machine of the catalog (names
    compare ignoring case and punctuation, as lookups do) or another entry added with
    them: "FRONTIER" beside the shipped "Frontier" made a second machine that hid the
    first from every lookup, and an alias two machines share found whichever came
    first. The same name is stored over its entry; an ingest placeholder may be completed. Two
    entries of one file never share a name, the same name included: the later replaced
    the earlier, and 'added 2 system(s): a1, a1' kept one. Nor does an entry take, under
    another name, the name of a system ingest made that holds runs
    (:func:`_refuse_splitting_runs`)."""
    from perfpredict.catalog import bundled_systems

    stored = [row_to_spec(row) for row in conn.execute(select(systems)).mappings()]
    names = {s.name for s in stored}
    stored += [s for s in bundled_systems() if s.name not in names]  # seeded on a read
    for i, spec in enumerate(specs):
        if spec.origin == "ingest":  # a log's name for a machine, never a new machine
            continue
        for other in stored:
            if other.name != spec.name and other.origin != "ingest":
                _refuse_shared_names(spec, other, "in the catalog", path,
                                     f"to change that machine, name it {other.name!r} "
                                     "exactly, else give this one names of its own")
            elif other.name != spec.name and name_key(other.name) in _names(spec):
                _refuse_splitting_runs(conn, spec, other.name, path)
        for other in specs[:i]:  # the same name too: the later entry replaced the earlier
            _refuse_shared_names(spec, other, "earlier in this file", path,
                                 "give each machine one entry, with names of its own")


def _refuse_splitting_runs(conn: Connection, spec: SystemSpec, placeholder: str,
                           path: str | Path | None) -> None:
    """Refuse ``spec`` where it names, under another name, the system ``placeholder``
    that ingest made for a log's name and that holds runs: ingest stores a run naming it
    under the entry's name from then on, and the runs stored before stayed under the
    log's, two systems of one machine, each with part of its curves ("lab7" at 1 and 2
    nodes, "Lab-Cluster-7" at 4 and 8, from an entry "Lab-Cluster-7" with the alias
    "lab7"). Completing the placeholder under its own name keeps them one system."""
    n_runs = conn.execute(select(func.count()).select_from(runs)
                          .where(runs.c.system == placeholder)).scalar_one()
    if n_runs:
        raise BadInputError(
            f"system {spec.name!r} takes the name {placeholder!r}, which the store holds "
            f"{counted(n_runs, 'run')} under (a system ingest made for a log's name): runs "
            f"ingested from now on would be stored under {spec.name!r} and those stay "
            f"under {placeholder!r}, one machine split in two; name the entry "
            f"{placeholder!r} (with {spec.name!r} among its aliases) to complete that "
            "system", path=path)


def _refuse_shared_names(spec: SystemSpec, other: SystemSpec, where: str,
                         path: str | Path | None, fix: str) -> None:
    shared = _names(spec) & _names(other)
    if shared:
        raise BadInputError(
            f"system {spec.name!r} shares the name or alias {sorted(shared)[0]!r} with "
            f"{other.name!r} {where} (names compare ignoring case and punctuation); {fix}",
            path=path)


def _store_entries(conn: Connection, specs: list[SystemSpec], path: str | Path | None,
                   *, whole: bool) -> list[SystemChange]:
    """Store ``specs`` in the caller's transaction, each over the entry the store holds
    of its name as :func:`~perfpredict.catalog.merge.change_to` says (its facts kept,
    unless ``whole``), names another machine has refused first (:func:`_check_clashes`).
    Delete + insert is the one spelling of a replace SQLite and PostgreSQL share, and the
    transaction makes it atomic. An entry the facts kept make invalid (a node count
    below the kept queues') is refused naming them."""
    _check_clashes(conn, specs, path)
    held = {spec.name: spec for spec in map(row_to_spec, conn.execute(select(systems).where(
        systems.c.name.in_([spec.name for spec in specs]))).mappings())}
    changes = [change_to(held.get(spec.name), spec, whole=whole) for spec in specs]
    for change in changes:
        if change.action == "unchanged":
            continue
        if change.kept:
            try:
                check_spec(change.spec, f"system {change.spec.name!r} with the facts kept "
                           f"from {change.kept_from}")
            except BadInputError as exc:
                if path is None:
                    raise
                raise exc.naming(path) from None
        conn.execute(delete(systems).where(systems.c.name == change.spec.name))
        conn.execute(systems.insert().values(**spec_to_row(change.spec)))
    return changes


def seed_catalog(store: Store) -> list[str]:
    """Insert the shipped entries the store lacks, and bring up to date those it holds as
    shipped by an earlier perfpredict or as ingest placeholders of a shipped name; returns
    the names written.

    A shipped entry the store holds unedited (origin ``catalog``) follows the shipped
    catalog: a store seeded before Aurora's queues were recorded listed Aurora with none,
    so ``advise`` capped no walltime there, in every later release. Called before every
    read so that a fresh store shows the catalog. Cheap when nothing changed (one SELECT
    of the shipped names' rows), idempotent, and it never overwrites an entry a user
    added or edited.
    """
    from perfpredict.catalog import bundled_systems

    if store.read_only:  # a shared store: list_systems shows the shipped entries instead
        return []
    shipped = bundled_systems()
    with store.engine.connect() as conn:
        held = {spec.name: spec for spec in map(row_to_spec, conn.execute(
            select(systems).where(systems.c.name.in_([s.name for s in shipped]))).mappings())}
    absent = [s for s in shipped if s.name not in held]
    stale = [s for s in shipped if s.name in held and follows_the_catalog(held[s.name], s)]
    if not absent and not stale:
        return []
    with store.engine.begin() as conn:
        # Conflict-tolerant statements: two commands seeding one fresh store at once
        # (ingest and list in parallel) both succeed and store each entry once.
        if absent:
            conn.execute(insert_ignoring_duplicates(conn, systems, "name"),
                         [spec_to_row(s) for s in absent])
        for spec in stale:
            conn.execute(update(systems).where(systems.c.name == spec.name,
                                               systems.c.origin.in_(["ingest", "catalog"]))
                         .values(**spec_to_row(spec)))
    return [s.name for s in [*absent, *stale]]


@takes_store
def list_systems(store: Store) -> list[SystemSpec]:
    """Every system in the store (the shipped catalog included), by name."""
    from perfpredict.catalog import bundled_systems

    seed_catalog(store)
    with store.engine.connect() as conn:
        stored = list(map(row_to_spec, conn.execute(select(systems)).mappings()))
    # a read-only store is not seeded: what seeding would have written, kept in memory
    by_name = with_shipped(stored, bundled_systems() if store.read_only else ())
    return sorted(by_name.values(), key=lambda s: s.name.casefold())


@takes_store
def get_system(store: Store, name: str) -> SystemSpec | None:
    """The system called ``name`` or having it as an alias, compared by :func:`name_key`
    (so a log's ``frontier``, "JUWELS Booster" and a data set's long label find their
    entry). An entry of the catalog or a user comes before an ingest placeholder of the
    same machine (which holds only what a log told), an exact name before an alias."""
    if not isinstance(name, str):  # was "'int' object has no attribute 'casefold'"
        raise BadInputError(f"a system is named by text, not {name!r}")
    refuse_blank_system(name, "the system name")
    return entry_named(list_systems(store), name)


@takes_store
def require_system(store: Store, name: str) -> SystemSpec:
    """Like :func:`get_system`, but an unknown name is a :class:`NotFoundError` that
    suggests the closest known names."""
    spec = get_system(store, name)
    if spec is not None:
        return spec
    close = close_names(name, [s.name for s in list_systems(store)])
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise NotFoundError(f"no system named {name!r} in the catalog; {hint}"
                        "'perfpredict systems list' shows them all, "
                        "'perfpredict systems add FILE.toml' adds one")


def check_spec(spec: SystemSpec, what: str | None = None) -> None:
    """Refuse ``spec`` where ``systems add`` would refuse its TOML (an empty name, a node
    count below 1, a number without a source): it is read back as that file would be
    (:func:`~perfpredict.catalog.entries.to_toml` writes one :func:`parse_toml` reads to
    an equal spec), so the catalog has one set of rules. A SystemSpec made in Python
    was stored as it came: ``SystemSpec(name="", nodes=-1)`` became a system. ``what``
    names the entry in the message (default: the SystemSpec)."""
    spec = given(spec, SystemSpec, "perfpredict.catalog.SystemSpec(name='Frontier', "
                 "nodes=9408, sources={'nodes': 'URL'})")
    what = what or f"SystemSpec {spec.name!r}"
    try:
        parse_toml(to_toml(spec), "<spec>", origin=spec.origin)
    except BadInputError as exc:
        raise BadInputError(f"{what}: {exc.reason}") from None
    except TypeError as exc:  # a value TOML has no form for (a dict for a number)
        raise BadInputError(f"{what}: {exc}") from None


@takes_store
def add_system(store: Store, spec: SystemSpec, *, replace: bool = False) -> SystemChange:
    """Store ``spec``, over any entry of the same name (a shipped one, one added before),
    and say what changed. The facts ``spec`` leaves out (None, no queues) are kept from
    that entry, with their sources, unless ``replace``, which stores ``spec`` whole and
    drops them: an entry correcting Frontier's node count dropped its peak, bandwidths,
    queues and charge factor, so the roofline and the advice lost them unsaid. The aliases
    of both are kept either way. An ingest placeholder is completed (it holds no facts).

    A spec ``systems add`` would refuse as TOML is refused the same way
    (:func:`check_spec`). One of origin ``catalog`` (a SystemSpec's default) is stored as
    the user's: a stored entry of the catalog's origin follows the shipped one
    (:func:`seed_catalog`), which would undo the user's edit of Frontier. The facts kept
    from a shipped entry are a copy: a later release's corrections of them reach the
    store once :func:`remove_system` takes the entry out."""
    check_spec(spec)
    seed_catalog(store)  # the shipped entry is the one to keep facts from
    with store.engine.begin() as conn:
        return _store_entries(conn, [dataclasses.replace(spec, origin="user")
                                     if spec.origin == "catalog" else spec],
                              None, whole=replace)[0]


@takes_store
def add_systems_from_file(store: Store, path: str | Path, *,
                          replace: bool = False) -> list[SystemChange]:
    """Validate every entry in the TOML file first (``-``: standard input), then store
    them all in one transaction (a file with one bad entry changes nothing), each as
    :func:`add_system` stores one: over the entry the store holds of its name, keeping
    the facts the file leaves out unless ``replace``."""
    from perfpredict.ingest._text.lines import stream_name

    specs = load_toml_systems(path, origin="user")
    seed_catalog(store)
    with store.engine.begin() as conn:  # a clash names standard input as the reading did
        return _store_entries(conn, specs, stream_name(Path(path)), whole=replace)


@takes_store
def remove_system(store: Store, name: str) -> SystemChange:
    """Take out of the store's catalog the entry called ``name`` (compared ignoring case
    and punctuation, not by alias: a removal names what it removes) that ``systems add``
    stored or ingest made; one added over a shipped entry gives way to the shipped one
    (action ``restored``). A shipped entry with none over it is refused: it would be
    seeded again on the next read, and the catalog's facts are corrected with
    :func:`add_system`.

    A system the store holds runs of is refused, with their count and the fix, rather
    than stripped of its facts with its runs kept: those runs would name a system the
    catalog lacks, so their estimates and advice would lose the roofline's numbers, the
    machine's size, its queue limits and charges without a word, and the next ingest
    of a log naming it would make a placeholder of it anyway. Runs go with ``runs
    delete``, which asks first, records the deletion, says which predictors learned from
    them, and takes out the placeholders only they named; dropping facts while keeping
    runs is an ``add_system(..., replace=True)``, asked for explicitly."""
    from perfpredict.catalog import bundled_systems

    spec = next((s for s in list_systems(store) if s.name == name), None) or require_system(
        store, name)
    if name_key(spec.name) != name_key(name):
        raise BadInputError(f"{name!r} is an alias of {spec.name!r}; give its name to "
                            "remove that entry")
    shipped = next((s for s in bundled_systems() if s.name == spec.name), None)
    if shipped is not None and spec.origin != "user":
        raise BadInputError(f"{spec.name!r} is shipped with perfpredict and the store holds "
                            "no entry added over it, so nothing is removed; correct its "
                            "facts with 'perfpredict systems add FILE.toml'")
    with store.engine.begin() as conn:
        if shipped is None:
            _refuse_removing_runs(conn, spec.name)
        conn.execute(delete(systems).where(systems.c.name == spec.name))
        if shipped is not None:
            conn.execute(systems.insert().values(**spec_to_row(shipped)))
    if shipped is None:
        return SystemChange(spec, "removed")
    back = change_to(spec, shipped, whole=True)
    return SystemChange(shipped, "restored", changed=back.changed, dropped=back.dropped,
                        new_aliases=back.new_aliases)


def _refuse_removing_runs(conn: Connection, name: str) -> None:
    n_runs = conn.execute(select(func.count()).select_from(runs)
                          .where(runs.c.system == name)).scalar_one()
    if n_runs:
        raise BadInputError(
            f"system {name!r} holds {counted(n_runs, 'stored run')}, which would lose the "
            "entry their estimates and advice read the machine from; delete them first "
            "('perfpredict runs batches' lists the ingested files holding them, "
            "'perfpredict runs delete --batch ID' deletes one), or correct the entry with "
            "'perfpredict systems add FILE.toml'")


@takes_store
def export_systems(store: Store) -> str:
    """The entries of the catalog and the user as one TOML document that ``systems add``
    reads back unchanged. Ingest's placeholders are left out: they hold only what a log
    named (``ingest`` makes them again from the runs), and read back they became the
    user's entries, which must not share a name ignoring case, so the export of a store
    holding MLPerf Training ('AS-2124GQ-NART+ (Supermicro)' beside
    'as-2124gq-nart+ (Supermicro)') was refused whole by ``systems add``."""
    return many_to_toml([spec for spec in list_systems(store) if spec.origin != "ingest"])
