"""The catalog in the store: seeding, lookup, upsert over ingest placeholders, export."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from perfpredict.catalog import (
    SystemSpec,
    add_system,
    add_systems_from_file,
    bundled_systems,
    export_systems,
    get_system,
    list_systems,
    parse_toml,
    remove_system,
    require_system,
    seed_catalog,
)
from perfpredict.catalog.store_sync import spec_to_row
from perfpredict.errors import BadInputError, NotFoundError
from perfpredict.store.schema import systems


def n_rows(store) -> int:  # type: ignore[no-untyped-def]
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(systems)).scalar_one()


def test_a_fresh_store_lists_the_shipped_catalog_and_seeding_is_idempotent(store) -> None:  # type: ignore[no-untyped-def]
    assert list_systems(store) == sorted(bundled_systems(), key=lambda s: s.name.casefold())
    assert seed_catalog(store) == []
    assert n_rows(store) == len(bundled_systems())


def test_lookup_by_alias_ignores_case(store) -> None:  # type: ignore[no-untyped-def]
    assert get_system(store, "frontier").name == "Frontier"  # type: ignore[union-attr]
    label = "Lichtenberg (TU Darmstadt), per the Extra-P GPR study; not stated in the logs"
    assert get_system(store, label).name == "Lichtenberg"  # type: ignore[union-attr]
    assert get_system(store, "no-such-machine") is None


def test_unknown_name_suggests_close_names(store) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(NotFoundError, match="did you mean .*Polaris"):
        require_system(store, "Polaris2")


def insert_placeholder(store, name: str) -> None:  # type: ignore[no-untyped-def]
    """What ingest writes for a system a log named and the catalog lacked."""
    with store.engine.begin() as conn:
        conn.execute(systems.insert().values(
            name=name, cores_per_node=36, origin="ingest",
            details={"note": "created by ingest of jobs.csv; complete it with "
                             "'perfpredict systems add FILE.toml'"}))


def test_a_user_entry_replaces_an_ingest_placeholder(store) -> None:  # type: ignore[no-untyped-def]
    insert_placeholder(store, "mycluster")
    placeholder = get_system(store, "mycluster")
    assert placeholder is not None and placeholder.origin == "ingest"
    assert placeholder.unsourced_fields() == []  # its log-derived number is attributed
    mine = SystemSpec(name="mycluster", nodes=128, cores_per_node=48,
                      sources={"nodes": "our wiki", "cores_per_node": "our wiki"}, origin="user")
    add_system(store, mine)
    stored = get_system(store, "mycluster")
    assert stored == mine and stored is not None and stored.origin == "user"
    assert n_rows(store) == len(bundled_systems()) + 1


def test_a_spec_made_in_python_is_held_to_the_rules_of_a_toml_file(store) -> None:  # type: ignore[no-untyped-def]
    """``add_system(store, SystemSpec(name="", nodes=-1))`` stored a system of no name
    and -1 nodes, which ``systems add`` of the same entry as TOML refuses; a dict was an
    AttributeError. Each is refused as the file would be, and nothing is stored."""
    before = list_systems(store)
    for spec, reason in (
            (SystemSpec(name="", nodes=-1), r"SystemSpec '': key name: is empty; give its text$"),
            (SystemSpec(name="x", nodes=-1, sources={"nodes": "d"}),
             r"SystemSpec 'x': key nodes: -1 is below 1"),
            (SystemSpec(name="x", nodes=4), r"SystemSpec 'x': key nodes: has no source; add "
                                            r"nodes = \"URL or document title\""),
            (SystemSpec(name="x", nodes={"a": 1}, sources={"nodes": "d"}),  # type: ignore[arg-type]
             r"SystemSpec 'x': no TOML form for dict"),
            ({"name": "x"}, r"expected a SystemSpec, as perfpredict\.catalog\.SystemSpec\(")):
        with pytest.raises(BadInputError, match=rf"^{reason}"):
            add_system(store, spec)  # type: ignore[arg-type]
    assert list_systems(store) == before
    add_system(store, SystemSpec(name="x", nodes=4, sources={"nodes": "d"}))
    assert get_system(store, "x") == SystemSpec(name="x", nodes=4, sources={"nodes": "d"})


def test_seeding_completes_a_placeholder_named_like_a_shipped_entry(store) -> None:  # type: ignore[no-untyped-def]
    insert_placeholder(store, "Frontier")
    assert get_system(store, "Frontier") == next(
        s for s in bundled_systems() if s.name == "Frontier")


def test_seeding_never_overwrites_a_user_edit(store) -> None:  # type: ignore[no-untyped-def]
    edited = SystemSpec(name="Frontier", nodes=9408, sources={"nodes": "older guide"})
    assert add_system(store, edited, replace=True).action == "replaced"
    seed_catalog(store)
    assert get_system(store, "Frontier") == edited


def test_an_entry_in_python_keeps_the_facts_it_leaves_out_and_is_removed(store) -> None:  # type: ignore[no-untyped-def]
    """``add_system`` of a spec naming a held entry keeps the facts the spec leaves out
    (``replace=True`` drops them), and ``remove_system`` takes the user's entry out: the
    shipped one of its name is stored again, a machine of the user's is gone."""
    shipped = next(s for s in bundled_systems() if s.name == "Polaris")
    change = add_system(store, SystemSpec(name="Polaris", nodes=520,
                                          sources={"nodes": "ALCF, 2026"}))
    assert (change.action, change.changed, change.kept_from) == (
        "updated", ("nodes 560 -> 520",), "the shipped catalog")
    assert "queues" in change.kept and "peak_flops_per_node" in change.kept
    assert get_system(store, "Polaris") == change.spec == SystemSpec(
        **{**shipped.__dict__, "nodes": 520,
           "sources": {**shipped.sources, "nodes": "ALCF, 2026"}})
    restored = remove_system(store, "Polaris")
    assert (restored.action, restored.changed) == ("restored", ("nodes 520 -> 560",))
    assert get_system(store, "Polaris").origin == "catalog"  # type: ignore[union-attr]
    add_system(store, SystemSpec(name="x", nodes=4, sources={"nodes": "d"}))
    assert add_system(store, SystemSpec(name="x"), replace=True).dropped == ("nodes",)
    assert remove_system(store, "x").action == "removed"
    assert get_system(store, "x") is None and n_rows(store) == len(bundled_systems())
    with pytest.raises(BadInputError, match=r"^'Polaris' is shipped with perfpredict"):
        remove_system(store, "Polaris")


