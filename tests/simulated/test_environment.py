"""The simulated environment and the README's Python API, through a loopback server and the real openai SDK."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from occubench.errors import WorldError
from occubench.llm.ledger import open_ledger
from occubench.simulated import SimulatedEnvironment, WorldModelRegistry, create_client
from occubench.testing import MockLLMServer, make_scripted_responder


def test_readme_snippet_on_the_real_data(shared_data: Path, server: MockLLMServer) -> None:
    registry = WorldModelRegistry(shared_data / "world_model_configs")
    config = registry.get("env_153c260a856a")
    client = create_client(api_key="YOUR_KEY", base_url=server.base_url)
    env = SimulatedEnvironment(config, client, world_model="gpt-4o")
    tools = env.get_tool_schemas()
    observation = env.simulate("get_property_metadata", '{"property_id": "OAK-88"}')

    assert len(registry.list_environments()) == 382
    assert [t["function"]["name"] for t in tools] == ["get_current_date", "fetch_unit_level_records",
                                                      "get_property_metadata"]
    assert all(t["type"] == "function" and "example_output" not in t["function"] for t in tools)
    assert json.loads(observation)["tool"] == "get_property_metadata"
    request = server.requests[-1]
    assert request["model"] == "gpt-4o"
    assert request["messages"][0]["content"].startswith(config.system_prompt)


def test_world_model_sees_prompt_history_and_current_action(small_data: Path, server: MockLLMServer) -> None:
    config = WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    env = SimulatedEnvironment(config, create_client("k", server.base_url), "world")
    with open_ledger() as ledger:
        first = env.call("get_prescription", {"rx_id": "RX-100"})
        env.call("record_refill", {"rx_id": "RX-100", "patient_id": "P-7"})

    messages = server.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert config.system_prompt in messages[0]["content"] and "<predicted_observation>" in messages[0]["content"]
    assert json.loads(messages[1]["content"]) == {"name": "get_prescription", "arguments": {"rx_id": "RX-100"}}
    assert messages[2]["content"] == f"<predicted_observation>{json.dumps(first)}</predicted_observation>"
    assert json.loads(messages[3]["content"])["name"] == "record_refill"
    assert ledger.by_role["world"].calls == 2

    env.reset()
    env.call("get_prescription", {"rx_id": "RX-100"})
    assert len(server.requests[-1]["messages"]) == 2


def test_unparsable_answers_are_asked_again(small_data: Path) -> None:
    replies = iter(["I think the refill is fine.",
                    '<predicted_observation>{"refills_left": 2}</predicted_observation>'])
    config = WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    with MockLLMServer(lambda request, index: next(replies)) as server:
        env = SimulatedEnvironment(config, create_client("k", server.base_url), "world")
        assert env.call("get_prescription", {"rx_id": "RX-100"}) == {"refills_left": 2}
    retry = server.requests[-1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I think the refill is fine."}
    assert "could not be used" in retry[-1]["content"]
    # Only the good observation enters the episode's history.
    assert env.history == [({"name": "get_prescription", "arguments": {"rx_id": "RX-100"}}, {"refills_left": 2})]


def test_answers_that_stay_unparsable_are_an_environment_error(small_data: Path) -> None:
    config = WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    with MockLLMServer(make_scripted_responder(malformed_rate=1.0)) as server:
        env = SimulatedEnvironment(config, create_client("k", server.base_url), "world", max_reasks=2)
        with pytest.raises(WorldError, match="no parsable observation for `get_prescription` in 3 attempts"):
            env.call("get_prescription", {"rx_id": "RX-100"})
    assert server.stats.requests == 3
    assert env.history == []


def test_fault_rules_go_into_the_system_prompt_and_openai_clients_work(small_data: Path,
                                                                        server: MockLLMServer) -> None:
    config = WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    env = SimulatedEnvironment(config, openai.OpenAI(api_key="k", base_url=server.base_url), "world",
                         fault_rules="### Fault simulation\nBreak things.", params={"temperature": 0.0})
    env.simulate("get_prescription", {"rx_id": "RX-100"})
    request = server.requests[-1]
    assert "### Fault simulation\nBreak things." in request["messages"][0]["content"]
    assert request["temperature"] == 0.0


def test_calls_the_schema_rejects_never_reach_the_world_model(small_data: Path, server: MockLLMServer) -> None:
    config = WorldModelRegistry(small_data / "world_model_configs").get("env_fixture_pharmacy")
    env = SimulatedEnvironment(config, create_client("k", server.base_url), "world")
    assert [(t.name, t.writes) for t in env.tools()] == [("get_prescription", None), ("record_refill", None)]
    assert env.get_tool_schemas() == config.tool_schemas() == [t.schema() for t in env.tools()]
    assert env.call("get_prescription", {"rx_id": 100}) == {
        "error": "invalid_arguments", "message": "rx_id: 100 is not of type 'string'"}
    assert env.call("get_prescription", {})["error"] == "invalid_arguments"
    assert env.call("cancel_prescription", {"rx_id": "RX-100"})["error"] == "unknown_tool"
    garbled = json.loads(env.simulate("get_prescription", '{"rx_id": '))
    assert garbled["error"] == "invalid_arguments" and "not valid JSON" in garbled["message"]
    assert "not a JSON object" in json.loads(env.simulate("get_prescription", "[]"))["message"]
    assert server.stats.requests == 0 and env.history == []
