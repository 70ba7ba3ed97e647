"""Validation of executable worlds: every task's reference solution passes, a do-nothing agent and a plausible
wrong solution fail, and each world and task has the size the suite promises."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from occubench.core.agent import NOOP, ScriptedAgent
from occubench.core.episode import Episodes
from occubench.core.task import Task
from occubench.executable.isolated import IsolatedWorld, open_environment
from occubench.executable.suite import ExecutableSuite, exec_task
from occubench.executable.world import Call, World

MIN_TOOLS, MIN_ROWS, MIN_TASKS, MIN_CALLS = 5, 15, 3, 4


def _script(calls: Sequence[Call], answer: str) -> tuple[list[tuple[str, dict]], str]:
    return [(call.tool, dict(call.arguments)) for call in calls], answer


REFERENCE = ScriptedAgent(lambda task: _script(exec_task(task).reference, exec_task(task).answer))
WRONG = ScriptedAgent(lambda task: _script(exec_task(task).wrong, exec_task(task).wrong_answer))


@dataclass
class TaskValidation:
    task: Task
    reference: bool
    noop: bool
    wrong: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reference and not self.noop and not self.wrong and not self.problems


def world_problems(world: World | IsolatedWorld) -> list[str]:
    """What keeps a world from meeting the suite's size rules."""
    problems = []
    if len(world.tools) < MIN_TOOLS:
        problems.append(f"{len(world.tools)} tools (at least {MIN_TOOLS})")
    env = open_environment(world)
    try:
        sizes = env.table_sizes()
    finally:
        env.close()
    for table in world.main_tables:
        if sizes.get(table, 0) < MIN_ROWS:
            problems.append(f"table {table} has {sizes.get(table, 0)} rows (at least {MIN_ROWS})")
    if len(world.tasks) < MIN_TASKS or {t.difficulty for t in world.tasks} != {1, 2, 3}:
        problems.append(f"needs at least {MIN_TASKS} tasks covering difficulties 1, 2 and 3")
    return problems


def validate(worlds: Sequence[World | IsolatedWorld]) -> tuple[dict[str, list[str]], list[TaskValidation]]:
    """World-level problems, and per task: reference passes, do-nothing fails, wrong solution fails."""
    suite = ExecutableSuite(worlds)
    results = []
    for task in suite.tasks():
        spec = exec_task(task)
        outcome = {name: Episodes(suite, agent, {}).evaluate(task) for name, agent in
                   (("reference", REFERENCE), ("noop", NOOP), ("wrong", WRONG))}
        problems = [f"{name}: {result.error.message}" for name, result in outcome.items() if result.error]
        if len(spec.reference) < MIN_CALLS:
            problems.append(f"reference solution makes {len(spec.reference)} calls (at least {MIN_CALLS})")
        world = suite.worlds[task.env_name]
        if not any(world.tools[call.tool].writes for call in spec.reference if call.tool in world.tools):
            problems.append("reference solution changes no state")
        reference_errors = [c.observation for c in outcome["reference"].tool_calls if "error" in c.observation]
        if reference_errors:
            problems.append(f"reference solution gets tool errors: {reference_errors}")
        results.append(TaskValidation(task, outcome["reference"].passed, outcome["noop"].passed,
                                      outcome["wrong"].passed, problems))
    return {world.name: world_problems(world) for world in worlds}, results
