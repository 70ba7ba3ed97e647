"""The scripted responder: what the mock server answers in each role of a run, deterministically.

A request's role follows from its prompt: a synthesis stage (see :mod:`occubench.testing.synth`), the twin worlds'
agreement judge, the world model, the code-augmented judge (label), a workplace day's reflection, the verifier, or
else the agent. With twin mode on, a world-model request that names an executable world is answered by that world
itself, corrupted at a seeded share of calls (see :mod:`occubench.testing.twin`). With the server's ``deep_nesting``
mode, the roles it names answer with JSON nested 10,000 levels deep instead (:func:`deep_reply`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from occubench.testing import synth_executable, synth_simulated, trainee
from occubench.testing.synth import Handler, stage_of, synth_reply
from occubench.testing.twin import agreement_reply, canonical, twin_answer, twin_world

Responder = Callable[[dict, int], "str | dict"]
"""(request JSON body, choice index) -> assistant content, or ``{"content": ..., "tool_calls": [...]}``."""

_MALFORMED_REPLY = "Sorry, I cannot format that."
_SYNTH_STAGES: dict[str, Handler] = {**synth_simulated.STAGES, **synth_executable.STAGES}


def _text(content: Any) -> str:
    """The text of a message's content, which may be a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def decoded(arguments: Any) -> Any:
    """Tool-call arguments as an object when they are OpenAI-style JSON text, else as given."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            pass
    return arguments


def _find_action(text: str) -> dict | None:
    """The first JSON object in ``text`` with keys ``name`` and ``arguments`` (nested objects count)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "name" in obj and "arguments" in obj:
            return obj
        # Retry from the next brace so an action nested inside a wrapper object is still found.
        start = text.find("{", start + 1)
    return None


def _actions(messages: list[dict]) -> list[dict]:
    """The actions of the user messages, in order, arguments decoded: the episode's calls, the current one last (a
    re-ask after an unparsable answer holds none, so it is about the same action)."""
    found = (_find_action(_text(m.get("content"))) for m in messages if m.get("role") == "user")
    return [{"name": str(action["name"]), "arguments": decoded(action["arguments"])} for action in found if action]


def _observed(observation: dict) -> str:
    return f"<predicted_observation>{json.dumps(observation)}</predicted_observation>"


def _world_reply(messages: list[dict]) -> str:
    actions = _actions(messages)
    if not actions:
        return _observed({"tool": None, "status": "error", "error": "no action found"})
    name, args = actions[-1]["name"], actions[-1]["arguments"]
    digest = hashlib.sha256((name + canonical(args)).encode()).hexdigest()
    return _observed({"tool": name, "status": "ok", "result_id": int(digest, 16) % 10000})


#: What the world model is told when earlier calls were left out of its prompt (see occubench.simulated.environment).
_LEFT_OUT = "earlier call(s) and their observations left out"


def _twin_reply(world: str, messages: list[dict], share: float, seed: int) -> str:
    # Replay needs every earlier action: with some left out the real state is unknown, and a guess at it would be
    # counted as the simulator's disagreement.
    if any(_LEFT_OUT in _text(m.get("content")) for m in messages if m.get("role") == "user"):
        raise ValueError(f"twin mode cannot replay {world}: earlier calls were left out to fit a context window")
    return _observed(twin_answer(world, _actions(messages), share=share, seed=seed).observation)


_REQUIRED_CALL = re.compile(r"The agent must call `(\w+)`")
_CALLED = re.compile(r"\[Agent Action\]: Call tool `(\w+)`")
_PLAN = "A plan that solves this task:"


def _verifier_reply(messages: list[dict], index: int) -> str:
    # The verdict depends only on the original prompt (system and first user message), so every sample and every
    # re-ask agrees. A rubric that names the calls the agent must make ("The agent must call `name`", as the mock's
    # synthesised tasks do) passes exactly the trajectories that made them; any other passes about half of prompts.
    joined = "".join(_text(m.get("content")) for m in messages[:2])
    required = set(_REQUIRED_CALL.findall(joined))
    if required:
        is_correct = required <= set(_CALLED.findall(joined))
    else:
        is_correct = hashlib.sha256(joined.encode()).digest()[0] < 128
    verdict = {"feedback": f"Scripted verdict (sample {index}).", "is_correct": is_correct}
    return f"Checked the trajectory.\n<verdict>{json.dumps(verdict)}</verdict>"


def _label_reply(messages: list[dict]) -> str:
    # A code-augmented judge's label: follows the code checks it is shown (all passed → complete), so it agrees
    # with them, deterministically.
    prompt = "".join(_text(m.get("content")) for m in messages[:2])
    label = "incomplete" if "FAIL " in prompt else "complete"
    return f'Checked.\n<label>{json.dumps({"feedback": "Scripted label.", "label": label})}</label>'


