"""The Trainee-Bench task families, one module each (its ``FAMILY``), found by the reference's task name."""

from __future__ import annotations

import importlib

from occubench.errors import ConfigError
from occubench.traineebench.family import Family

#: Each family's module, by the name the reference's configs give the family.
MODULES = {
    "Transaction Data Review": "transactions", "Meeting Attend": "meeting_attend", "Meeting Book": "meeting_book",
    "Website Monitor": "website_analysis", "Data Completion": "data_completion", "Sales Analysis": "sales",
    "ADs Strategy Plan": "ads_strategy", "KB Link Fix": "kb_fix", "Resume Select": "resume_select",
    "Attendance Statistics": "attendance", "Event Planning": "event_planning",
}


def family(name: str) -> Family:
    """The family the configs call ``name``."""
    if name not in MODULES:
        raise ConfigError(f"unknown task family {name!r} (known: {', '.join(sorted(MODULES))})")
    try:
        module = importlib.import_module(f"{__name__}.{MODULES[name]}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{MODULES[name]}":
            raise
        raise ConfigError(f"the task family {name!r} is not implemented here yet") from None
    found: Family = module.FAMILY
    return found
