"""Test helpers: a loopback OpenAI-compatible mock server and a scripted responder for offline runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from occubench.testing.server import (
        MockLLMServer,
        RequestTiming,
        ServerStats,
        make_scripted_responder,
        scripted_responder,
    )

__all__ = ["MockLLMServer", "RequestTiming", "ServerStats", "make_scripted_responder", "scripted_responder"]


def __getattr__(name: str) -> Any:
    # Imported lazily so `python -m occubench.testing.server` doesn't find the module already
    # imported by its package (runpy warns about that).
    if name in __all__:
        from occubench.testing import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
