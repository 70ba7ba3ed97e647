"""The original OccuBench Python API: a Language World Model environment usable in any agent framework.

    from occubench.lwm import WorldModelRegistry, LWMEnvironment, create_client

    registry = WorldModelRegistry("data/world_model_configs")
    env = LWMEnvironment(registry.get("env_153c260a856a"), create_client(api_key=..., base_url=...),
                         world_model="gpt-4o")
    tools = env.get_tool_schemas()                    # OpenAI function tools, for the agent
    observation = env.simulate("get_property_metadata", '{"property_id": "OAK-88"}')   # JSON text
    env.reset()                                       # a new episode: the world forgets earlier calls

These names are a documented contract (the OccuBench README's example); the harness itself calls them
:class:`occubench.simulated.SimulatedEnvironment` and friends, and this module keeps the original names whatever the
package's own layout becomes.
"""

from __future__ import annotations

from occubench.llm.client import create_client
from occubench.simulated.config import WorldModelConfig, WorldModelRegistry
from occubench.simulated.environment import SimulatedEnvironment as LWMEnvironment

__all__ = ["LWMEnvironment", "WorldModelConfig", "WorldModelRegistry", "create_client"]
