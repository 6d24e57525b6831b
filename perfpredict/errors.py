"""The one exception tree of perfpredict.

Every failure a user can cause or meet is a :class:`PerfPredictError`. The CLI translates
it, once, into a single ``Error: ...`` line on stderr and an exit code: 2 for bad input or
usage (:class:`BadInputError`), 1 for everything else (a domain failure such as nothing to
train on). Messages are sentences that say what is wrong and what to do next.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

from perfpredict._listing import listing

T = TypeVar("T")
__all__ = ["ArtifactError", "BadInputError", "ChangedWhileReadError", "DamagedStreamError",
           "MissingDependencyError", "NotFoundError", "NotTrainedError", "PerfPredictError",
           "SchemaOutOfDateError"]


class PerfPredictError(Exception):
    """Root of all perfpredict errors. Exit code 1 unless a subclass says otherwise."""

    exit_code = 1
    #: Which of a batch's queries failed (its position), where a batch estimate fails on
    #: one, so that ``estimate --input`` can name the line of the query file.
    query_index: int | None = None


class BadInputError(PerfPredictError):
    """Input a user gave us is malformed: a file, a record in it, or an option value.

    ``path`` and ``line_no`` (1-based) locate the offending record when there is one, so
    the message can say exactly where to look.
    """

    exit_code = 2

    def __init__(
        self, reason: str, *, path: str | Path | None = None, line_no: int | None = None
    ) -> None:
        self.reason = reason
        self.path = str(path) if path is not None else None
        self.line_no = line_no
        super().__init__(self._compose())

    def naming(self, path: str | Path) -> BadInputError:
        """The same error naming the file ``path``: input read through a copy (a pipe
        spooled to a temporary file) is named as the user gave it."""
        return type(self)(self.reason, path=path, line_no=self.line_no)

    def adding(self, note: str) -> BadInputError:
        """The same error with ``note`` after its reason: what else it stopped (the
        files given after a bad one, never read)."""
        return type(self)(f"{self.reason}; {note}", path=self.path, line_no=self.line_no)

    def _compose(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line_no}: " if self.line_no else f"{self.path}: "
        return f"{where}{self.reason}"


class DamagedStreamError(BadInputError):
    """A compressed file cannot be read to its end (cut short, or its bytes damaged):
    ``line_no`` is the first line it could not deliver whole. Not a bad record among good
    ones but a file to copy again, so an ingest stores nothing of it, also under
    ``--on-error skip`` (which keeps it as a reject and goes on with the other files)."""


class ChangedWhileReadError(PerfPredictError):
    """A file changed while it was ingested (a results file a benchmark script appends
    to): the checksum its batch would keep is of what it held before, its runs of what it
    held after, and a later ingest took the file for an edited one and stored every row
    again. Raised inside the ingest's transaction, which it undoes, and caught by
    :func:`perfpredict.ingest.pipeline.ingest_file`, which ingests a copy instead."""


class NotFoundError(PerfPredictError):
    """Something named does not exist: an application, a system, a stored artifact."""


class NotTrainedError(PerfPredictError):
    """A prediction was asked for but no predictor covers it; train first."""


class SchemaOutOfDateError(PerfPredictError):
    """The store was written by an older perfpredict and must be upgraded before use."""


class MissingDependencyError(PerfPredictError):
    """An optional extra is needed for this feature and is not installed."""


class ArtifactError(PerfPredictError):
    """A model artifact is damaged, tampered with, or from a newer format version."""


def given(value: object, kind: type[T], example: str) -> T:
    """``value`` when it is a ``kind``: a request object a library function takes (a
    :class:`~perfpredict.estimate.Query`, a
    :class:`~perfpredict.advise.plan.PlanRequest`). A dict of its fields, the likeliest
    stand-in in a notebook, was an AttributeError ("'dict' object has no attribute
    'validate'"); it is refused saying how to make one (``example``)."""
    if isinstance(value, kind):
        return value
    how = f"; {kind.__name__}(**fields) makes one of a dict" if isinstance(value, dict) else ""
    article = "an" if kind.__name__[:1] in "AEIOU" else "a"
    raise BadInputError(f"expected {article} {kind.__name__}, as {example}, not a "
                        f"{type(value).__name__}{how}")


def named_path(value: object, what: str) -> str | os.PathLike[str]:
    """``value`` when it names a file as a library caller may (a text or a Path); anything
    else is refused naming ``what`` it was to name, where it was a TypeError from inside
    pathlib ("expected str, bytes or os.PathLike object, not int")."""
    if isinstance(value, str | os.PathLike):
        return value
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    raise BadInputError(f"{what} is named by its path, a text or a Path, not {article} {kind}")


__dir__ = listing(globals(), __all__)
