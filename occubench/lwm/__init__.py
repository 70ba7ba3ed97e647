"""LLM-simulated worlds (the OccuBench benchmark): a world model answers every tool call from a config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.util.lazy import lazy_exports

_EXPORTS = {
    "create_client": "occubench.llm.client",
    "WorldModelConfig": "occubench.lwm.config", "WorldModelRegistry": "occubench.lwm.config",
    "LWMEnvironment": "occubench.lwm.environment",
    "OccuBenchSuite": "occubench.lwm.suite",
    "load_tasks": "occubench.lwm.tasks",
}

__all__ = [
    "LWMEnvironment", "OccuBenchSuite", "WorldModelConfig", "WorldModelRegistry", "create_client", "load_tasks"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from occubench.llm.client import create_client
    from occubench.lwm.config import WorldModelConfig, WorldModelRegistry
    from occubench.lwm.environment import LWMEnvironment
    from occubench.lwm.suite import OccuBenchSuite
    from occubench.lwm.tasks import load_tasks
