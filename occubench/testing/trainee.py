"""The mock server's Trainee-Bench roles, so that a run of the reference's configs reaches every one offline: a
colleague (the colleague role's prompt) answers with its reply rules, as the offline colleagues do; the judge says
yes to a question about any material; and, given a Trainee-Bench day's tools, the agent is an intern who lists the
company, asks an HR Manager for help and ends its day."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from occubench.traineebench.families.website_analysis import ASK
from occubench.workplace.people import INSTRUCTIONS

#: The tools that make an agent request a Trainee-Bench day's.
DAY_TOOLS = {"list_users", "send_message", "done"}
#: What the intern asks.
QUESTION = "Hi, I'm the new intern. How should I go about today's tasks, and who maintains the company website?"


def is_colleague(system: str) -> bool:
    return INSTRUCTIONS in system and "intern" in system


def is_judge(prompt: str) -> bool:
    return ASK in prompt and "<material>" in prompt


def _said(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


#: How a colleague's prompt marks a fact to share only when asked about it.
CONDITION = " (share this only when the message asks about "


def colleague_reply(messages: list[dict[str, Any]]) -> str:
    """The colleague's standing instructions, and each fact whose condition names a word of the message (its
    quoted words, a trailing * left off), as the offline colleagues roughly do."""
    asked = _said(messages[-1]).lower()
    said = []
    for line in _said(messages[0]).partition(INSTRUCTIONS)[2].splitlines():
        fact, _, condition = line.removeprefix("- ").strip().partition(CONDITION)
        if fact and (not condition or any(word.rstrip("*").lower() in asked for word in condition.split('"')[1::2])):
            said.append(fact)
    return " ".join(said)


def judge_reply(messages: list[dict[str, Any]]) -> str:
    material = _said(messages[-1]).partition("<material>")[2].partition("</material>")[0]
    return "yes" if material.strip() else "no"


#: The replies of the roles a request is found to play.
ROLES: dict[str, Callable[[list[dict[str, Any]]], str]] = {"colleague": colleague_reply, "judge": judge_reply}


def intern_reply(tools: set[str], messages: list[dict[str, Any]]) -> str | dict | None:
    """The intern's next step, or None when the request is not a Trainee-Bench day's."""
    if not DAY_TOOLS <= tools:
        return None
    results = [m.get("content") for m in messages if m.get("role") == "tool"]
    if not results:
        return {"content": None, "tool_calls": [{"name": "list_users", "arguments": {}}]}
    if len(results) == 1:
        try:
            users = json.loads(str(results[0]))["users"]
            hr = next((u["name"] for u in users if "HR" in u["position"]), users[0]["name"])
        except (ValueError, KeyError, IndexError, TypeError, StopIteration):
            hr = "nobody"
        return {"content": None, "tool_calls": [{"name": "send_message", "arguments": {"to": hr, "text": QUESTION}}]}
    if len(results) == 2:
        return {"content": None, "tool_calls": [{"name": "done", "arguments": {}}]}
    return "Final answer: I asked HR for help and ended my day."
