"""Modules moved in 0.2 keep working under their 0.1 names, with a deprecation warning."""

from __future__ import annotations

import importlib
import sys

import pytest

from occubench.core.faults import FaultInjector
from occubench.core.suite import SuitePlan
from occubench.engine.registry import load_suite
from occubench.util.moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_name_warns_and_gives_the_new_names(old: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=old):
        module = importlib.import_module(old)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_names_of_a_split_module_come_from_each_new_home() -> None:
    for old in ("occubench.faults", "occubench.plugins"):
        sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning):
        from occubench.faults import FaultInjector as old_injector  # type: ignore[import-not-found]
        from occubench.plugins import SuitePlan as old_plan  # type: ignore[import-not-found]
        from occubench.plugins import load_suite as old_load  # type: ignore[import-not-found]
    assert (old_injector, old_plan, old_load) == (FaultInjector, SuitePlan, load_suite)
