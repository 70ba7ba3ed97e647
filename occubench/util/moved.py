"""Modules that moved in 0.2 stay importable under their old names, with a :class:`DeprecationWarning`, so code
written against 0.1 keeps working while it is updated: ``from occubench.faults import FaultInjector`` gives
:class:`occubench.core.faults.FaultInjector`."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

#: Old module → the modules its names are in now (a split module has several).
MOVED: dict[str, tuple[str, ...]] = {
    "occubench.agent": ("occubench.core.agent",),
    "occubench.environment": ("occubench.core.environment",),
    "occubench.faults": ("occubench.core.faults",),
    "occubench.results": ("occubench.core.results",),
    "occubench.suite": ("occubench.core.suite",),
    "occubench.tables": ("occubench.core.tables",),
    "occubench.task": ("occubench.core.task",),
    "occubench.tools": ("occubench.core.tools",),
    "occubench.trajectory": ("occubench.core.trajectory",),
    "occubench.verifier": ("occubench.core.verifier",),
    "occubench.plugins": ("occubench.core.suite", "occubench.engine.registry"),
    "occubench.runner": ("occubench.core.episode", "occubench.engine.executor", "occubench.store",
                         "occubench.errors"),
    "occubench.rescore": ("occubench.engine.rescore",),
    "occubench.progress": ("occubench.engine.progress",),
    "occubench.summary": ("occubench.engine.summary",),
    "occubench.robustness": ("occubench.report.robustness",),
    "occubench.data": ("occubench.lwm.data",),
    "occubench.demo": ("occubench.cli.demo", "occubench.lwm.data"),
    "occubench.serve": ("occubench.mcp.server",),
}


class _MovedFinder:
    """A meta path finder and loader (duck-typed: ``importlib.abc`` alone costs ``import occubench`` 7 ms)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname not in MOVED:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, cast(Any, self))  # a Loader by its methods

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        homes = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} is deprecated: import from {' or '.join(homes)} (or from occubench)",
                      DeprecationWarning, stacklevel=2)
        modules = [importlib.import_module(home) for home in homes]

        def __getattr__(name: str) -> Any:
            for home in modules:
                if hasattr(home, name):
                    return getattr(home, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = __getattr__  # type: ignore[method-assign]


def install() -> None:
    """Resolve the old names after every real finder has had its turn (once per process)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
