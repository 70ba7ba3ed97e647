"""Guidance tiers make a difference: a scripted weak agent, which can carry out any single step of a task but never
decides by itself whom to ask or where to look, fails tasks at tier 0 and passes every one of them at tier 3.

The weak agent plays the reference solution of each task, in the reference schedule's order, but only as far as it
has been told: a message goes only to a colleague or group named in what it can see of the task (objective and
guidance, as the task list showed them) or in what its own earlier steps of that task returned (a colleague's reply,
a file it read); a file is read, downloaded or looked at (an image) only once its path is in that text, a folder
listed only once the folder is; the colleague list is consulted only when the task's text mentions it. Calendar,
workspace (shell commands too) and calculator steps it can always take: once it knows where things are, it can do
the job. At the first step of a task it has not been told to
take, it gives that task up. It runs over the real CLI and the real openai SDK against the loopback mock server.
"""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from occubench.cli import run as evaluate
from occubench.store import read_results
from occubench.testing import MockLLMServer
from occubench.testing.server import Responder
from occubench.workplace.generate import generate_day, write_days
from occubench.workplace.model import Day, WorkTask
from occubench.workplace.schedule import reference_schedule
from occubench.workplace.templates import FAMILIES
from tests.conftest import agent_requests

SEED = 3
#: Days whose tasks are all on the list from the start and that have no meetings, so the one list_tasks at the
#: start shows everything the agent will get (and its guidance); the families that need a meeting are left out.
MEETING_FAMILIES = {"meeting_followup"}
#: Days are taken in order, each one that brings a family seen fewer times than this, until every family but those
#: has been seen this often: a draw of each family in few days.
PER_FAMILY = 1
MAX_INDEX = 1000

#: Steps that need no knowing whom to ask or where to look.
ALWAYS = {"list_meetings", "get_available_rooms", "book_meeting", "cancel_meeting", "attend_meeting", "write_file",
          "calculator", "execute_command"}


def plain_days() -> list[Day]:
    wanted = set(FAMILIES) - MEETING_FAMILIES
    seen: Counter[str] = Counter()
    days = []
    for index in range(1, MAX_INDEX + 1):
        day = generate_day(SEED, index)
        if day.meetings or any(task.appears != "start" for task in day.tasks) or \
                all(seen[task.family] >= PER_FAMILY for task in day.tasks):
            continue
        days.append(day)
        seen.update(task.family for task in day.tasks)
        if all(seen[family] >= PER_FAMILY for family in wanted):
            return days
    raise AssertionError(f"seed {SEED}: not every family in {MAX_INDEX} days")


def text_of(value: Any) -> str:
    """Every string in a JSON value, a line each."""
    if isinstance(value, dict):
        return "\n".join(text_of(item) for item in value.values())
    if isinstance(value, list):
        return "\n".join(text_of(item) for item in value)
    return str(value)


def told(step: dict[str, Any], known: str) -> bool:
    """Whether ``known`` — what the agent can see of a task and what its steps of the task returned so far — tells
    it to take ``step``."""
    tool, arguments = step["tool"], step["arguments"]
    if tool in ALWAYS:
        return True
    if tool == "send_message":
        return bool(arguments["to"] in known)
    if tool == "open_folder":
        return named(posixpath.normpath(arguments["folder_path"]) + "/", known)
    if tool in ("read_file", "download_file", "read_image"):
        return named(arguments["file_path"], known)
    if tool == "list_users":
        return "list_users" in known
    raise AssertionError(f"the weak agent does not know the tool {tool}")


def named(path: str, known: str) -> bool:
    """Whether ``path`` is in ``known`` in full, or by its name in a listing of a folder named there."""
    folder, name = posixpath.split(path.rstrip("/"))
    return path in known or bool(folder) and named(f"{folder}/", known) and name + path[len(path.rstrip("/")):] in known


def next_call(day: Day, visible: dict[str, str], observations: list[str]) -> dict[str, Any] | None:
    """The weak agent's next call on ``day`` after list_tasks showed ``visible`` (task id → objective and guidance)
    and its later calls returned ``observations``; None once it has finished the day. The plan is replayed from the
    start each time, so the agent keeps no state between requests."""
    schedule, _ = reference_schedule(day)
    owner = {id(step): task for task in day.tasks for step in task.reference}
    known = dict(visible)
    given_up: set[str] = set()
    played = 0
    for step in schedule[1:-1]:  # between list_tasks and done
        task = owner[id(step)]
        if task.id in given_up:
            continue
        if not told(step, known[task.id]):
            given_up.add(task.id)
            continue
        if played == len(observations):
            return step
        known[task.id] += "\n" + observations[played]
        played += 1
    return {"tool": "done", "arguments": {}} if played == len(observations) else None


