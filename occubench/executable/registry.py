"""The built-in executable worlds: every folder under ``worlds/``."""

from __future__ import annotations

import importlib
from pathlib import Path

from occubench.errors import ConfigError
from occubench.executable.world import World

BUILTIN_SUITE = "executable"
_WORLDS = Path(__file__).parent / "worlds"


def world_names() -> list[str]:
    return sorted(p.name for p in _WORLDS.iterdir() if (p / "__init__.py").is_file())


def load_world(name: str) -> World:
    if name not in world_names():
        raise ConfigError(f"unknown environment {name!r}; built-in ones: {', '.join(world_names())}")
    return importlib.import_module(f"occubench.executable.worlds.{name}").world


def builtin_worlds() -> list[World]:
    return [load_world(name) for name in world_names()]
