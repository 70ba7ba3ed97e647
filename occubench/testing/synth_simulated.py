"""The mock server's answers to the LLM-simulated-world synthesis stages (see :mod:`occubench.testing.synth`).

Every environment it designs has four tools; every task's rubric says which calls pass ("The agent must call
`name`"), which the mock verifier checks against the trajectory, and the mock agent, given a plan, calls the tools the
plan names (without one, the first two). So a task's calibration follows from what the mock wrote:

- by default the rubric asks for ``search_records`` and ``update_record``, the plan names both: the agent passes
  with the plan and fails without it (solvable, difficulty 3);
- ``"trivial": [n, ...]`` (sub-topic numbers, from 1, in every scenario): the rubric asks only for
  ``search_records``, which the agent calls anyway: it passes without the plan too;
- ``"unsolvable": [n, ...]``: the plan names ``get_record`` instead of ``update_record``, so it fails with the plan;
  the repair stage rewrites the plan from the rubric (diagnosis ``plan_wrong``);
- ``"unrepairable": [n, ...]``: as unsolvable, and the repair changes only its explanation.

For a scenario of a built-in executable world, the environment is that world's twin (:mod:`occubench.twin.derive`),
so the twin gate of the synthesis measures it against the world (with the server's twin mode, as faithful as asked).
"""

from __future__ import annotations

import re
from typing import Any

from occubench.testing.synth import Handler


def _scenarios(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    category = str(inputs.get("category"))
    # One name the caller asked to avoid comes back, as models do, so its de-duplication is exercised.
    avoid = [str(name) for name in inputs.get("avoid") or []][:1]
    names = avoid + [f"{category} Workflow {i}" for i in range(1, int(inputs.get("count") or 1) + 1)]
    return {"scenarios": [{"task_scenario_name": name, "domain": f"{category} Operations"} for name in names]}


def _subtopics(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    count = int(inputs.get("count") or 1)
    return {"subtopics": [{"name": f"Case {i}", "focus": f"case {i} of {inputs.get('scenario')}"}
                          for i in range(1, count + 1)]}


def _reference(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    scenario = str(inputs.get("scenario"))
    return {"terminology": [{"term": "record", "meaning": f"one case handled in {scenario}"}],
            "workflow": ["find the record", "check it against the rules", "update it", "report the decision"],
            "state_variables": [{"name": "records", "meaning": "the open cases"}],
            "edge_cases": ["a record already closed"], "constraints": ["never update a closed record"]}


def _environment(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    if (world := _executable_world(str(inputs.get("scenario")))) is not None:
        return world  # a scenario an executable world has: its twin, as a model would write it at best
    subtopic = inputs.get("subtopic") or {}
    record = {"type": "object", "properties": {"record_id": {"type": "string"}}, "required": ["record_id"]}
    return {
        "world_model_system_prompt": f"You simulate the case system of {inputs.get('scenario')} "
                                     f"({subtopic.get('name')}). Answer each tool call from the state, consistently.",
        "action_set_definitions": [
            {"name": "search_records", "description": "List the open records.",
             "parameters": {"type": "object", "properties": {}}},
            {"name": "get_record", "description": "One record.", "parameters": record},
            {"name": "update_record", "description": "Set a record's status.", "parameters": record},
            {"name": "submit_decision", "description": "File the decision.", "parameters": record}],
        "state_description": {"records": "the open records"},
        "task_initial_state": {"records": [{"record_id": "R-1", "status": "open"}]}}


def _executable_world(scenario: str) -> dict[str, Any] | None:
    """The twin config of the built-in executable world of ``scenario``, without its name (as stages write them)."""
    from occubench.executable.isolated import describe
    from occubench.executable.registry import builtin_worlds
    from occubench.twin.derive import facts_of, twin_config

    world = next((w for w in builtin_worlds() if w.scenario.lower() == scenario.strip().lower()), None)
    if world is None:
        return None
    config = twin_config(facts_of(describe(world)))
    del config["environment_name"]
    return config


def _number(inputs: dict[str, Any]) -> int:
    match = re.search(r"\d+", str((inputs.get("subtopic") or {}).get("name")))
    return int(match.group()) if match else 0


def _rubric(calls: list[str]) -> str:
    return "Check the trajectory.\n" + "\n".join(f"- The agent must call `{name}`." for name in calls)


def _plan(calls: list[str]) -> str:
    return "Steps:\n" + "\n".join(f"{i}. Call `{name}`." for i, name in enumerate(calls, start=1))


def _task(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    number = _number(inputs)
    required = ["search_records"] if number in script.get("trivial", ()) else ["search_records", "update_record"]
    tools = [action["name"] for action in inputs["environment"]["action_set_definitions"]]
    if not set(required) <= set(tools):  # an executable world's twin: its own first tools
        required = tools[:2]
    planned = ["search_records", "get_record"] \
        if number in {*script.get("unsolvable", ()), *script.get("unrepairable", ())} else required
    return {"agent_instruction": f"Handle case {number}: find the open record, update it and report the outcome.",
            "difficulty_level": 2, "solution_plan": _plan(planned), "verification_plan": _rubric(required)}


def _repair(inputs: dict[str, Any], script: dict[str, Any]) -> dict[str, Any]:
    task = dict(inputs["task"])
    if _number(inputs) not in script.get("unrepairable", ()):
        task["solution_plan"] = _plan(re.findall(r"The agent must call `(\w+)`", task["verification_plan"]))
    return {"diagnosis": "plan_wrong", "explanation": "The plan does not make the calls the rubric requires.",
            "environment": inputs["environment"], "task": task}


STAGES: dict[str, Handler] = {"scenarios": _scenarios, "subtopics": _subtopics, "reference": _reference,
                              "environment": _environment, "task": _task, "repair": _repair}
