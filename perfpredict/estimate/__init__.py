"""Estimates from a trained runtime predictor.

- :mod:`.lookup`: where the predictor comes from (store, else the shipped file), which
  series answers a query, in which unit, and the notes on that choice;
- :mod:`.estimates`: the one columnar path every estimate takes, and :class:`Estimate`;
- :mod:`.breakdown`: where the time goes (law parts, roofline I/O);
- :mod:`.explain`: an estimate as a chain of named steps that multiplies out to it
  (``estimate(..., explain=True).explanation``, ``estimate --explain``); imported only
  when asked for;
- :mod:`.batch`: ``estimate --input``, a CSV of queries in, rows of answers out;
- :mod:`.untrained`: the store's series that the predictor was not trained with, fitted
  at the estimate where none of its own answers; imported only then.

An estimate imports none of pandas, scikit-learn, xgboost, matplotlib or SQLAlchemy (for
a SQLite store): ``tests/cli/test_startup.py`` holds it to that. The names below are
resolved on first use (PEP 562), so that importing a submodule, as every estimate does,
does not import the others: one query paid for :mod:`.batch` (about 3 ms of a start-up
held to twice ``import numpy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict._imports import lazy_attribute
from perfpredict._listing import listing

if TYPE_CHECKING:
    from perfpredict.estimate.batch import (
        BatchEstimates,
        StreamedEstimates,
        estimate_batch,
        estimate_batches,
        read_queries,
    )
    from perfpredict.estimate.estimates import (
        BATCH_COLUMNS,
        Estimate,
        LoadedPredictor,
        estimate,
        load_predictor,
    )
    from perfpredict.estimate.lookup import Query, bundled_artifact_path, calibration_notes

_LAZY = {
    **dict.fromkeys(("BatchEstimates", "StreamedEstimates", "estimate_batch",
                     "estimate_batches", "read_queries"),
                    "perfpredict.estimate.batch"),
    **dict.fromkeys(("BATCH_COLUMNS", "Estimate", "LoadedPredictor", "estimate",
                     "load_predictor"), "perfpredict.estimate.estimates"),
    **dict.fromkeys(("Query", "bundled_artifact_path", "calibration_notes"),
                    "perfpredict.estimate.lookup"),
}
__all__ = ["BATCH_COLUMNS", "BatchEstimates", "Estimate", "LoadedPredictor", "Query",
           "StreamedEstimates", "bundled_artifact_path", "calibration_notes", "estimate",
           "estimate_batch", "estimate_batches", "load_predictor", "read_queries"]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, name, _LAZY)


__dir__ = listing(globals(), __all__)
