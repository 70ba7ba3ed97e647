"""OccuBench: evaluate AI agents on professional work in LLM-simulated worlds, executable worlds and workplace
scenarios, through one agent loop, one verifier stack and one results format."""

__version__ = "0.1.0"

from occubench.agent import ToolCallingAgent
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
from occubench.runner import evaluate_task, run_tasks
from occubench.store import ResultStore, read_results
from occubench.suite import Suite
from occubench.task import Task
from occubench.trajectory import Step, ToolCall, Trajectory
from occubench.verifier import RubricVerifier, Verdict, Vote

__all__ = [
    "ConfigError",
    "Environment",
    "LLMClient",
    "LLMError",
    "LLMRequestError",
    "LLMUnavailableError",
    "Model",
    "OccuBenchError",
    "ToolCallingAgent",
    "ResultStore",
    "RetryPolicy",
    "RubricVerifier",
    "Step",
    "Suite",
    "Task",
    "ToolCall",
    "Trajectory",
    "Usage",
    "Verdict",
    "VerifierError",
    "Vote",
    "WorldError",
    "Wrapper",
    "create_client",
    "evaluate_task",
    "read_results",
    "run_tasks",
]