def _reflection_reply(messages: list[dict]) -> str:
    # A workplace day's reflection: a lesson per checkpoint the mentor says was missed ("  - name: feedback").
    mentor = _text(messages[-1].get("content")).partition("Mentor's feedback:")[2]
    missed = [line.strip()[2:] for line in mentor.splitlines() if line.startswith("  - ")]
    lessons = "\n".join(f"- Next time: {line}" for line in missed) or "- Every checkpoint was met: work the same way."
    return f"<notes>\n{lessons}\n</notes>"


def _example_value(schema: dict) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):  # e.g. ["string", "null"]
        kind = next((k for k in kind if k != "null"), "null")
    return {
        "integer": 1,
        "number": 1.0,
        "boolean": True,
        "array": [],
        "object": {},
        "null": None,
    }.get(str(kind), "X-1")


def _agent_reply(request: dict) -> str | dict:
    # Calls the first two tools in turn, or, given a solution plan, the tools the plan names in the plan's order.
    tools = [tool.get("function", tool) for tool in request.get("tools") or []]
    if not tools:
        return "ok"
    messages = request.get("messages", [])
    if (step := trainee.intern_reply({str(t.get("name")) for t in tools}, messages)) is not None:
        return step
    k = sum(1 for m in messages if m.get("role") == "tool")
    system = "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    plan = system.partition(_PLAN)[2]
    named = sorted((plan.find(f"`{t['name']}`"), i) for i, t in enumerate(tools) if f"`{t['name']}`" in plan)
    order = [i for _, i in named] if named else list(range(min(2, len(tools))))
    if k >= len(order):
        return f"Final answer: done after {k} tool calls."
    function = tools[order[k]]
    params = function.get("parameters") or {}
    props = params.get("properties") or {}
    arguments = {name: _example_value(props.get(name) or {}) for name in params.get("required") or []}
    return {"content": None, "tool_calls": [{"name": function["name"], "arguments": arguments}]}


#: The tools that end a day (the workplace's, Trainee-Bench's), and the tools the hint-waiting agent calls while it
#: waits, cheapest first (the workplace's clock costs no minutes of the day); without one, any tool without arguments.
FINISHING_TOOLS = ("finish_day", "done")
WAITING_TOOLS = ("clock_now",)


def hint_in(messages: list[dict]) -> str | None:
    """The text of the live hints (``occubench.core.hints``) the latest tool observation that carried any held, or
    None when none did."""
    for message in reversed(messages):
        if message.get("role") != "tool":
            continue
        try:
            observation = json.loads(_text(message.get("content")))
        except ValueError:
            continue
        hints = observation.get("hint") if isinstance(observation, dict) else None
        texts = [h["text"] for h in hints if isinstance(h, dict) and isinstance(h.get("text"), str)] \
            if isinstance(hints, list) else []
        if texts:
            return " ".join(texts)
    return None


def _call(function: dict, **given: Any) -> dict:
    params = function.get("parameters") or {}
    props = params.get("properties") or {}
    arguments = {name: _example_value(props.get(name) or {}) for name in params.get("required") or []}
    arguments.update({name: value for name, value in given.items() if name in props})
    return {"content": None, "tool_calls": [{"name": function["name"], "arguments": arguments}]}


def _until_hint_reply(request: dict) -> str | dict:
    """The agent that waits for a person's hint: it calls a cheap tool over and over until an observation carries
    a live hint, then the day's finishing tool (its notes quoting the hint) and answers. A request that is not an
    episode's (a preflight probe) gets the usual agent's reply."""
    tools = [tool.get("function", tool) for tool in request.get("tools") or []]
    messages = request.get("messages", [])
    if not tools or not _system(messages):
        return _agent_reply(request)
    hint = hint_in(messages)
    if hint is None:
        free = [t for t in tools if not (t.get("parameters") or {}).get("required") and t["name"] not in
                FINISHING_TOOLS]
        waiting = next((t for name in WAITING_TOOLS for t in tools if t["name"] == name), free[0] if free else tools[0])
        return _call(waiting)
    called = {str((call.get("function") or call).get("name")) for m in messages if m.get("role") == "assistant"
              for call in m.get("tool_calls") or [] if isinstance(call, dict)}
    finishing = next((t for t in tools if t["name"] in FINISHING_TOOLS), None)
    if finishing is not None and finishing["name"] not in called:
        return _call(finishing, notes=f"Followed the hint: {hint}")
    return f"Final answer: done, as the hint said: {hint}"


