"""Fault injection at the levels of :data:`occubench.config.FAULT_LEVELS` (E0 clean, E1 explicit errors, E2 silent
degradation, E3 both).

Two injections. *Prompt*, as in the OccuBench paper: rules appended to a world model's system prompt,
so the simulator misbehaves by itself (nothing records which calls were faulted). *Harness*: a
:class:`FaultInjector` wrapper around any environment, with a schedule derived from the seed and the task id —
every agent meets the same faults on the same task — and every faulted call logged.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, replace
from typing import Any

from occubench.config import FAULT_LEVELS
from occubench.core.environment import Environment, JSONObject, Wrapper
from occubench.core.results import FaultEvent, FaultWindow, Result

#: What a faulted call becomes, by kind, as the simulator is told by the prompt injection.
_RULES = {
    "explicit": """explicit failures: instead of the normal result, return a JSON error object such as \
{"error": "HTTP 500 Internal Server Error"}, {"error": "Gateway timeout after 30s"}, {"error": "Connection \
refused"} or {"error": "Service temporarily unavailable, retry later"}. Nothing in the state changes on such a call""",
    "implicit": """silent degradation: return a result with the normal shape and no error marker, but worse data — \
omit some fields, cut lists down to their first one or two entries, set non-critical fields to null, or give \
slightly outdated values. It must stay valid JSON and look plausible""",
}


def fault_prompt(level: str, count: int, duration: int) -> str | None:
    """The simulator rules for fault level ``level`` (the prompt injection), or None for a level without faults."""
    rules = [_RULES[kind] for kind in FAULT_LEVELS[level].kinds]
    if not rules:
        return None
    share = "about half" if len(rules) == 2 else "an even share"
    kinds = rules[0] if len(rules) == 1 else f"a mix, {share} of the faulty calls each: either {'; or '.join(rules)}"
    return f"""### Fault simulation for this session
