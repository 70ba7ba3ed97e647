"""The mock server's Trainee-Bench roles, so that a run of the reference's configs reaches every one offline: a
colleague (the colleague role's prompt) answers with its reply rules, as the offline colleagues do; the judge says
yes to a question about any material; and, given a Trainee-Bench day's tools, the agent is an intern who lists the
company, asks an HR Manager for help and ends its day."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from occubench.traineebench.colleagues import INSTRUCTIONS
from occubench.traineebench.families.website_analysis import ASK

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


def colleague_reply(messages: list[dict[str, Any]]) -> str:
    """The colleague's reply rules, as the offline colleagues give them, whatever the message."""
    rules = _said(messages[0]).partition(INSTRUCTIONS)[2]
    return " ".join(line.removeprefix("- ").strip() for line in rules.splitlines() if line.strip())


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
