"""Package namespaces whose names load on first use, so importing a package does not import every dependency
(matplotlib or an HTTP client cost a good part of a second each)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public name ``n`` lives in module ``exports[n]``."""
    namespace = importlib.import_module(package).__dict__

    def getattr_(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *exports})
    return getattr_, dir_
