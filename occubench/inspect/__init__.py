"""OccuBench in Inspect AI (``pip install "occubench[inspect]"``): our suites as Inspect tasks.

    inspect eval occubench/occubench --model openai/gpt-4o --model-role world=openai/gpt-4o -T env_mode=E2
    inspect eval occubench/executable --model openai/gpt-4o -T world=insurance_claims
    inspect eval occubench/workplace --model openai/gpt-4o -T days=5 -T seed=7

The agent under test is Inspect's ReAct agent with the world's tools (:mod:`occubench.inspect.solver`); the
simulator, the judges and the colleagues are the eval's model roles ``world``, ``grader`` and ``colleague``
(:mod:`occubench.inspect._bridge`); the scorer is the suite's own verifier (:mod:`occubench.inspect.scorer`).
``occubench report`` reads the ``.eval`` logs these tasks write as it reads run directories
(:mod:`occubench.inspect.logs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

# Names load on first use: the report reads logs (occubench.inspect.logs) without loading the tasks.
_EXPORTS = {
    "day_score": "occubench.inspect.scorer", "trajectory_of": "occubench.inspect.scorer",
    "verdict": "occubench.inspect.scorer", "inspect_tool": "occubench.inspect.solver",
    "world_agent": "occubench.inspect.solver", "executable": "occubench.inspect.tasks",
    "occubench": "occubench.inspect.tasks", "workplace": "occubench.inspect.tasks", "awm": "occubench.inspect.tasks",
    "read_log": "occubench.inspect.logs",
}

__all__ = ["awm", "day_score", "executable", "inspect_tool", "occubench", "read_log", "trajectory_of", "verdict",
           "workplace", "world_agent"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.inspect.logs import read_log
    from occubench.inspect.scorer import day_score, trajectory_of, verdict
    from occubench.inspect.solver import inspect_tool, world_agent
    from occubench.inspect.tasks import awm, executable, occubench, workplace