def test_a_shipped_entry_an_earlier_release_seeded_follows_the_catalog(store) -> None:  # type: ignore[no-untyped-def]
    """A store seeded before Aurora's queues were shipped kept Aurora without queues in
    every later release (seeding only added what was absent), so advice there capped no
    walltime. An entry the user added under a shipped name stays theirs (the test above)."""
    shipped = next(s for s in bundled_systems() if s.name == "Aurora")
    seed_catalog(store)
    earlier = SystemSpec(**{**shipped.__dict__, "queues": ()})
    with store.engine.begin() as conn:
        conn.execute(systems.update().where(systems.c.name == "Aurora")
                     .values(**spec_to_row(earlier)))
    assert seed_catalog(store) == ["Aurora"]
    assert get_system(store, "aurora") == shipped and len(shipped.queues) == 6
    assert seed_catalog(store) == []


def test_export_then_add_gives_identical_specs(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every entry of the catalog and the user reads back as it was; an ingest
    placeholder is left out of the export and stays the placeholder it was (read back,
    it became the user's entry: specs compare without their origin)."""
    insert_placeholder(store, "mycluster")
    exported = export_systems(store)
    path = tmp_path / "all.toml"
    path.write_text(exported, encoding="utf-8")
    before = list_systems(store)
    entered = [spec for spec in before if spec.origin != "ingest"]
    assert parse_toml(exported, path) == entered
    added = add_systems_from_file(store, path)
    assert list_systems(store) == before
    assert {change.action for change in added} == {"unchanged"}
    assert entered == sorted((change.spec for change in added), key=lambda s: s.name.casefold())
    assert get_system(store, "mycluster").origin == "ingest"  # type: ignore[union-attr]
    assert export_systems(store) == exported
