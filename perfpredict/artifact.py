"""Model artifacts: JSON documents with a format version and a sha256 checksum.

Never pickle: an artifact may come from a shared store or a colleague, and loading it must
not run code. The checksum covers the canonical JSON of the whole document except the
checksum itself, so a truncated or edited artifact is refused, and so is one written by a
newer format than this perfpredict reads.

Artifacts are written as that canonical JSON with the checksum appended as the last key,
so verifying one hashes the text as read instead of re-encoding the parsed document,
which took longer than parsing it (a 1 MB predictor costs every ``estimate`` about 50 ms).
Text in any other layout, such as a reformatted file, is verified by re-encoding. A file
is read and hashed as bytes: decoding the bundled predictor's 1.8 MB as text and copying
it to hash took 2.7 ms of every ``estimate``, against issue 5's budget of twice
``import numpy``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from perfpredict.errors import ArtifactError

#: 3: the runtime model of :mod:`perfpredict.model.runtime` (each booster stored once,
#: as its tree table; a noise floor), which perfpredict before 3 cannot read, so it says
#: to upgrade. 4: each series entry says whether its work is fixed
#: (:attr:`perfpredict.model.series.Series.fixed_work`, which bounds its intervals by
#: ideal scaling). 5: each series entry keeps its repeats' deviations
#: (:class:`perfpredict.uncertainty.noise.RepeatNoise`, a repeat's interval at a
#: measured scale); an artifact of 1 to 4 is refused with a message to retrain.
FORMAT_VERSION = 5
KIND_RUNTIME = "runtime_predictor"

#: A runtime predictor's series entries as trained: a list of entry documents.
SERIES = "series"

#: The same entries as the shipped predictor holds them: each application's as their
#: JSON texts (:func:`entry_text`), by application name. ``json.loads`` scans a text in
#: a document as one string and builds no objects of it, so an estimate builds only the
#: entries of the application it asks about: building all 241 of the shipped
#: predictor's took about half of the 16 ms its file took to parse, in every estimate.
SERIES_TEXTS = "series_texts_by_app"


def _canonical(doc: dict[str, Any]) -> bytes:
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def seal(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its format version and checksum set."""
    doc = {**doc, "format_version": FORMAT_VERSION}
    doc["sha256"] = hashlib.sha256(_canonical(doc)).hexdigest()
    return doc


def dumps(doc: dict[str, Any]) -> str:
    """``doc`` sealed and written in the layout :func:`loads` verifies fastest."""
    return to_text(seal(doc))


def to_text(sealed: dict[str, Any]) -> str:
    """A sealed document as its canonical JSON with ``"sha256"`` appended last."""
    return _canonical(sealed).decode()[:-1] + _checksum_suffix(sealed["sha256"])


def entry_text(entry: dict[str, Any]) -> str:
    """A series entry as the canonical JSON the store's rows and :data:`SERIES_TEXTS` hold."""
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), allow_nan=False)


def with_series_texts(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc``, unsealed, with its series entries as texts by application
    (:data:`SERIES_TEXTS`), the layout the shipped predictor is written in."""
    texts: dict[str, list[str]] = {}
    for entry in doc[SERIES]:
        texts.setdefault(str(entry["key"][0]), []).append(entry_text(entry))
    body = {k: v for k, v in doc.items() if k not in (SERIES, "sha256")}
    return {**body, SERIES_TEXTS: texts}


def series_entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every series entry of a document that holds them, in either layout, in training
    order (which keeps an application's entries together)."""
    if SERIES_TEXTS in doc:
        return [json.loads(text) for texts in doc[SERIES_TEXTS].values() for text in texts]
    return list(doc[SERIES])


def _checksum_suffix(sha256: str) -> str:
    return f',"sha256":"{sha256}"}}'


def _verified(raw: bytes, doc: dict[str, Any]) -> bool:
    """Whether ``doc``, parsed from ``raw`` (UTF-8), matches its checksum."""
    suffix = _checksum_suffix(str(doc["sha256"])).encode()
    if raw.endswith(suffix):  # as to_text wrote it: the canonical JSON is in the text
        digest = hashlib.sha256(memoryview(raw)[: -len(suffix)])
        digest.update(b"}")
        if digest.hexdigest() == doc["sha256"]:
            return True
    return hashlib.sha256(_canonical(doc)).hexdigest() == doc["sha256"]


def loads(text: str | bytes, origin: str) -> dict[str, Any]:
    """Parse and verify an artifact (text, or its UTF-8 bytes); ``origin`` names where
    it came from in messages."""
    raw = text.encode() if isinstance(text, str) else text
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArtifactError(
            f"the model artifact from {origin} is not valid JSON (truncated or damaged at "
            f"line {exc.lineno}); retrain with 'perfpredict train'") from exc
    except UnicodeDecodeError as exc:
        raise ArtifactError(
            f"the model artifact from {origin} is not UTF-8 text (damaged at byte "
            f"{exc.start}); retrain with 'perfpredict train'") from exc
    if not isinstance(doc, dict) or "sha256" not in doc or "format_version" not in doc:
        raise ArtifactError(f"{origin} is not a perfpredict model artifact; retrain with "
                            "'perfpredict train'")
    if not isinstance(doc["format_version"], int) or doc["format_version"] > FORMAT_VERSION:
        raise ArtifactError(
            f"the model artifact from {origin} has format version {doc['format_version']}, "
            f"newer than this perfpredict reads ({FORMAT_VERSION}); upgrade perfpredict")
    if doc["format_version"] < FORMAT_VERSION:
        raise ArtifactError(
            f"the model artifact from {origin} has format version {doc['format_version']}, "
            f"written by an earlier perfpredict (this one reads {FORMAT_VERSION}); retrain "
            "with 'perfpredict train'")
    if not _verified(raw, doc):
        raise ArtifactError(
            f"the model artifact from {origin} fails its checksum (it was modified or "
            "damaged); retrain with 'perfpredict train'")
    return doc


def read_file(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"cannot read the model artifact {path}: {exc}") from exc
    return loads(raw, str(path))
