"""Public parameters renamed: the old spelling keeps working, with a DeprecationWarning,
for one release."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def renamed_keyword(old: str, new: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator: the function takes keyword ``old`` as ``new``, warning that ``old``
    goes in the next release. ``train(store, apps=[...])`` beside ``evaluate(store,
    app=[...])`` and ``runs_frame(store, app=...)`` made the user guess which function
    spelled it which way; one spelling, ``app``, is the library's (the CLI's ``--app``)."""
    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"{function.__name__}() takes {new}= alone, not also "
                                    f"{old}= (its old name)")
                warnings.warn(f"{function.__name__}({old}=...) is deprecated and goes in "
                              f"the next release; write {new}=...", DeprecationWarning,
                              stacklevel=2)
                named: dict[str, Any] = kwargs
                named[new] = named.pop(old)
            return function(*args, **kwargs)

        return call

    return decorate
