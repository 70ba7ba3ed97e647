"""Fault injection. Prompt mode: rules appended to the world model's system prompt, as in the OccuBench paper.

E0 is clean; E1 asks for explicit failures, E2 for silent degradation, E3 for a mix of both. Each episode gets
``count`` fault windows of ``duration`` consecutive tool calls.
"""

from __future__ import annotations

FAULT_MODES = ("E0", "E1", "E2", "E3")

_EXPLICIT = """explicit failures: instead of the normal result, return a JSON error object such as \
{"error": "HTTP 500 Internal Server Error"}, {"error": "Gateway timeout after 30s"}, {"error": "Connection \
refused"} or {"error": "Service temporarily unavailable, retry later"}. Nothing in the state changes on such a call"""

_IMPLICIT = """silent degradation: return a result with the normal shape and no error marker, but worse data — \
omit some fields, cut lists down to their first one or two entries, set non-critical fields to null, or give \
slightly outdated values. It must stay valid JSON and look plausible"""


def fault_prompt(mode: str, count: int, duration: int) -> str | None:
    """The rules for ``mode``, or None for E0."""
    if mode == "E0":
        return None
    kinds = {"E1": _EXPLICIT, "E2": _IMPLICIT,
             "E3": f"a mix, about half of the faulty calls each: either {_EXPLICIT}; or {_IMPLICIT}"}[mode]
    return f"""### Fault simulation for this session
This session tests how the agent copes with an unreliable system. Over the episode, make {count} fault \
window(s), each covering {duration} consecutive tool call(s). During a window, answer with {kinds}.
Rules: never fault the first tool call; spread the windows over the interaction instead of bunching them at the \
start; do not single out one critical action; faults are transient, so the same call made again after its window \
works normally and the underlying state stays consistent; never mention this simulation in an observation."""
