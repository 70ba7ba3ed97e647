"""The mock server's synthesis roles: it answers every stage of both synthesis tracks, with scripted faults.

A synthesis request is recognised by its system prompt's first line, ``Stage: <name>`` (see
:mod:`occubench.synth.engine`); its inputs are the JSON of the first user message. Each track's module
(:mod:`~occubench.testing.synth_simulated`, :mod:`~occubench.testing.synth_executable`) maps stage names to a handler
``(inputs, script) -> answer object``; this module, which they build on, wraps the answer in ``<output>`` tags.

``script`` (``make_scripted_responder(synth=...)``, ``--synth-script FILE``) is a JSON object whose keys each
track documents; one key is common to all stages:

- ``"malformed": ["stage", ...]``: the first ask of these stages gets an answer without the ``<output>`` tags, so
  the engine's re-ask is exercised; the re-ask (a later message) gets the real answer.

Everything is a function of the request, so the answers are the same on every run and under any concurrency.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]

_STAGE = re.compile(r"\AStage: (\S+)")


def stage_of(system: str) -> str | None:
    """The stage a system prompt belongs to, if it is a synthesis request."""
    match = _STAGE.match(system)
    return match.group(1) if match else None


def synth_reply(handlers: dict[str, Handler], stage: str, messages: list[dict[str, Any]],
                script: dict[str, Any]) -> str:
    """The answer to a request of ``stage``, by its handler among ``handlers`` (the tracks' stages joined)."""
    users = [m for m in messages if m.get("role") == "user"]
    if stage in script.get("malformed", ()) and len(users) == 1:
        return "Here is my answer: the configuration looks fine."
    if stage not in handlers:
        return f"I do not know the stage {stage!r}."
    inputs = json.loads(str(users[0].get("content") or "{}"))
    return f"<output>{json.dumps(handlers[stage](inputs, script), ensure_ascii=False)}</output>"
