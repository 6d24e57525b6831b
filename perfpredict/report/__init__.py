"""An advice as people read it, from a notebook as from ``perfpredict advise``:

- :mod:`.plots`: ``save_scaling_plot(plan, "scaling.png")``, the scaling figure and its
  numbers (``advise --plot``), or ``draw_scaling_plot(plan, axes)`` into a notebook's own;
- :mod:`.proposal`: the summary, the candidate table and an allocation proposal's tables
  (``advise --format markdown`` and ``latex``).

Each is imported when first named (``perfpredict.report.plots``), not with this package:
the plots import matplotlib. ``import perfpredict`` then ``perfpredict.report.plots.
save_scaling_plot(...)``, as the user guide writes it, was "module 'perfpredict.report'
has no attribute 'plots'" unless the submodule had been imported by hand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfpredict._imports import lazy_attribute
from perfpredict._listing import listing

if TYPE_CHECKING:
    from perfpredict.report import plots as plots
    from perfpredict.report import proposal as proposal

__all__ = ["plots", "proposal"]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, name, {}, __all__)


__dir__ = listing(globals(), __all__)
