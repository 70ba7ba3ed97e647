"""World-model configurations: what an LLM needs to simulate one environment, and the registry that loads them."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from occubench.core.tools import ToolSpec
from occubench.errors import ConfigError
from occubench.util.jsonl import read_json

_REQUIRED = ("environment_name", "world_model_system_prompt", "action_set_definitions", "state_description",
             "task_initial_state")


@dataclass(frozen=True)
class WorldModelConfig:
    """One environment: the simulator's system prompt, its tools, the initial state and what the state means."""

    name: str
    system_prompt: str
    actions: list[dict[str, Any]]
    state_description: Any
    initial_state: Any

    @classmethod
    def from_dict(cls, data: Any, source: str) -> WorldModelConfig:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: a world-model config must be a JSON object")
        missing = [key for key in _REQUIRED if key not in data]
        if missing:
            raise ConfigError(f"{source}: missing key(s) {', '.join(missing)}")
        actions = data["action_set_definitions"]
        if not isinstance(actions, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str)
                                                    for a in actions):
            raise ConfigError(f"{source}: action_set_definitions must be a list of objects each with a 'name'")
        for action in actions:
            if not isinstance(action.get("parameters", {}), (dict, type(None))):
                raise ConfigError(f"{source}: action {action['name']!r}: parameters must be a JSON schema object, "
                                  f"got {json.dumps(action['parameters'])[:80]}")
            if not isinstance(action.get("description", ""), (str, type(None))):
                raise ConfigError(f"{source}: action {action['name']!r}: description must be a string")
        if not isinstance(data["world_model_system_prompt"], str):
            raise ConfigError(f"{source}: world_model_system_prompt must be a string")
        return cls(name=str(data["environment_name"]), system_prompt=data["world_model_system_prompt"],
                   actions=actions, state_description=data["state_description"],
                   initial_state=data["task_initial_state"])

    @cached_property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The actions as tools (their example outputs stay with the simulator); whether one writes is unknown."""
        return tuple(ToolSpec(action["name"], str(action.get("description") or ""), _parameters(action))
                     for action in self.actions)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The actions as OpenAI function-calling tools."""
        return [spec.schema() for spec in self.specs]


def _parameters(action: dict[str, Any]) -> dict[str, Any]:
    # An action without parameters takes none (their type is checked when the config is loaded).
    return action.get("parameters") or {"type": "object", "properties": {}}


class WorldModelRegistry:
    """The world-model configs in a directory (one ``<environment_name>.json`` each), loaded on first use."""

    def __init__(self, config_dir: str | Path) -> None:
        self.config_dir = Path(config_dir)
        if not self.config_dir.is_dir():
            raise ConfigError(f"world-model config directory not found: {self.config_dir}")
        self._cache: dict[str, WorldModelConfig] = {}
        self._lock = threading.Lock()

    def list_environments(self) -> list[str]:
        return sorted(path.stem for path in self.config_dir.glob("*.json"))

    def get(self, env_name: str) -> WorldModelConfig:
        with self._lock:
            if env_name not in self._cache:
                self._cache[env_name] = self._load(env_name)
            return self._cache[env_name]

    def _load(self, env_name: str) -> WorldModelConfig:
        path = self.config_dir / f"{env_name}.json"
        if Path(env_name).name != env_name or not path.is_file():
            known = self.list_environments()
            hint = f"; for example {', '.join(known[:3])}" if known else ""
            raise ConfigError(f"unknown environment {env_name!r}: no {env_name}.json in {self.config_dir} "
                              f"({len(known)} environments there{hint})")
        data = read_json(path, "world-model config")
        config = WorldModelConfig.from_dict(data, str(path))
        if config.name != env_name:
            raise ConfigError(f"{path}: environment_name is {config.name!r}, expected {env_name!r}")
        return config
