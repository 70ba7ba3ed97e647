"""OccuBench: evaluate AI agents on professional work in LLM-simulated worlds, executable worlds and workplace
scenarios, through one agent loop, one verifier stack and one results format.

    import occubench
    summary = occubench.run(occubench.RunConfig(suite="executable", agent="reference"))

Names are imported on first use, so ``import occubench`` stays cheap (the openai SDK loads only when a model is
called).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench._lazy import lazy_exports

__version__ = "0.1.0"

#: Public name → the module that defines it.
_EXPORTS = {
    "run": "occubench._run", "RunSummary": "occubench._run",
    "run_matrix": "occubench._matrix", "MatrixOutcome": "occubench._matrix",
    "RunConfig": "occubench.config",
    "Result": "occubench.results", "ErrorInfo": "occubench.results",
    "Agent": "occubench.agent", "ToolCallingAgent": "occubench.agent", "ScriptedAgent": "occubench.agent",
    "Environment": "occubench.environment", "Wrapper": "occubench.environment",
    "ConfigError": "occubench.errors", "LLMError": "occubench.errors", "LLMRequestError": "occubench.errors",
    "LLMUnavailableError": "occubench.errors", "OccuBenchError": "occubench.errors",
    "VerifierError": "occubench.errors", "WorldError": "occubench.errors",
    "LLMClient": "occubench.llm", "Model": "occubench.llm", "RetryPolicy": "occubench.llm",
    "Usage": "occubench.llm", "create_client": "occubench.llm",
    "AgentContext": "occubench.plugins", "SuiteDefinition": "occubench.plugins", "SuitePlan": "occubench.plugins",
    "evaluate_task": "occubench.runner", "run_tasks": "occubench.runner",
    "ResultStore": "occubench.store", "load_results": "occubench.store", "read_results": "occubench.store",
    "Suite": "occubench.suite",
    "Task": "occubench.task",
    "ToolError": "occubench.tools", "ToolSpec": "occubench.tools",
    "Step": "occubench.trajectory", "ToolCall": "occubench.trajectory", "Trajectory": "occubench.trajectory",
    "RubricVerifier": "occubench.verifier", "Verdict": "occubench.verifier", "Vote": "occubench.verifier",
}

__all__ = [
    "Agent", "AgentContext", "ConfigError", "Environment", "ErrorInfo", "LLMClient", "LLMError", "LLMRequestError",
    "LLMUnavailableError", "MatrixOutcome", "Model", "OccuBenchError", "Result", "ResultStore", "RetryPolicy",
    "RubricVerifier", "RunConfig", "RunSummary", "ScriptedAgent", "Step", "Suite", "SuiteDefinition", "SuitePlan",
    "Task", "ToolCall", "ToolCallingAgent", "ToolError", "ToolSpec", "Trajectory", "Usage", "Verdict",
    "VerifierError", "Vote", "WorldError", "Wrapper", "create_client", "evaluate_task", "load_results",
    "read_results", "run", "run_matrix", "run_tasks"
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench._matrix import MatrixOutcome, run_matrix
    from occubench._run import RunSummary, run
    from occubench.agent import Agent, ScriptedAgent, ToolCallingAgent
    from occubench.config import RunConfig
    from occubench.environment import Environment, Wrapper
    from occubench.errors import (
        ConfigError,
        LLMError,
        LLMRequestError,
        LLMUnavailableError,
        OccuBenchError,
        VerifierError,
        WorldError,
    )
    from occubench.llm import LLMClient, Model, RetryPolicy, Usage, create_client
    from occubench.plugins import AgentContext, SuiteDefinition, SuitePlan
    from occubench.results import ErrorInfo, Result
    from occubench.runner import evaluate_task, run_tasks
    from occubench.store import ResultStore, load_results, read_results
    from occubench.suite import Suite
    from occubench.task import Task
    from occubench.tools import ToolError, ToolSpec
    from occubench.trajectory import Step, ToolCall, Trajectory
    from occubench.verifier import RubricVerifier, Verdict, Vote
