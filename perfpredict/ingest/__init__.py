"""Ingest: one parser module per input format behind one dispatcher, and the pipeline
that checksums a file, parses it and hands the records to the store writer
(:mod:`perfpredict.store.writer`), which stores them idempotently.

The names below are loaded on first use, so that importing the format registry (which
``perfpredict --help`` does) does not pull in SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict._imports import lazy_attribute
from perfpredict._listing import listing

if TYPE_CHECKING:
    from perfpredict.ingest.pipeline import ingest_file, ingest_paths
    from perfpredict.ingest.records import BadRecord, IngestOptions, RunRecord
    from perfpredict.store.writer import BatchReport

_LAZY = {
    "BatchReport": "perfpredict.store.writer",
    "ingest_file": "perfpredict.ingest.pipeline",
    "ingest_paths": "perfpredict.ingest.pipeline",
    "BadRecord": "perfpredict.ingest.records",
    "IngestOptions": "perfpredict.ingest.records",
    "RunRecord": "perfpredict.ingest.records",
}
__all__ = ["BadRecord", "BatchReport", "IngestOptions", "RunRecord", "ingest_file",
           "ingest_paths"]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, name, _LAZY)


__dir__ = listing(globals(), __all__)
