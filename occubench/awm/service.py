"""What a sandbox worker does for one AWM scenario (``occubench.sandbox.worker occubench.awm.service``): load it
from its folder (written by :func:`occubench.awm.folders.write_scenario`), then open instances — each a copy of the
seeded template database — and run their tool calls. Plain JSON in and out, as every service's."""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from occubench.awm.app import Application, build_database, run_verifier
from occubench.core.state import StateDiff, snapshot, state_diff, table_keys
from occubench.core.tools import clip
from occubench.errors import ConfigError
from occubench.sandbox.boundary import LONG, MAX_PROBLEMS, SHORT
from occubench.util.jsonsafe import dumps

#: The longest verifier report kept, in characters of JSON.
REPORT_CHARS = 20_000


class ScenarioService:
    def __init__(self) -> None:
        self.application: Application | None = None
        self.verifiers: dict[str, dict[str, str]] = {}
        self.described: dict[str, Any] | None = None
        self.workdir = Path(tempfile.mkdtemp(prefix="awm-"))  # the worker's private /tmp
        self.instances: dict[int, tuple[Any, Path]] = {}
        self.numbers = itertools.count(1)

    def load(self, args: dict[str, Any]) -> dict[str, Any]:
        """The scenario of the folder ``args["folder"]``, loaded once: its tools and the problems of building its
        database."""
        if self.described is not None:
            return self.described
        folder = Path(str(args["folder"]))
        schema = json.loads((folder / "schema.json").read_text())
        seed_file = folder / "seed.json"
        seed = json.loads(seed_file.read_text()) if seed_file.is_file() else None
        template = self.workdir / "template.db"
        problems = build_database(template, schema, seed)
        self.verifiers = json.loads((folder / "verifiers.json").read_text())
        shutil.copyfile(template, self.workdir / "initial.db")  # before the application's import can touch it
        self.application = Application((folder / "app.py").read_text(), str(folder / "app.py"), template)
        self.described = {"tools": [{"name": name, "description": clip(operation["description"], LONG // 2),
                                     "parameters": operation["parameters"], "writes": operation["method"] != "GET"}
                                    for name, operation in self.application.operations.items()],
                          "problems": [clip(problem, LONG // 2) for problem in problems][:MAX_PROBLEMS]}
        return self.described

    def open(self, args: dict[str, Any]) -> int:
        from sqlalchemy import create_engine

        self.load(args)
        number = next(self.numbers)
        path = self.workdir / f"instance-{number}.db"
        shutil.copyfile(self.workdir / "template.db", path)
        # FastAPI runs a synchronous endpoint in a thread of its pool: a connection may serve more than one thread.
        engine = create_engine(f"sqlite:///{path}", connect_args={"check_same_thread": False})
        engine.connect().close()  # the instance's connection, opened now: its first call costs what every call does
        self.instances[number] = (engine, path)
        return number

    def call(self, args: dict[str, Any]) -> dict[str, Any]:
        engine, _ = self._instance(args)
        application = self._application()
        application.use(engine)
        return application.call(str(args["tool"]), dict(args["arguments"]))

    def verify(self, args: dict[str, Any]) -> dict[str, Any]:
        """The task's verifier of ``mode`` on the instance's final database; refused when there is none."""
        _, final = self._instance(args)
        code = self.verifiers.get(str(args["mode"]), {}).get(str(args["task"]))
        if not isinstance(code, str):
            raise ConfigError(f"task {args['task']} has no {args['mode']} verifier")
        return clipped_report(run_verifier(code, str(args["mode"]), self.workdir / "initial.db", final,
                                           str(args["answer"])))

    def diff(self, args: dict[str, Any]) -> StateDiff:
        """What the instance's calls changed in its database since it was opened."""
        _, final = self._instance(args)
        with closing(sqlite3.connect(self.workdir / "initial.db")) as before, closing(sqlite3.connect(final)) as after:
            return state_diff(table_keys(before), before, after)

    def state(self, args: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The scenario's seeded database, as an instance starts from it, as data (a twin is derived from it)."""
        self.load(args)
        with closing(sqlite3.connect(self.workdir / "initial.db")) as initial:
            return snapshot(initial)

    def compile(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Whether each verifier given (``{mode: {task: code}}``) compiles: for a scenario with nothing to run them
        on."""
        found = []
        for mode, codes in sorted(dict(args["verifiers"]).items()):
            for task, code in sorted(dict(codes).items(), key=lambda item: int(item[0])):
                try:
                    compile(str(code), f"<{mode} verifier>", "exec")
                    problem = ""
                except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
                    problem = clip(f"does not compile: {exc}", SHORT // 2)
                found.append({"mode": str(mode), "task": int(task), "problem": problem})
        return found

    def check(self, args: dict[str, Any]) -> list[dict[str, Any]]:
        """Each verifier of the scenario run on the initial database as both states: whether it compiles and
        returns (what it returns does not matter here), and if not, why."""
        self.load(args)
        initial = self.workdir / "initial.db"
        found = []
        for mode, codes in sorted(self.verifiers.items()):
            for task, code in sorted(codes.items(), key=lambda item: int(item[0])):
                try:
                    run_verifier(code, mode, initial, initial, "")
                    problem = ""
                except BaseException as exc:  # noqa: BLE001 - whatever the data's code raises is its defect
                    problem = clip(f"{type(exc).__name__}: {exc}", SHORT // 2)
                found.append({"mode": mode, "task": int(task), "problem": problem})
        return found

    def close(self, args: dict[str, Any]) -> None:
        found = self.instances.pop(args["instance"], None)
        if found is not None:
            found[0].dispose()
            found[1].unlink(missing_ok=True)

    def _instance(self, args: dict[str, Any]) -> tuple[Any, Path]:
        found = self.instances.get(args["instance"])
        if found is None:
            raise ConfigError(f"no instance {args['instance']!r}")
        return found

    def _application(self) -> Application:
        if self.application is None:
            raise ConfigError("no scenario loaded")
        return self.application

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return {"load": self.load, "open": self.open, "call": self.call, "verify": self.verify, "diff": self.diff,
                "state": self.state, "check": self.check, "compile": self.compile, "close": self.close}


HANDLERS = ScenarioService().handlers()


def clipped_report(report: Any) -> dict[str, Any]:
    """A verifier's report as kept: at most :data:`REPORT_CHARS` characters of JSON (a longer one keeps its
    ``result`` and a clipped text of the rest, as a judge's prompt and the results file can hold it)."""
    text = dumps(report)
    if isinstance(report, dict) and len(text) <= REPORT_CHARS:
        return report
    result = report.get("result") if isinstance(report, dict) else None
    return {"result": clip(str(result), SHORT), "report": clip(text, REPORT_CHARS)}
