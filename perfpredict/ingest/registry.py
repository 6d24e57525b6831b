"""The one dispatcher from format name to parser module, imported only when used.

Each parser module exposes ``DESCRIPTION`` (one line for ``--help``) and
``parse(path, options) -> Iterator[RunRecord | BadRecord]``; one that reads whole blocks
of lines at once also exposes ``parse_batches``, whose items may be
:class:`~perfpredict.ingest.records.RunBatch` es, for the pipeline to store without a
record per run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from perfpredict.errors import BadInputError
from perfpredict.ingest.records import BatchItem, IngestOptions, ParsedItem

Parser = Callable[[Path, IngestOptions], Iterator[ParsedItem]]
BatchParser = Callable[[Path, IngestOptions], Iterator[BatchItem]]

#: format name -> module implementing it
FORMATS: dict[str, str] = {
    "csv": "perfpredict.ingest.csv_results",
    "sacct": "perfpredict.ingest.sacct",
    "sacct-json": "perfpredict.ingest.sacct_json",
    "swf": "perfpredict.ingest.swf",
    "pbs": "perfpredict.ingest.pbs",
    "lsf": "perfpredict.ingest.lsf",
    "darshan": "perfpredict.ingest.darshan_logs",
}


def _module(fmt: str) -> ModuleType:
    try:
        module_name = FORMATS[fmt]
    except KeyError:
        raise BadInputError(
            f"unknown ingest format {fmt!r}; choose one of: {', '.join(FORMATS)}"
        ) from None
    return importlib.import_module(module_name)


def get_parser(fmt: str) -> Parser:
    """The ``parse`` function for ``fmt``; unknown formats are a usage error."""
    parse: Parser = _module(fmt).parse
    return parse


def get_batch_parser(fmt: str) -> BatchParser:
    """``parse_batches`` for ``fmt`` where the module has it, else its ``parse``."""
    module = _module(fmt)
    parse: BatchParser = getattr(module, "parse_batches", module.parse)
    return parse