def weak_agent(days: list[Day]) -> Responder:
    """The weak agent as a mock-server responder; it also answers the preflight's probes."""
    by_objectives = {frozenset(task.objective for task in day.tasks): day for day in days}

    def respond(request: dict, index: int) -> str | dict:
        messages = request["messages"]
        if messages[0]["role"] != "system":  # the preflight's probes
            return {"content": None, "tool_calls": [{"name": "report_ok", "arguments": {}}]} \
                if request.get("tools") else "OK"
        results = [text_of(json.loads(m["content"])) for m in messages if m["role"] == "tool"]
        if not results:
            return {"content": None, "tool_calls": [{"name": "list_tasks", "arguments": {}}]}
        listed = json.loads(next(m["content"] for m in messages if m["role"] == "tool"))["tasks"]
        day = by_objectives[frozenset(task["objective"] for task in listed)]
        visible = {task["id"]: task["objective"] + "\n" + task.get("guidance", "") for task in listed}
        call = next_call(day, visible, results[1:])
        if call is None:
            return "Done for today."
        return {"content": None, "tool_calls": [{"name": call["tool"], "arguments": call["arguments"]}]}

    return respond


def scores(run_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(day id, task id) → the task's score record."""
    return {(record["task_id"], task["task_id"]): task for record in read_results(run_dir / "results.jsonl")
            for task in record["verdict_details"]["task_scores"]}


@pytest.mark.slow  # two runs of a day per family: over 5 s
def test_tier_three_guidance_lets_the_weak_agent_pass_what_it_fails_at_tier_zero(tmp_path: Path) -> None:
    days = plain_days()
    tasks: dict[tuple[str, str], WorkTask] = {(day.id, task.id): task for day in days for task in day.tasks}
    families = {task.family for task in tasks.values()}
    assert families == set(FAMILIES) - MEETING_FAMILIES  # every family that fits a one-list day is tested
    write_days(days, tmp_path / "days")
    with MockLLMServer(weak_agent(days)) as server:
        code = evaluate.main(["--suite", "workplace", "--workplace-dir", str(tmp_path / "days"),
                              "--agent-model", "weak", "--base-url", server.base_url, "--guidance", "0", "3",
                              "--output-dir", str(tmp_path / "runs")])
    assert code == 0
    [tier3] = [d for d in (tmp_path / "runs").iterdir() if "__guidance3__" in d.name]
    [tier0] = [d for d in (tmp_path / "runs").iterdir() if d.is_dir() and d != tier3]
    before, after = scores(tier0), scores(tier3)
    assert set(before) == set(after) == set(tasks)

    # Without guidance the weak agent fails a good share of the tasks, of several families ...
    failed = {key for key, score in before.items() if not score["success"]}
    failed_families = Counter(tasks[key].family for key in failed)
    assert len(failed) >= len(tasks) // 4 and len(failed_families) >= 6, failed_families
    # ... yet it is no broken agent: the tasks whose objective says whom to ask and where to look, it does.
    assert len(failed) < len(tasks)
    # With all three tiers it passes every task: each one it failed, and none it passed is lost.
    assert not [key for key, score in after.items() if not score["success"]], \
        sorted((key, tasks[key].family) for key, score in after.items() if not score["success"])

    # The guidance reached the agent through its task list at tier 3, and none at tier 0: each day's task list came
    # to it twice, once bare and once with each task's three hints.
    shown: dict[str, list[list[dict[str, Any]]]] = {}
    for request in agent_requests(server):
        first = next((m for m in request["messages"] if m["role"] == "tool"), None)
        if first is not None:
            listed = json.loads(first["content"])["tasks"]
            day = next(day for day in days if {t.objective for t in day.tasks} == {t["objective"] for t in listed})
            if listed not in shown.setdefault(day.id, []):
                shown[day.id].append(listed)
    for day in days:
        bare, guided = sorted(shown[day.id], key=lambda listed: "guidance" in listed[0])
        assert not any("guidance" in task for task in bare), day.id
        assert {task["id"]: task["guidance"] for task in guided} == \
            {task.id: " ".join(task.hints[:3]) for task in day.tasks}, day.id
    for run_dir, tier in ((tier0, 0), (tier3, 3)):
        for record in read_results(run_dir / "results.jsonl"):
            [call] = record["steps"][0]["tool_calls"]
            assert call["name"] == "list_tasks"
            assert all(("guidance" in task) == (tier == 3) for task in call["observation"]["tasks"])
