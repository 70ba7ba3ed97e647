"""The mock server's twin roles: a simulator of an executable world that is the real world, wrong on purpose at a
seeded share of calls, and the agreement judge that compares a real answer with a simulated one.

A twin world-model request names its world in the system prompt (``the executable world "NAME"``). With twin mode on
(``make_scripted_responder(twin=share)``, ``--twin SHARE``) it is answered by replay: a fresh instance of built-in
world NAME runs every action of the conversation in order, and the last one's observation is the answer. Each call
draws a number from a hash of (seed, world, position, action) (:func:`draw`); when it is below ``share`` the answer
is corrupted in one of :data:`KINDS`. Later calls replay the actions, never the answers, so a corruption touches only
its own call. Worlds are small: a fresh instance per request costs well under a millisecond per replayed call.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from occubench.core.environment import JSONObject
from occubench.executable.environment import ExecutableEnvironment
from occubench.executable.registry import load_world

#: How a twin world-model prompt names the executable world it imitates.
TWIN_WORLD = re.compile(r'executable world "([A-Za-z0-9_]+)"')
#: The ways a corrupted answer is wrong, in the order a call's draw rotates through them.
KINDS = ("wrong_values", "wrong_error", "invented_records")
#: The headings of the agreement judge's two fenced answers, in the order the prompt gives them.
_HEADINGS = ("Real system's answer", "Simulator's answer")


def canonical(obj: Any) -> str:
    """``obj`` as compact JSON with sorted keys, the same text for equal objects."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def twin_world(system: str) -> str | None:
    """The executable world a world-model system prompt says it imitates, or None."""
    match = TWIN_WORLD.search(system)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Draw:
    """A call's share of its hash: it is corrupted when ``number`` (in [0, 1)) is below the share; ``pick`` chooses
    the kind (:attr:`kind`, before any fallback) and what the corruption changes."""

    number: float
    pick: int

    @property
    def kind(self) -> str:
        return KINDS[self.pick % len(KINDS)]


def draw(seed: int, world: str, position: int, action: JSONObject) -> Draw:
    """The draw of the call ``action`` (``{"name": ..., "arguments": {...}}``) at 0-based ``position`` among the
    episode's calls that reached the world model, in ``world``, under ``seed``."""
    digest = hashlib.sha256(canonical([seed, world, position, action]).encode()).digest()
    return Draw(int.from_bytes(digest[:8], "big") / 2**64, int.from_bytes(digest[8:16], "big"))


@dataclass(frozen=True)
class TwinAnswer:
    """One twin call: the real world's observation, what the twin answers, and the corruption applied (None when
    the answer is the real one)."""

    real: JSONObject
    observation: JSONObject
    kind: str | None


def twin_answer(world: str, actions: Sequence[JSONObject], *, share: float, seed: int = 0) -> TwinAnswer:
    """The twin's answer to the last of ``actions``, the earlier ones replayed first on a fresh instance of built-in
    ``world``; corrupted when the call's :func:`draw` falls below ``share``."""
    if not actions:
        raise ValueError(f"twin of {world}: the conversation holds no action to answer")
    env = ExecutableEnvironment(load_world(world))
    try:
        for action in actions:
            real = env.call(action["name"], action["arguments"])
    finally:
        env.close()
    found = draw(seed, world, len(actions) - 1, actions[-1])
    if found.number >= share:
        return TwinAnswer(real, real, None)
    kind, wrong = corrupted(real, actions[-1], found.pick)
    return TwinAnswer(real, wrong, kind)


def corrupted(observation: JSONObject, action: JSONObject, pick: int) -> tuple[str, JSONObject]:
    """``observation`` made wrong in the kind ``pick`` chooses, or in ``wrong_values`` then ``wrong_error`` when its
    shape does not allow that kind: the kind applied and the wrong observation, never equal to ``observation``."""
    kind, choice = KINDS[pick % len(KINDS)], pick // len(KINDS)
    if kind == "invented_records" and (changed := _invented_record(observation, choice)) is not None:
        return kind, changed
    if kind != "wrong_error" and (changed := _wrong_value(observation, choice)) is not None:
        return "wrong_values", changed
    return "wrong_error", _wrong_error(observation, action)


