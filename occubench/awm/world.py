"""An AWM scenario seen from the harness: a folder its workers read, a pool of workers that serve only it, and an
environment per episode — an instance (a database of its own) in a worker leased for the episode. Every reply is
checked at the boundary before the harness uses it; nothing of the scenario runs here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from occubench.awm.data import Scenario
from occubench.core.environment import Environment, JSONObject
from occubench.core.state import StateDiff
from occubench.core.tools import ToolSpec, clip
from occubench.errors import WorldError
from occubench.sandbox.boundary import SCHEMAS, SHORT, Boundary
from occubench.sandbox.pool import Pool, Worker, WorkerFailed, pool
from occubench.sandbox.provider import Provider
from occubench.util.jsonsafe import dumps

SERVICE = "occubench.awm.service"
#: What every scenario's worker imports before the scenario: the libraries the published applications are written
#: with, and ours that runs them.
PRELOAD = ("fastapi", "sqlalchemy", "sqlalchemy.orm", "sqlalchemy.dialects.sqlite", "pydantic", "pydantic.v1", "httpx",
           "occubench.awm.app:warm_up")
#: Seconds to start and load a scenario (its application's imports), to run a verifier, and per tool call.
LOAD_SECONDS, VERIFY_SECONDS, CALL_SECONDS = 60.0, 30.0, 30.0
#: The longest verifier report kept, in characters of JSON.
REPORT_CHARS = 20_000
#: The boundary's kind of each reply of the AWM service whose shape differs from the executable worlds' reply.
_REPLY_KINDS = {"load": "awm_load", "verify": "awm_verify", "check": "awm_check", "compile": "awm_check"}


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

    def describe(self, worker: Worker) -> list[ToolSpec]:
        """The scenario's tools, as the worker's first load of it says (kept for every later episode)."""
        if self._tools is None:
            reply = self.request(worker, "load", {}, LOAD_SECONDS, "loading the application")
            self.problems = list(reply["problems"])
            self._tools = [ToolSpec(t["name"], t["description"], t["parameters"], t["writes"]) for t in reply["tools"]]
        return self._tools

    def request(self, worker: Worker, op: str, args: dict[str, Any], seconds: float, what: str) -> Any:
        """The worker's reply to ``op``, once the boundary accepted it; a :class:`WorldError` otherwise."""
        try:
            reply = worker.request(op, {"folder": worker.path(0), **args}, seconds)
        except WorkerFailed as exc:
            raise WorldError(f"{self.name}: {what}: {exc.kind}: {exc}") from None
        kind = _REPLY_KINDS.get(op, op)
        return self.boundary.reply(kind, reply, what) if kind in SCHEMAS else None

    def environment(self) -> AwmEnvironment:
        return AwmEnvironment(self)


class AwmEnvironment(Environment):
    """One episode's instance of an AWM scenario."""

    def __init__(self, world: AwmWorld) -> None:
        self.world = world
        try:
            self._worker: Worker | None = world.pool.lease()
        except WorkerFailed as exc:
            raise WorldError(f"{world.name}: the worker did not start: {exc.kind}: {exc}") from None
        try:
            self._specs = world.describe(self._worker)
            self._instance: int = world.request(self._worker, "open", {}, LOAD_SECONDS, "opening an instance")
        except BaseException:
            self.close()
            raise

    def worker(self) -> Worker:
        """The worker this instance lives in."""
        if self._worker is None:
            raise WorldError(f"{self.world.name}: the instance is closed")
        return self._worker

    def tools(self) -> list[ToolSpec]:
        return self._specs

    def _call(self, name: str, arguments: JSONObject) -> Any:
        return self.world.request(self.worker(), "call", {"instance": self._instance, "tool": name,
                                                         "arguments": arguments}, CALL_SECONDS, f"tool {name}")

    def verify(self, task: int, mode: str, answer: str) -> dict[str, Any]:
        """What the task's verifier of ``mode`` says of this instance's final database: a report of at most
        :data:`REPORT_CHARS` characters of JSON (a longer one keeps its ``result`` and a clipped text of the rest,
        as a judge's prompt and the results file can hold it)."""
        report = self.world.request(self.worker(), "verify", {"instance": self._instance, "task": task, "mode": mode,
                                                             "answer": answer}, VERIFY_SECONDS,
                                    f"the {mode} verifier of task {task}")
        text = dumps(report)
        if len(text) <= REPORT_CHARS:
            return dict(report)
        return {"result": clip(str(report.get("result")), SHORT), "report": clip(text, REPORT_CHARS)}

    def state_diff(self) -> StateDiff:
        """What this instance's calls changed in its database."""
        return self.world.request(self.worker(), "diff", {"instance": self._instance}, VERIFY_SECONDS,
                                  "the state diff")

    def close(self) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            if hasattr(self, "_instance"):
                worker.request("close", {"folder": worker.path(0), "instance": self._instance}, LOAD_SECONDS)
        except WorkerFailed:
            pass  # a broken worker is not lent again
        finally:
            self.world.pool.release(worker)
