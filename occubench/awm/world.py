"""An AWM scenario seen from the harness: a folder its workers read, a pool of workers that serve only it, and an
environment per episode — an instance (a database of its own) in a worker leased for the episode. Every reply is
checked at the boundary before the harness uses it; nothing of the scenario runs here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from occubench.awm.data import Scenario
from occubench.awm.service import clipped_report
from occubench.core.environment import Environment, JSONObject
from occubench.core.state import StateDiff
from occubench.core.tools import ToolSpec
from occubench.sandbox.boundary import Boundary
from occubench.sandbox.lease import Lease
from occubench.sandbox.pool import Pool, pool
from occubench.sandbox.provider import Provider

SERVICE = "occubench.awm.service"
#: What every scenario's worker imports before the scenario: the libraries the published applications are written
#: with, and ours that runs them.
PRELOAD = ("fastapi", "sqlalchemy", "sqlalchemy.orm", "sqlalchemy.dialects.sqlite", "pydantic", "pydantic.v1", "httpx",
           "occubench.awm.app:warm_up")
#: Seconds to start and load a scenario (its application's imports), to run a verifier, and per tool call.
LOAD_SECONDS, VERIFY_SECONDS, CALL_SECONDS = 60.0, 30.0, 30.0
#: The boundary's kind of each reply of the AWM service whose shape differs from the executable worlds' reply.
_REPLY_KINDS = {"load": "awm_load", "verify": "awm_verify", "check": "awm_check", "compile": "awm_check",
                "state": "awm_state"}


class AwmWorld:
    """``scenario``, written as ``folder``, run by workers of ``provider``."""

    def __init__(self, scenario: Scenario, folder: Path, provider: Provider) -> None:
        self.scenario, self.folder = scenario, folder
        self.name = scenario.name
        self.pool: Pool = pool(provider, SERVICE, [folder])
        self.boundary = Boundary(folder)
        self._tools: list[ToolSpec] | None = None
        #: What building the database left out (seed rows that broke a constraint, say), once loaded.
        self.problems: list[str] = []

    def describe(self, lease: Lease) -> list[ToolSpec]:
        """The scenario's tools, as the worker's first load of it says (kept for every later episode)."""
        if self._tools is None:
            reply = lease.request("load", {"folder": lease.worker.path(0)}, LOAD_SECONDS, "loading the application")
            self.problems = list(reply["problems"])
            self._tools = [ToolSpec(t["name"], t["description"], t["parameters"], t["writes"]) for t in reply["tools"]]
        return self._tools

    def environment(self) -> AwmEnvironment:
        return AwmEnvironment(self)


class AwmEnvironment(Environment):
    """One episode's instance of an AWM scenario."""

    def __init__(self, world: AwmWorld) -> None:
        self.world = world
        self.lease = Lease(world.name, world.pool, world.boundary, _REPLY_KINDS)
        try:
            self._specs = world.describe(self.lease)
            self._instance: int = self.request("open", {}, LOAD_SECONDS, "opening an instance")
        except BaseException:
            self.lease.close(None)
            raise

    def request(self, op: str, args: dict[str, Any], seconds: float, what: str) -> Any:
        """The worker's reply to ``op`` about this instance's scenario, once the boundary accepted it."""
        return self.lease.request(op, {"folder": self.lease.worker.path(0), **args}, seconds, what)

    def tools(self) -> list[ToolSpec]:
        return self._specs

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return self.request("call", {"instance": self._instance, "tool": name, "arguments": arguments},
                            CALL_SECONDS, f"tool {name}")

    def verify(self, task: int, mode: str, answer: str) -> dict[str, Any]:
        """What the task's verifier of ``mode`` says of this instance's final database, clipped as
        :func:`~occubench.awm.service.clipped_report` clips it (in the worker, so that a verifier's huge report
        crosses the protocol clipped; again here, since a worker's reply is not trusted)."""
        return clipped_report(self.request("verify", {"instance": self._instance, "task": task, "mode": mode,
                                                      "answer": answer},
                                           VERIFY_SECONDS, f"the {mode} verifier of task {task}"))

    def state_diff(self) -> StateDiff:
        """What this instance's calls changed in its database."""
        return self.request("diff", {"instance": self._instance}, VERIFY_SECONDS, "the state diff")

    def close(self) -> None:
        self.lease.close({"instance": self._instance})
