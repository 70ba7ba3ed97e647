"""``occubench.lwm``: the OccuBench README's Python example, run as a user's program against the mock server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from occubench import lwm
from occubench.simulated import SimulatedEnvironment, WorldModelRegistry, create_client
from occubench.testing import MockLLMServer

#: The README's example line by line; only the endpoint is the mock's instead of api.openai.com.
EXAMPLE = """\
from occubench.lwm import WorldModelRegistry, LWMEnvironment, create_client
registry = WorldModelRegistry("data/world_model_configs")
config = registry.get("env_153c260a856a")
client = create_client(api_key="YOUR_KEY", base_url="{base_url}")
env = LWMEnvironment(config, client, world_model="gpt-4o")
tools = env.get_tool_schemas()
observation = env.simulate("get_property_metadata", '{{"property_id": "OAK-88"}}')
print(observation)
"""


def test_the_readmes_example_runs_as_printed(shared_data: Path, server: MockLLMServer, tmp_path: Path) -> None:
    (tmp_path / "data").symlink_to(shared_data)
    (tmp_path / "example.py").write_text(EXAMPLE.format(base_url=server.base_url))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OCCUBENCH_"))}
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    observation = json.loads(done.stdout)
    assert observation["tool"] == "get_property_metadata"  # the mock's observation, as JSON text
    (request,) = server.requests
    assert request["model"] == "gpt-4o"
    config = WorldModelRegistry(shared_data / "world_model_configs").get("env_153c260a856a")
    assert request["messages"][0]["content"].startswith(config.system_prompt)
    assert json.loads(request["messages"][-1]["content"]) == {"name": "get_property_metadata",
                                                              "arguments": {"property_id": "OAK-88"}}


def test_the_names_are_the_harness_own(small_data: Path, server: MockLLMServer) -> None:
    """One implementation under two names: what the harness runs is what the README's users get."""
    assert (lwm.LWMEnvironment, lwm.WorldModelRegistry, lwm.create_client) == (
        SimulatedEnvironment, WorldModelRegistry, create_client)
    config = lwm.WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    env = lwm.LWMEnvironment(config, lwm.create_client(api_key="k", base_url=server.base_url), world_model="w")
    assert [tool["function"]["name"] for tool in env.get_tool_schemas()] == [a["name"] for a in config.actions]
    env.simulate("get_prescription", '{"rx_id": "RX-100"}')
    env.simulate("get_prescription", '{"rx_id": "RX-101"}')
    assert len(server.requests[-1]["messages"]) == 4  # the world model saw the first call
    env.reset()
    env.simulate("get_prescription", '{"rx_id": "RX-100"}')
    assert len(server.requests[-1]["messages"]) == 2  # a new episode: no earlier calls


@pytest.mark.parametrize("arguments", ['{"rx_id": ', "[1, 2]", '{"rx_id": 7}'])
def test_arguments_a_model_got_wrong_are_answered_without_asking_the_world_model(
        small_data: Path, server: MockLLMServer, arguments: str) -> None:
    config = lwm.WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    env = lwm.LWMEnvironment(config, lwm.create_client(api_key="k", base_url=server.base_url), world_model="w")
    observation = json.loads(env.simulate("get_prescription", arguments))
    assert observation["error"] == "invalid_arguments" and not server.requests


def test_the_module_is_a_plain_module() -> None:
    """A real file (no import hook), so tools that read source, and `python -m pydoc occubench.lwm`, find it."""
    assert Path(lwm.__file__).name == "lwm.py" and set(lwm.__all__) >= {
        "LWMEnvironment", "WorldModelRegistry", "create_client"}
    text = textwrap.dedent(lwm.__doc__ or "")
    assert "LWMEnvironment" in text
