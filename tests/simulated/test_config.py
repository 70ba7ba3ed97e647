from __future__ import annotations

import json
from pathlib import Path

import pytest

from occubench.errors import ConfigError
from occubench.simulated import WorldModelRegistry


def test_lists_and_loads(small_data: Path) -> None:
    registry = WorldModelRegistry(small_data / "world_model_configs")
    assert registry.list_environments() == ["env_fixture_pharmacy", "env_fixture_warehouse"]
    config = registry.get("env_fixture_warehouse")
    assert [t["function"]["name"] for t in config.tool_schemas()] == ["count_bin", "get_system_quantity",
                                                                      "post_adjustment"]
    assert registry.get("env_fixture_warehouse") is config


def test_actions_become_tool_specs_whose_broken_schemas_are_not_enforced(small_data: Path) -> None:
    path = small_data / "world_model_configs" / "env_fixture_warehouse.json"
    data = json.loads(path.read_text())
    data["action_set_definitions"][0]["parameters"] = {"type": "text", "properties": {"bin_id": {"type": 5}}}
    data["action_set_definitions"][1].pop("parameters")
    path.write_text(json.dumps(data))
    config = WorldModelRegistry(path.parent).get("env_fixture_warehouse")
    broken, bare, fine = config.specs
    assert config.specs is config.specs and all(spec.writes is None for spec in config.specs)
    assert bare.parameters == {"type": "object", "properties": {}}
    # The published schema is passed on as is, but not enforced: every call would fail otherwise.
    assert config.tool_schemas()[0]["function"]["parameters"] == data["action_set_definitions"][0]["parameters"]
    assert broken.check({"bin_id": 1.5}) is None and broken.check([]) is not None
    assert fine.check({"sku": "S-55", "delta": 1.0}) == "delta: 1.0 is not of type 'integer'"


def test_unknown_environment_is_named(small_data: Path) -> None:
    registry = WorldModelRegistry(small_data / "world_model_configs")
    with pytest.raises(ConfigError, match="unknown environment 'env_nope'.*2 environments there"):
        registry.get("env_nope")
    with pytest.raises(ConfigError, match="unknown environment"):
        registry.get("../data/secrets")


def test_garbled_config_names_file_and_line(small_data: Path) -> None:
    path = small_data / "world_model_configs" / "env_fixture_pharmacy.json"
    path.write_text('{\n  "environment_name": "env_fixture_pharmacy",\n  oops\n}')
    with pytest.raises(ConfigError, match=r"env_fixture_pharmacy\.json:3:3: invalid JSON"):
        WorldModelRegistry(path.parent).get("env_fixture_pharmacy")


def test_config_missing_keys_is_named(small_data: Path) -> None:
    path = small_data / "world_model_configs" / "env_fixture_pharmacy.json"
    path.write_text(json.dumps({"environment_name": "env_fixture_pharmacy"}))
    with pytest.raises(ConfigError, match="missing key.*world_model_system_prompt"):
        WorldModelRegistry(path.parent).get("env_fixture_pharmacy")


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config directory not found"):
        WorldModelRegistry(tmp_path / "none")
