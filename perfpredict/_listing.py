"""What ``dir()`` of a public module lists.

Its own module, importing nothing of perfpredict, so that :mod:`perfpredict.errors`, which
every other module imports, can list its names with it too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def listing(namespace: dict[str, Any], public_names: Iterable[str]) -> Callable[[], list[str]]:
    """A public module's ``__dir__`` (PEP 562): ``public_names`` (its ``__all__``, with
    the names it loads on first use, and the submodules it names) and the module's
    dunders (``__doc__``, ``__version__``). ``dir()`` of the module is what a notebook's
    tab completion lists: it showed none of ``estimate``, ``Query`` or ``open_store``
    where they are loaded on first use, and everything a module imports for itself
    (``Path``, ``annotations``, ``np``, ``takes_store``, the helper modules ``handle``
    and ``lost``). ``namespace`` is the module's ``globals()``."""
    return lambda: sorted({*public_names,
                           *(name for name in namespace
                             if name.startswith("__") and name.endswith("__"))})
