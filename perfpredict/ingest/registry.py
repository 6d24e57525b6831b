"""The one dispatcher from format name to parser module, imported only when used.

Each parser module exposes ``DESCRIPTION`` (one line for ``--help``) and
``parse(path, options) -> Iterator[RunRecord | BadRecord]``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path

from perfpredict.errors import BadInputError
from perfpredict.ingest.records import IngestOptions, ParsedItem

Parser = Callable[[Path, IngestOptions], Iterator[ParsedItem]]

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


def get_parser(fmt: str) -> Parser:
    """The ``parse`` function for ``fmt``; unknown formats are a usage error."""
    try:
        module_name = FORMATS[fmt]
    except KeyError:
        raise BadInputError(
            f"unknown ingest format {fmt!r}; choose one of: {', '.join(FORMATS)}"
        ) from None
    parse: Parser = importlib.import_module(module_name).parse
    return parse