def _wrong_error(observation: JSONObject, action: JSONObject) -> JSONObject:
    # Whether "error" is present flips, so the two can never be equal.
    if "error" not in observation:
        return {"error": "tool_error", "message": f"{action['name']}: the request could not be completed"}
    # A refused call answered as done: its arguments echoed back, as a simulator that assumes success does.
    arguments = action["arguments"] if isinstance(action["arguments"], dict) else {}
    return {**{key: value for key, value in arguments.items() if key != "error"}, "status": "ok"}


def _wrong_value(observation: JSONObject, choice: int) -> JSONObject | None:
    # Ids are left alone (a changed id names another record: that is invented_records), and so are an error's words
    # (another wording of the same refusal is not a wrong answer).
    if "error" in observation:
        return None
    leaves = [path for path, value in _paths(observation)
              if path and not _is_id_key(path[-1]) and _nudged(value) is not None]
    if not leaves:
        return None
    path = leaves[choice % len(leaves)]
    wrong = copy.deepcopy(observation)
    parent: Any = wrong
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = _nudged(parent[path[-1]])
    return wrong


def _nudged(value: Any) -> Any:
    """``value`` changed as a careless simulator would (a flipped bool, a number plus one, a suffixed string); None
    when it has no such change (null, a container, a float too large for one more to show)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)) and value + 1 != value:
        return value + 1
    if isinstance(value, str):
        return f"{value} (amended)"
    return None


def _invented_record(observation: JSONObject, choice: int) -> JSONObject | None:
    # The first list of records (objects with an id) gets one more: a copy of one of them under an id none has.
    for path, value in _paths(observation):
        if not (isinstance(value, list) and value and all(isinstance(item, dict) for item in value)):
            continue
        template = value[choice % len(value)]
        key = next((k for k, v in template.items() if _is_id_key(k) and isinstance(v, (str, int))
                    and not isinstance(v, bool)), None)
        if key is None:
            continue
        taken = {str(v) for p, v in _paths(observation) if p and _is_id_key(p[-1])}
        wrong = copy.deepcopy(observation)
        records: Any = wrong
        for step in path:
            records = records[step]
        records.append({**template, key: _new_id(template[key], taken)})
        return wrong
    return None


def _new_id(value: str | int, taken: set[str]) -> str | int:
    """An id shaped like ``value`` (its prefix, its number's width) that is not in ``taken``."""
    text = str(value)
    prefix = text.rstrip("0123456789")
    digits = text[len(prefix):]
    if not digits:
        prefix += "-"
    number = int(digits or 1)
    while True:
        number += 1
        candidate = f"{prefix}{number:0{len(digits)}d}"
        if candidate not in taken:
            return int(candidate) if isinstance(value, int) else candidate


def _is_id_key(key: str | int) -> bool:
    return isinstance(key, str) and (key == "id" or key.endswith("_id"))


def _paths(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every value inside ``value`` (itself first) with its path of keys and indices, depth first, in order."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def agreement_reply(prompt: str) -> str:
    """The agreement judge's verdict on the two fenced JSON answers of ``prompt`` (under the headings
    ``Real system's answer`` and ``Simulator's answer``): equivalent exactly when they are equal as JSON."""
    answers, start = [], 0
    for heading in _HEADINGS:
        value, start = _fenced_json(prompt, heading, start)
        answers.append(value)
    equivalent = canonical(answers[0]) == canonical(answers[1])
    reason = "The two answers are the same." if equivalent else "The two answers differ."
    return f"<agreement>{json.dumps({'equivalent': equivalent, 'reason': reason})}</agreement>"


def _fenced_json(text: str, heading: str, start: int) -> tuple[Any, int]:
    """The JSON of the first ```json block after ``heading`` (looked for from ``start``), and where it ends."""
    at = text.find(heading, start)
    fence = text.find("```json", at) if at >= 0 else -1
    if fence < 0:
        # A prompt the judge cannot read is a bug of the caller: fail the request loudly.
        raise ValueError(f"agreement judge: no ```json block under {heading!r}")
    body = fence + len("```json")
    body += len(text[body:]) - len(text[body:].lstrip())
    return json.JSONDecoder().raw_decode(text, body)