This session tests how the agent copes with an unreliable system. Over the episode, make {count} fault \
window(s), each covering {duration} consecutive tool call(s). During a window, answer with {kinds}.
Rules: never fault the first tool call; spread the windows over the interaction instead of bunching them at the \
start; do not single out one critical action; faults are transient, so the same call made again after its window \
works normally and the underlying state stays consistent; never mention this simulation in an observation."""


def fault_schedule(level: str, count: int, duration: int, seed: int, task_id: object) -> list[FaultWindow]:
    """``count`` non-overlapping windows of ``duration`` calls, never on call 0, at least one clean call apart,
    spread at random over the first ``2 × count × duration`` calls after the first, each of the level's kinds in
    turn. Depends only on the arguments, so every agent meets the same schedule on the same task."""
    kinds = FAULT_LEVELS[level].kinds
    if not kinds or count == 0:
        return []
    rng = random.Random(f"schedule:{seed}:{task_id}")
    span = 2 * count * duration
    slack = span - (count * duration + count - 1)
    # Stars and bars: split the slack at random among the gap before, between and after the windows.
    cuts = sorted(rng.randint(0, slack) for _ in range(count))
    extra = [b - a for a, b in zip([0, *cuts], cuts)]
    windows, start = [], 1
    for number in range(count):
        start += extra[number]
        windows.append(FaultWindow(start, start + duration - 1, kinds[number % len(kinds)]))
        start += duration + 1
    return windows


_EXPLICIT_FAULTS: tuple[tuple[str, JSONObject], ...] = (
    ("http_500", {"error": "HTTP 500 Internal Server Error", "status_code": 500}),
    ("timeout", {"error": "Upstream request timed out after 30 s", "status_code": 504}),
    ("connection_refused", {"error": "Connection refused by the upstream service"}),
    ("service_unavailable", {"error": "Service temporarily unavailable; retry later", "status_code": 503}),
)


def _lists(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], list[Any]]]:
    found: list[tuple[tuple[Any, ...], list[Any]]] = []
    if isinstance(value, list):
        found.append((path, value))
        items = enumerate(value)
    elif isinstance(value, dict):
        items = value.items()  # type: ignore[assignment]
    else:
        return found
    for key, item in items:
        found += _lists(item, (*path, key))
    return found


def _path(path: tuple[Any, ...]) -> str:
    return ".".join(map(str, path)) or "(top level)"


def degrade(observation: JSONObject, rng: random.Random,
            earlier: list[JSONObject]) -> tuple[JSONObject, str, str]:
    """A silently worse copy of ``observation``: (new observation, fault name, what was changed).

    Only removes, shortens, nulls or replaces existing values, so the result is valid JSON of the same shape and
    never gains an error marker.
    """
    result = copy.deepcopy(observation)
    fields = [key for key in result if key != "error"]
    options: list[str] = []
    longest = max((found for found in _lists(result) if len(found[1]) >= 2), key=lambda f: len(f[1]), default=None)
    if longest:
        options.append("truncated_list")
    if len(fields) >= 2:
        options.append("dropped_fields")
    scalars = [key for key in fields if result[key] is not None and not isinstance(result[key], (dict, list))]
    if scalars:  # a scalar is the likeliest non-critical field; emptying a whole payload would be an explicit fault
        options.append("null_field")
    stale = next((old for old in reversed(earlier)
                  if any(key in old and old[key] != result[key] for key in fields)), None)
    if stale is not None:
        options.append("stale_values")
    if not options:
        return result, "none_applicable", "the observation had nothing to degrade"
    fault = rng.choice(options)
    if fault == "truncated_list":
        assert longest is not None
        path, items = longest
        keep = rng.choice([n for n in (1, 2) if n < len(items)])
        before = len(items)
        del items[keep:]
        return result, fault, f"{_path(path)}: {before} items cut to {keep}"
    if fault == "dropped_fields":
        dropped = rng.sample(fields, max(1, len(fields) // 3))
        for key in dropped:
            del result[key]
        return result, fault, f"dropped {', '.join(map(str, dropped))}"
    if fault == "null_field":
        key = rng.choice(scalars)
        result[key] = None
        return result, fault, f"{key} set to null"
    assert stale is not None
    changed = [key for key in fields if key in stale and stale[key] != result[key]]
    for key in changed:
        result[key] = copy.deepcopy(stale[key])
    return result, fault, f"values of an earlier call reused for {', '.join(map(str, changed))}"


class FaultInjector(Wrapper):
    """The harness injection: faults around any environment, following :func:`fault_schedule`.

    Explicit faults answer with an error without calling the world (no state changes, as a failed request);
    implicit faults call the world and :func:`degrade` what it returns. Every faulted call is logged.
    """

    def __init__(self, env: Environment, level: str, count: int, duration: int, seed: int, task_id: object) -> None:
        super().__init__(env)
        self.seed, self.task_id = seed, task_id
        self.windows = fault_schedule(level, count, duration, seed, task_id)
        self.reset_log()

    def reset_log(self) -> None:
        self.calls = 0
        self.events: list[FaultEvent] = []
        self._earlier: dict[str, list[JSONObject]] = {}

    async def acall(self, name: str, arguments: JSONObject) -> JSONObject:
        index = self.calls
        self.calls += 1
        window = next((w for w in self.windows if w.first_call <= index <= w.last_call), None)
        if window is None:
            observation = await self.env.acall(name, arguments)
            self._earlier.setdefault(name, []).append(observation)
            return observation
        rng = random.Random(f"fault:{self.seed}:{self.task_id}:{index}")
        if window.kind == "explicit":
            fault, observation = rng.choice(_EXPLICIT_FAULTS)
            self._log(index, name, window.kind, fault, observation["error"])
            return dict(observation)
        observation = await self.env.acall(name, arguments)
        degraded, fault, detail = degrade(observation, rng, self._earlier.get(name, []))
        self._earlier.setdefault(name, []).append(observation)
        self._log(index, name, window.kind, fault, detail)
        return degraded

    def _log(self, index: int, name: str, kind: str, fault: str, detail: str) -> None:
        self.events.append(FaultEvent(index, name, kind, fault, detail))

    def reset(self) -> None:
        self.env.reset()
        self.reset_log()

    def fired_windows(self) -> list[FaultWindow]:
        """The schedule, each window with how many of its calls were made."""
        return [replace(w, fired=sum(w.first_call <= e.call_index <= w.last_call for e in self.events))
                for w in self.windows]


@dataclass
class Recovery:
    """How agents reacted to faults of the harness injection, over a set of results."""

    explicit: int = 0
    explicit_retried: int = 0
    implicit: int = 0
    implicit_requeried: int = 0


def recovery(results: list[Result], within: int = 3) -> Recovery:
    """Share of explicitly faulted calls the agent made again (same tool, same arguments) within the next
    ``within`` calls, and of implicitly faulted calls after which it repeated the same query within as many."""
    tally = Recovery()
    for result in results:
        calls = {call.call_index: (call.name, call.arguments) for call in result.tool_calls
                 if call.call_index is not None}
        for event in result.fault_events:
            faulted = calls.get(event.call_index)
            again = faulted is not None and any(calls.get(event.call_index + k) == faulted
                                                for k in range(1, within + 1))
            if event.kind == "explicit":
                tally.explicit += 1
                tally.explicit_retried += again
            else:
                tally.implicit += 1
                tally.implicit_requeried += again
    return tally
