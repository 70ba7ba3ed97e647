"""The stages that turn a scenario into simulated worlds and tasks: each a role's instructions, the JSON schema of
its answer and the checks beyond it (a configuration must load as ``occubench run`` loads it; its tools' schemas
must be ones the harness checks arguments against; its initial state must fill the state it describes; a plan must
use the world's tools)."""

from __future__ import annotations

import re
from typing import Any

from occubench.core.tools import schema_problem
from occubench.errors import ConfigError
from occubench.simulated.config import WorldModelConfig
from occubench.synth.engine import Stage

_TEXT = {"type": "string", "minLength": 1}
_TEXTS = {"type": "array", "items": _TEXT, "minItems": 1}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _object(required: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": list(required), "additionalProperties": False, "properties": required}


def _names(items: list[dict[str, Any]], key: str) -> list[str]:
    seen: set[str] = set()
    repeated = []
    for item in items:
        folded = " ".join(str(item[key]).lower().split())
        if folded in seen:
            repeated.append(str(item[key]))
        seen.add(folded)
    return [f"{key} {name!r} appears more than once" for name in repeated]


SCENARIOS = Stage(
    name="scenarios",
    instructions=(
        "You design evaluation scenarios for AI agents doing professional work. Propose `count` distinct workflows "
        "that people in the given industry category carry out with software tools, each named in a few words as a "
        "practitioner would name it (e.g. 'Pharmacy Discharge Reconciliation'), with the domain it belongs to. "
        "Avoid every name in `avoid` and anything that is the same workflow under another name."),
    schema=_object({"scenarios": {"type": "array", "minItems": 1, "items": _object(
        {"task_scenario_name": _TEXT, "domain": _TEXT})}}),
    check=lambda answer, inputs: _names(answer["scenarios"], "task_scenario_name"))

SUBTOPICS = Stage(
    name="subtopics",
    instructions=(
        "Split the professional scenario into `count` sub-topics that do not overlap: each is a distinct situation "
        "a practitioner handles (a different case, decision or exception), specific enough to become one task."),
    schema=_object({"subtopics": {"type": "array", "minItems": 1, "items": _object({"name": _TEXT, "focus": _TEXT})}}),
    check=lambda answer, inputs: _names(answer["subtopics"], "name") + (
        [f"{len(answer['subtopics'])} sub-topics, at most {inputs['count']} wanted"]
        if len(answer["subtopics"]) > inputs["count"] else []))

REFERENCE = Stage(
    name="reference",
    instructions=(
        "Write the reference document an expert would give a newcomer to this scenario: its terminology, the "
        "workflow step by step, the state variables a system tracking the work would hold, the edge cases that "
        "trip people up, and the rules and constraints that must hold. Be concrete: name fields, units, "
        "thresholds and identifiers as the profession does."),
    schema=_object({"terminology": {"type": "array", "minItems": 1, "items": _object({"term": _TEXT,
                                                                                     "meaning": _TEXT})},
                    "workflow": _TEXTS, "state_variables": {"type": "array", "minItems": 1, "items": _object(
                        {"name": _TEXT, "meaning": _TEXT})},
                    "edge_cases": _TEXTS, "constraints": _TEXTS}))


def check_environment(answer: dict[str, Any], inputs: dict[str, Any]) -> list[str]:
    """What would make the configuration unusable or inconsistent; empty when none."""
    problems = []
    try:
        WorldModelConfig.from_dict({"environment_name": "env", **answer}, "the configuration")
    except ConfigError as exc:
        problems.append(str(exc))
    problems += _names(answer["action_set_definitions"], "name")
    for action in answer["action_set_definitions"]:
        if not _NAME.match(action["name"]):
            problems.append(f"tool name {action['name']!r} is not an identifier (letters, digits, underscores)")
        # A schema the harness can enforce, or the world's tool calls would go unchecked (RE2 runs its patterns).
        if problem := schema_problem(action["parameters"]):
            problems.append(f"tool {action['name']!r}: parameters the harness cannot check: {problem}")
    described, initial = set(answer["state_description"]), set(answer["task_initial_state"])
    if lacking := ", ".join(sorted(described - initial)):
        problems.append(f"task_initial_state lacks the described state field(s) {lacking}")
    if undescribed := ", ".join(sorted(initial - described)):
        problems.append(f"state_description does not describe the field(s) {undescribed}")
    return problems


_TOOL = _object({"name": _TEXT, "description": _TEXT, "parameters": {"type": "object"}})
ENVIRONMENT_SCHEMA = _object({
    "world_model_system_prompt": {"type": "string", "minLength": 40},
    "action_set_definitions": {"type": "array", "minItems": 2, "items": _TOOL},
    "state_description": {"type": "object", "minProperties": 1, "additionalProperties": _TEXT},
    "task_initial_state": {"type": "object", "minProperties": 1}})

ENVIRONMENT = Stage(
    name="environment",
    instructions=(
        "Design the simulated environment for one sub-topic of the scenario, from the reference document. A "
        "language model will play it: `world_model_system_prompt` tells that model what system it simulates, how "
        "each tool's call changes the state and what the tool returns, how to answer invalid calls, and to stay "
        "consistent with the state. `action_set_definitions` are the agent's tools, each a name (an identifier), a "
        "description and `parameters` as a JSON-Schema object. `state_description` explains each state field; "
        "`task_initial_state` gives every one of those fields its initial value, with realistic records, "
        "identifiers and numbers, including what a careful agent needs to discover."),
    schema=ENVIRONMENT_SCHEMA, check=check_environment)


def check_task(answer: dict[str, Any], inputs: dict[str, Any]) -> list[str]:
    tools = [action["name"] for action in inputs["environment"]["action_set_definitions"]]
    if not any(f"`{name}`" in answer["solution_plan"] for name in tools):
        return [f"the solution plan must name the tools it calls in backticks; the tools are "
                f"{', '.join(f'`{name}`' for name in tools)}"]
    return []


TASK_FIELDS = {"agent_instruction": {"type": "string", "minLength": 20},
               "difficulty_level": {"type": "integer", "minimum": 1, "maximum": 3},
               "solution_plan": {"type": "string", "minLength": 20},
               "verification_plan": {"type": "string", "minLength": 20}}

TASK = Stage(
    name="task",
    instructions=(
        "Write one task in this environment for an AI agent: `agent_instruction` as the practitioner's request (it "
        "must need the tools and the initial state to solve, and say what the final answer must contain); "
        "`difficulty_level` 1 (routine) to 3 (needs several findings combined); `solution_plan`, the steps that "
        "solve it, naming each tool in backticks; `verification_plan`, the rubric a judge applies to the agent's "
        "trajectory and final answer: the evidence the agent must have gathered, the exact values and decision "
        "that are correct, and what counts as failure (including a right answer without the evidence)."),
    schema=_object(TASK_FIELDS), check=check_task)

DIAGNOSES = ("instruction_ambiguous", "rubric_wrong", "configuration_inconsistent", "plan_wrong")


def check_repair(answer: dict[str, Any], inputs: dict[str, Any]) -> list[str]:
    return check_environment(answer["environment"], inputs) + check_task(answer["task"], answer)


REPAIR = Stage(
    name="repair",
    instructions=(
        "A task for AI agents failed calibration: even agents given its solution plan did not pass its rubric "
        "often enough. You receive the environment, the task, the pass rates and, for failed runs, the trajectory "
        "and the judge's feedback. Diagnose why (`diagnosis`: the instruction is ambiguous, the rubric is wrong, "
        "the configuration is inconsistent, or the plan is wrong), explain it, and return the whole corrected "
        "environment and task. Fix the cause; do not make the task easier than its instruction says."),
    schema=_object({"diagnosis": {"enum": list(DIAGNOSES)}, "explanation": _TEXT, "environment": ENVIRONMENT_SCHEMA,
                    "task": _object(TASK_FIELDS)}),
    check=check_repair)
