"""LLM-simulated worlds (the OccuBench benchmark): a world model answers every tool call from a config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

_EXPORTS = {
    "create_client": "occubench.llm.client",
    "WorldModelConfig": "occubench.simulated.config", "WorldModelRegistry": "occubench.simulated.config",
    "SimulatedEnvironment": "occubench.simulated.environment",
    "OccuBenchSuite": "occubench.simulated.suite",
    "load_tasks": "occubench.simulated.tasks",
}

__all__ = [
    "OccuBenchSuite", "SimulatedEnvironment", "WorldModelConfig", "WorldModelRegistry", "create_client", "load_tasks"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.llm.client import create_client
    from occubench.simulated.config import WorldModelConfig, WorldModelRegistry
    from occubench.simulated.environment import SimulatedEnvironment
    from occubench.simulated.suite import OccuBenchSuite
    from occubench.simulated.tasks import load_tasks