def _role_of(messages: list[dict]) -> str:
    """Which role a request plays: synth, agreement, world, label, reflection, a Trainee-Bench colleague or judge,
    verifier or agent."""
    system = _system(messages)
    if stage_of(system) is not None:
        return "synth"
    if "<agreement>" in system:
        return "agreement"
    if "<predicted_observation>" in system:
        return "world"
    if "<label>" in system:
        return "label"
    if "<notes>" in system:
        return "reflection"
    if trainee.is_colleague(system):
        return "colleague"
    if any(trainee.is_judge(_text(m.get("content"))) for m in messages if m.get("role") == "user"):
        return "judge"
    # Only the prompt's own messages: replies sent back (e.g. with reasoning drafts) must not change the role.
    if any("<verdict>" in _text(m.get("content")) for m in messages if m.get("role") in ("system", "user")):
        return "verifier"
    return "agent"


def _system(messages: list[dict]) -> str:
    return "".join(_text(m.get("content")) for m in messages if m.get("role") == "system")


def _system_messages(request: dict) -> list[dict]:
    # OpenAI's "developer" role is the system role under another name (Inspect sends it for newer models).
    return [{**m, "role": "system"} if isinstance(m, dict) and m.get("role") == "developer" else m
            for m in request.get("messages") or []]


#: Roles ``deep_nesting`` accepts.
DEEP_ROLES = ("agent", "world", "verifier", "synth", "body")
_DEPTH = 10_000
#: An object nested 10,000 levels deep: ten times what Python's json.loads reads before its RecursionError.
DEEP = '{"a": ' * _DEPTH + "1" + "}" * _DEPTH


def deep_reply(request: dict, roles: Sequence[str], text_tool_calls: bool) -> str | dict | None:
    """The reply of a role ``deep_nesting`` names, with the deep object where its answer goes; None for the others."""
    role = _role_of(_system_messages(request))
    tags = {"world": "predicted_observation", "verifier": "verdict", "label": "label", "synth": "output"}
    if role in tags and ("verifier" if role == "label" else role) in roles:
        return f"<{tags[role]}>{DEEP}</{tags[role]}>"
    tools = [tool.get("function", tool) for tool in request.get("tools") or []]
    if role != "agent" or "agent" not in roles or not tools:
        return None
    name = tools[0]["name"]
    if text_tool_calls:  # the whole block is too deep to read, not only its arguments
        return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {DEEP}}}</tool_call>'
    return {"content": None, "tool_calls": [{"name": name, "arguments": DEEP}]}


#: Roles answered from the messages alone, never malformed.
_PLAIN_ROLES: dict[str, Callable[[list[dict]], str]] = {
    "reflection": _reflection_reply, **trainee.ROLES}


def make_scripted_responder(malformed_rate: float = 0.0, seed: int = 0,
                            synth: dict[str, Any] | None = None, twin: float | None = None,
                            until_hint: bool = False) -> Responder:
    """A deterministic responder for every role of a run, and for every synthesis stage.

    With ``malformed_rate`` > 0, world-model and judge (verifier, label, agreement) requests get unparsable text
    with that probability (seeded, thread-safe), to exercise re-asking; agent requests are never affected.
    ``synth`` scripts the synthesis stages' faults (see :mod:`occubench.testing.synth`). ``twin``, a share in
    [0, 1], turns twin mode on: world-model requests that name an executable world are answered by that world,
    that share of calls corrupted as drawn under ``seed`` (see :mod:`occubench.testing.twin`). ``until_hint``: the
    agent keeps calling a cheap tool until an observation carries a live hint (``--live-hints``), then finishes
    its day (see :func:`_until_hint_reply`); give the run a generous ``--max-steps``.
    """
    if twin is not None and not 0 <= twin <= 1:
        raise ValueError(f"the twin share must be in [0, 1], not {twin}")
    rng = random.Random(seed)
    lock = threading.Lock()

    def _malformed() -> bool:
        if malformed_rate <= 0:
            return False
        with lock:
            return rng.random() < malformed_rate

    def respond(request: dict, index: int) -> str | dict:
        messages = _system_messages(request)
        request = {**request, "messages": messages}
        role, system = _role_of(messages), _system(messages)
        if role == "synth":
            return synth_reply(_SYNTH_STAGES, str(stage_of(system)), messages, synth or {})
        if role == "agreement":
            prompt = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
            return _MALFORMED_REPLY if _malformed() else agreement_reply(prompt)
        if role == "world":
            if _malformed():
                return _MALFORMED_REPLY
            world = twin_world(system)
            return _world_reply(messages) if twin is None or world is None else _twin_reply(world, messages, twin, seed)
        if role == "label":
            return _MALFORMED_REPLY if _malformed() else _label_reply(messages)
        if role == "verifier":
            return _MALFORMED_REPLY if _malformed() else _verifier_reply(messages, index)
        if role in _PLAIN_ROLES:
            return _PLAIN_ROLES[role](messages)
        return _until_hint_reply(request) if until_hint else _agent_reply(request)

    return respond


scripted_responder: Responder = make_scripted_responder()
