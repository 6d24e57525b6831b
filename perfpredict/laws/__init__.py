"""Analytical scaling laws, each a :class:`ScalingLaw` fitted per series."""

from perfpredict.laws.base import ScalingLaw
from perfpredict.laws.classic import Amdahl, AmdahlLog, Gustafson, PowerLaw
from perfpredict.laws.extrap import ExtraP

#: name -> class, for artifacts and the evaluation table
LAWS: dict[str, type[ScalingLaw]] = {
    cls.name: cls for cls in (Amdahl, AmdahlLog, Gustafson, PowerLaw, ExtraP)
}

__all__ = ["LAWS", "Amdahl", "AmdahlLog", "ExtraP", "Gustafson", "PowerLaw", "ScalingLaw"]
