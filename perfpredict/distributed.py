"""Training on dask.distributed, for a center-scale store (``perfpredict train --dask``).

Inside :func:`dask_training`, the nested-extrapolation examples are built in partitions
of series (one ``dask.delayed`` task per chunk) and every overhead regressor is fitted
with ``xgboost.dask.DaskXGBRegressor`` on the cluster's workers. Outside it, nothing
changes: the single-process path is the default and imports no dask.

The client travels in a context variable rather than through the estimators' parameters,
because those are saved in the artifact as JSON and a client is a live connection.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from perfpredict._imports import require

#: ``--dask local``: a cluster on this machine instead of a scheduler's address.
LOCAL = "local"

_CLIENT: ContextVar[Any | None] = ContextVar("perfpredict_dask_client", default=None)


def current_client() -> Any | None:
    """The dask.distributed client training runs on, or None for a single process."""
    return _CLIENT.get()


@contextmanager
def use_client(client: Any) -> Iterator[Any]:
    """Train on ``client``'s cluster within the block."""
    token = _CLIENT.set(client)
    try:
        yield client
    finally:
        _CLIENT.reset(token)


@contextmanager
def dask_training(scheduler: str) -> Iterator[Any]:
    """Connect to the scheduler at ``scheduler`` (or start a local cluster for
    :data:`LOCAL`) and train on it within the block; disconnects afterwards."""
    distributed = require("dask.distributed", "dask")
    # a Client without an address starts a LocalCluster sized to this machine
    with (distributed.Client() if scheduler == LOCAL
          else distributed.Client(scheduler)) as client, use_client(client):
        yield client
