"""The meta-task families: every module in this package but the helpers (``base``, ``_shared``) defines ``FAMILY``."""

import importlib
import pkgutil

from occubench.workplace import world
from occubench.workplace.templates.base import Family

FAMILIES: dict[str, Family] = {}
for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in ("base", "_shared")):
    _family = importlib.import_module(f"{__name__}.{_module}").FAMILY
    FAMILIES[_family.name] = _family



def family(name: str) -> world.Family:
    """Our family called ``name``, as the day engine looks families up."""
    return FAMILIES[name]


__all__ = ["FAMILIES", "Family", "family"]
