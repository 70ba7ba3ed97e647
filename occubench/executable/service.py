"""What a sandbox worker does for executable worlds (``occubench.sandbox.worker occubench.executable.service``).

The worker loads world folders (the allow-list first, then the module, then its SQL), keeps each world's instances,
and runs their tool calls and checks under the same tool contract as in the harness (:class:`ExecutableEnvironment`).
Every request and reply is plain JSON; :mod:`occubench.executable.isolated` is the harness's side.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from occubench.core.tools import clip
from occubench.errors import ConfigError
from occubench.executable.environment import ExecutableEnvironment
from occubench.executable.isolated import describe
from occubench.executable.registry import load_world_folder
from occubench.executable.world import World
from occubench.sandbox.boundary import LONG, SHORT


class WorldService:
    """The worlds a worker has loaded with ``loader`` and their open instances."""

    def __init__(self, loader: Callable[[Path], World]) -> None:
        self.loader = loader
        self.worlds: dict[str, World] = {}
        self.instances: dict[int, ExecutableEnvironment] = {}
        self.numbers = itertools.count(1)

    def world(self, folder: str) -> World:
        if folder not in self.worlds:
            self.worlds[folder] = self.loader(Path(folder))
        return self.worlds[folder]

    def instance(self, args: dict[str, Any]) -> ExecutableEnvironment:
        instance = self.instances.get(args["instance"])
        if instance is None:
            raise ConfigError(f"no instance {args['instance']!r}")
        return instance

    def open(self, args: dict[str, Any]) -> int:
        number = next(self.numbers)
        self.instances[number] = ExecutableEnvironment(self.world(str(args["folder"])), time_limit=args["time_limit"])
        return number

    def verify(self, args: dict[str, Any]) -> dict[str, Any]:
        verification = self.instance(args).verify(str(args["task"]), str(args["answer"]))
        # A world's checks hold what its code put in them: made the protocol's types and sizes here (half its caps:
        # clip's marker adds a little), so that the harness's boundary refuses only what no honest worker sends.
        return {"checks": [{"name": clip(str(check.name), SHORT // 2), "passed": bool(check.passed),
                            "message": clip(str(check.message), LONG // 2)} for check in verification.checks],
                "diff": verification.diff}

    def close(self, args: dict[str, Any]) -> None:
        instance = self.instances.pop(args["instance"], None)
        if instance is not None:
            instance.close()

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return {
            "load": lambda args: describe(self.world(str(args["folder"]))),
            "open": self.open, "verify": self.verify, "close": self.close,
            "call": lambda args: self.instance(args).call(str(args["tool"]), args["arguments"]),
            "reset": lambda args: self.instance(args).reset(),
            "diff": lambda args: self.instance(args).state_diff(),
            "sizes": lambda args: self.instance(args).table_sizes(),
        }


HANDLERS = WorldService(load_world_folder).handlers()
