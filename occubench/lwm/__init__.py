"""LLM-simulated worlds (the OccuBench benchmark): a world model answers every tool call from a config."""

from occubench.llm import create_client
from occubench.lwm.config import WorldModelConfig, WorldModelRegistry
from occubench.lwm.environment import LWMEnvironment
from occubench.lwm.suite import OccuBenchSuite
from occubench.lwm.tasks import load_tasks

__all__ = ["LWMEnvironment", "OccuBenchSuite", "WorldModelConfig", "WorldModelRegistry", "create_client",
           "load_tasks"]
