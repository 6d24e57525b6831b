"""The run store: schema, migrations and the queries the rest of perfpredict uses."""

from perfpredict.store.database import Store, open_store

__all__ = ["Store", "open_store"]
