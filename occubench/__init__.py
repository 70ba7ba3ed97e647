"""OccuBench: evaluate AI agents on professional work in LLM-simulated worlds, executable worlds and workplace
scenarios, through one agent loop, one verifier stack and one results format.

    import occubench
    summary = occubench.run(occubench.RunConfig(suite="executable", agent="reference"))

Names are imported on first use, so ``import occubench`` stays cheap (matplotlib, aiohttp and the world kinds load
only when used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

__version__ = "0.1.0"

#: Public name → the module that defines it.
_EXPORTS = {name: module for module, names in {
    "occubench.config": ("RunConfig", "ModelRole"),
    "occubench.core.agent": ("Agent", "AsyncAgent", "ToolCallingAgent", "ScriptedAgent"),
    "occubench.core.environment": ("AsyncEnvironment", "Environment", "Wrapper"),
    "occubench.core.images": ("Image",),
    "occubench.core.results": ("Result", "ErrorInfo"),
    "occubench.core.suite": ("Suite", "SuiteDefinition", "SuitePlan"),
    "occubench.core.task": ("Task",),
    "occubench.core.tools": ("ToolError", "ToolSpec"),
    "occubench.core.trajectory": ("Step", "ToolCall", "Trajectory"),
    "occubench.core.verifier": ("RubricVerifier", "Verdict", "Vote"),
    "occubench.engine.executor": ("Executor",),
    "occubench.engine.matrix": ("run_matrix", "MatrixOutcome"),
    "occubench.engine.registry": ("AgentContext",),
    "occubench.engine.run": ("run", "RunSummary"),
    "occubench.errors": ("ConfigError", "LLMError", "LLMRequestError", "LLMUnavailableError", "OccuBenchError",
                         "VerifierError", "WorldError"),
    "occubench.llm": ("LLMClient", "Model", "RetryPolicy", "Usage", "create_client"),
    "occubench.store": ("load_results",),
}.items() for name in names}

__all__ = [
    "Agent", "AgentContext", "AsyncAgent", "AsyncEnvironment", "ConfigError", "Environment", "ErrorInfo",
    "Executor", "Image", "LLMClient", "LLMError", "LLMRequestError", "LLMUnavailableError", "MatrixOutcome", "Model",
    "ModelRole", "OccuBenchError", "Result", "RetryPolicy", "RubricVerifier", "RunConfig", "RunSummary",
    "ScriptedAgent", "Step", "Suite", "SuiteDefinition", "SuitePlan", "Task", "ToolCall", "ToolCallingAgent",
    "ToolError", "ToolSpec", "Trajectory", "Usage", "Verdict", "VerifierError", "Vote", "WorldError", "Wrapper",
    "create_client", "load_results", "run", "run_matrix",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.config import ModelRole, RunConfig
    from occubench.core.agent import Agent, AsyncAgent, ScriptedAgent, ToolCallingAgent
    from occubench.core.environment import AsyncEnvironment, Environment, Wrapper
    from occubench.core.images import Image
    from occubench.core.results import ErrorInfo, Result
    from occubench.core.suite import Suite, SuiteDefinition, SuitePlan
    from occubench.core.task import Task
    from occubench.core.tools import ToolError, ToolSpec
    from occubench.core.trajectory import Step, ToolCall, Trajectory
    from occubench.core.verifier import RubricVerifier, Verdict, Vote
    from occubench.engine.executor import Executor
    from occubench.engine.matrix import MatrixOutcome, run_matrix
    from occubench.engine.registry import AgentContext
    from occubench.engine.run import RunSummary, run
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
    from occubench.store import load_results
