"""``occubench synth executable``: scenario → tasks → SQLite schema → seed rows → tools → per task checks with a
reference and a wrong solution (the Agent World Model pipeline).

Every answer is executed in a sandbox worker (:mod:`occubench.synth.executable.probe`, never in this process; where
the machine has no sandbox, only with ``--trust-world-code``): tables created, rows inserted,
tools called, checks run on the initial database and after the reference, do-nothing and wrong solutions. Its
problems go back to the stage that wrote it, as ``previous_answer`` and ``problems`` in the inputs of the next ask,
up to four correction rounds; what still fails is dropped with its reason. Because each round's inputs are plain
data and the execution is deterministic, every ask is stored by the engine under its inputs: running the same
command again after an interruption sends no request that was already answered. The assembled world must then pass
``occubench validate`` before it is written to ``<out>/<name>/``.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console

from occubench.errors import OccuBenchError
from occubench.executable.validate import MIN_ROWS, MIN_TOOLS
from occubench.sandbox import Limits, Provider, Worker, WorkerFailed, provider_for
from occubench.sandbox.boundary import path_name, probe_problem
from occubench.synth.engine import Stage, StageFailed
from occubench.synth.executable.config import ExecutableSynthConfig
from occubench.synth.executable.parts import TaskPart, ToolPart, WorldParts, function_problems
from occubench.synth.executable.report import Outcome, SynthesisReport
from occubench.synth.executable.stages import CHECKS, SCHEMA, SEED, TASKS, TOOLS
from occubench.synth.session import WORK_DIR, Session, open_session
from occubench.util.console import rich_console
from occubench.util.text import markup

#: Rounds of feedback after the first answer, per stage and item.
CORRECTIONS = 4
#: What one round feeds back at most: the first problems, each cut to a length a model reads.
MAX_PROBLEMS, PROBLEM_CHARS = 12, 600
PROBE = "occubench.synth.executable.probe"
LIMITS = Limits(cpu_seconds=60, memory_bytes=2 << 30)
#: Seconds one execution of a stage's answer may take in all.
PROBE_SECONDS = 120.0
T = TypeVar("T")


class Dropped(OccuBenchError):
    """An item whose stage still had problems after its last round (or never gave a usable answer)."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage, self.reason = stage, reason


def synthesize(config: ExecutableSynthConfig, console: Console | None = None) -> SynthesisReport:
    """Make the worlds ``config`` asks for under ``config.out``, printing progress to ``console``; the report is
    also written to ``<out>/synthesis/report.json``."""
    console = console or rich_console()
    provider = provider_for(config.trust_world_code, "executable synthesis")  # before any request is sent
    with open_session(config, {}, console) as session:
        synthesis = _Synthesis(session, config, provider)
        synthesis.run()
        report = SynthesisReport.of(session, synthesis.outcomes, synthesis.kept, synthesis.dropped,
                                    config.worlds * len(config.scenario))
        report.write(session.work / "report.json")
    return report


@dataclass(frozen=True)
class _Design:
    scenario: str
    answer: dict[str, Any]
    name: str


class _Synthesis:
    def __init__(self, session: Session, config: ExecutableSynthConfig, provider: Provider) -> None:
        self.session, self.config, self.provider = session, config, provider
        #: Per stage, how each item fared (appended by the worker threads: a list's append is atomic).
        self.outcomes: dict[str, list[Outcome]] = {stage.name: [] for stage in (TASKS, SCHEMA, SEED, TOOLS, CHECKS)}
        self.kept: list[dict[str, Any]] = []
        self.dropped: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def run(self) -> None:
        wanted = [(scenario, variant) for scenario in self.config.scenario
                  for variant in range(1, self.config.worlds + 1)]
        with ThreadPoolExecutor(self.config.max_concurrency) as pool:
            answers = list(pool.map(lambda job: self._design(*job), wanted))
            designs, taken = [], {WORK_DIR}
            for (scenario, _), answer in zip(wanted, answers):
                if answer is not None:
                    name, number = answer["name"], 1
                    while name in taken:  # two worlds the same name: the later one gets a number
                        number += 1
                        name = f"{answer['name'][:44]}_{number}"
                    taken.add(name)
                    designs.append(_Design(scenario, answer, name))
            results = list(pool.map(self._build, designs))
        self.kept = [result for result in results if result is not None]

    # -- the stages -------------------------------------------------------------------------------------------

    def _design(self, scenario: str, variant: int) -> dict[str, Any] | None:
        config = self.config
        difficulties = [1 + i % 3 for i in range(config.tasks)]
        inputs: dict[str, Any] = {"scenario": scenario, "tasks": config.tasks, "difficulties": difficulties}
        inputs.update({key: value for key, value in (("category", config.category), ("domain", config.domain),
                                                     ("variant", variant if config.worlds > 1 else None),
                                                     ("variants", config.worlds if config.worlds > 1 else None))
                       if value is not None})
        label = scenario + (f" (variant {variant})" if config.worlds > 1 else "")

        def execute(answer: dict[str, Any]) -> tuple[list[str], None]:
            ids = [task["id"] for task in answer["tasks"]]
            problems = [] if len(set(ids)) == len(ids) else ["task ids must be distinct"]
            if [task["difficulty"] for task in answer["tasks"]] != difficulties:
                problems.append(f"give exactly {len(difficulties)} tasks with the difficulties {difficulties}, in "
                                "that order")
            return problems, None
        try:
            return self._settle(TASKS, inputs, execute, label)[0]
        except Dropped as exc:
            self._drop(label, exc)
            return None

    def _build(self, design: _Design) -> dict[str, Any] | None:
        answer, name = design.answer, design.name
        parts = WorldParts(name=name, scenario=design.scenario, category=self.config.category or answer["category"],
                           domain=self.config.domain or answer["domain"], description=answer["description"])
        base: dict[str, Any] = {"scenario": design.scenario, "description": parts.description,
                                "tasks": answer["tasks"]}  # each exactly id, difficulty, requirement (the schema)
        try:
            self._schema(parts, base)
            base = {**base, "tables": [ddl for _, ddl in parts.tables], "main_tables": parts.main_tables}
            self._seed(parts, base)
            base = {**base, "rows": _rows_by_table(parts)}
            specs = self._tools(parts, base)
        except Dropped as exc:
            self._drop(name, exc)
            return None
        for task in base["tasks"]:
            try:
                parts.tasks.append(self._checks(parts, base, specs, task))
            except Dropped as exc:
                self._drop(f"{name}/{task['id']}", exc)
        return self._finish(parts)

    def _schema(self, parts: WorldParts, base: dict[str, Any]) -> None:
        def execute(answer: dict[str, Any]) -> tuple[list[str], None]:
            names = [table["name"] for table in answer["tables"]]
            problems = [] if len(set(names)) == len(names) else ["table names must be distinct"]
            problems += [f"main table {t} is not one of the tables" for t in answer["main_tables"] if t not in names]
            if problems:
                return problems, None
            return self._probe({"kind": "schema", "tables": [[t["name"], t["ddl"]] for t in answer["tables"]]}), None
        answer, _ = self._settle(SCHEMA, base, execute, parts.name)
        parts.tables = [(table["name"], table["ddl"]) for table in answer["tables"]]
        parts.main_tables = list(dict.fromkeys(answer["main_tables"]))

    def _seed(self, parts: WorldParts, base: dict[str, Any]) -> None:
        def execute(answer: dict[str, Any]) -> tuple[list[str], list[tuple[str, list[str], list[Any]]]]:
            rows: list[tuple[str, list[str], list[Any]]] = []
            failed: list[list[Any]] = []
            for block in answer["tables"]:
                for values in block["rows"]:
                    if len(values) != len(block["columns"]):
                        failed.append([len(rows), f"{len(values)} values for {len(block['columns'])} columns"])
                    rows.append((block["table"], block["columns"], values))
            result = self._probe({"kind": "seed", "tables": parts.tables, "rows": rows, "failed": failed,
                                  "main_tables": parts.main_tables, "min_rows": MIN_ROWS}, result=True)
            left_out = set(result.get("failed", ()))
            return result["problems"], [row for index, row in enumerate(rows) if index not in left_out]
        _, parts.seed = self._settle(SEED, {**base, "min_rows": MIN_ROWS}, execute, parts.name)

    def _tools(self, parts: WorldParts, base: dict[str, Any]) -> list[dict[str, Any]]:
        def execute(answer: dict[str, Any]) -> tuple[list[str], tuple[list[ToolPart], list[dict[str, Any]]]]:
            tools = [ToolPart(t["name"], t["writes"], t["source"]) for t in answer["tools"]]
            names = [tool.name for tool in tools]
            problems = [] if len(set(names)) == len(names) else ["tool names must be distinct"]
            if len(tools) < MIN_TOOLS or all(t.writes for t in tools) or not any(t.writes for t in tools):
                problems.append(f"give at least {MIN_TOOLS} tools, some that read and some that write")
            problems += [f"tool {tool.name}: {problem}" for tool in tools
                         for problem in function_problems(tool.source, tool.name, ("db",), tool=True)]
            if problems:
                return problems, ([], [])
            samples = {t["name"]: t["sample_arguments"] for t in answer["tools"]}
            result = self._probe({"kind": "tools", "samples": samples}, replace(parts, tools=tools), result=True)
            return result["problems"], (tools, result.get("specs", []))
        _, (parts.tools, specs) = self._settle(TOOLS, base, execute, parts.name)
        return specs

    def _checks(self, parts: WorldParts, base: dict[str, Any], specs: list[dict[str, Any]],
                task: dict[str, Any]) -> TaskPart:
        inputs = {key: base[key] for key in ("scenario", "description", "tables", "rows")}
        inputs.update(tools=specs, task=task)

        def execute(answer: dict[str, Any]) -> tuple[list[str], TaskPart]:
            part = TaskPart(id=task["id"], difficulty=task["difficulty"], instruction=answer["instruction"],
                            rubric=answer["rubric"], verify=answer["verify_source"], reference=answer["reference"],
                            answer=answer["answer"], wrong=answer["wrong"], wrong_answer=answer["wrong_answer"])
            problems = function_problems(part.verify, part.function, ("initial", "final", "answer"), tool=False)
            if problems:
                return [f"verify_source: {problem}" for problem in problems], part
            return self._probe({"kind": "task"}, replace(parts, tasks=[part])), part
        return self._settle(CHECKS, inputs, execute, f"{parts.name}/{task['id']}")[1]

    def _finish(self, parts: WorldParts) -> dict[str, Any] | None:
        """``occubench validate`` on the whole world: tasks that fail it are dropped; a world that then breaks the
        suite's size rules is dropped; the rest is written."""
        world_problems = ["no task was kept"]
        while parts.tasks:
            result = self._probe({"kind": "validate"}, parts, result=True)
            failing = {task: problems for task, problems in result.get("tasks", {}).items() if problems}
            for task, problems in failing.items():
                self._drop(f"{parts.name}/{task}", Dropped("validate", "; ".join(problems)))
            parts.tasks = [task for task in parts.tasks if task.id not in failing]
            if not failing:
                world_problems = result["world"]
                break
        if world_problems:
            self._drop(parts.name, Dropped("validate", "; ".join(world_problems)))
            return None
        folder = Path(self.config.out) / path_name(parts.name)
        parts.write(folder)
        self._say(parts.name, f"written to {folder}: {len(parts.tables)} tables, {len(parts.seed)} rows, "
                              f"{len(parts.tools)} tools, {len(parts.tasks)} tasks")
        return {"name": parts.name, "scenario": parts.scenario, "folder": str(folder), "tables": len(parts.tables),
                "rows": len(parts.seed), "tools": len(parts.tools), "tasks": len(parts.tasks)}

    # -- the machinery ----------------------------------------------------------------------------------------

    def _settle(self, stage: Stage, inputs: dict[str, Any], execute: Callable[[dict[str, Any]], tuple[list[str], T]],
                label: str) -> tuple[dict[str, Any], T]:
        """The stage's answer for ``inputs`` once its execution shows no problem, and what the execution gave;
        each round with problems is asked again with them. :class:`Dropped` when the last round still has some."""
        ask = inputs
        for round_ in range(CORRECTIONS + 1):
            try:
                answer = self.session.engine.run(stage, ask)
            except StageFailed as exc:
                self.outcomes[stage.name].append(Outcome(round_, dropped=True))
                raise Dropped(stage.name, "no usable answer: " + "; ".join(exc.problems)) from None
            problems, result = execute(answer)
            problems = [p if len(p) <= PROBLEM_CHARS else f"{p[:PROBLEM_CHARS]}..." for p in problems[:MAX_PROBLEMS]]
            if not problems:
                self.outcomes[stage.name].append(Outcome(round_))
                self._say(label, f"{stage.name}: ok" + (f" after {round_} correction round(s)" if round_ else ""))
                return answer, result
            self._say(label, f"{stage.name}: round {round_ + 1}: {len(problems)} problem(s), first: {problems[0]}")
            # The round makes each ask its own, even when a model repeats an answer word for word.
            ask = {**inputs, "round": round_ + 2, "previous_answer": answer, "problems": problems}
        self.outcomes[stage.name].append(Outcome(CORRECTIONS, dropped=True))
        raise Dropped(stage.name, f"still failing after {CORRECTIONS} correction rounds: {'; '.join(problems)}")

    def _probe(self, job: dict[str, Any], parts: WorldParts | None = None, result: bool = False) -> Any:
        """The problems the sandbox found running ``job`` (on ``parts`` written to a scratch folder), or with
        ``result`` its whole reply."""
        with tempfile.TemporaryDirectory(prefix="occubench-synth-") as scratch:
            if parts is not None:
                parts.write(Path(scratch) / path_name(parts.name))
            worker = Worker(self.provider, PROBE, [Path(scratch)], LIMITS)  # one per execution: nothing carries over
            try:
                if parts is not None:
                    job = {**job, "folder": f"{worker.path(0)}/{parts.name}"}
                reply = worker.request("run", job, PROBE_SECONDS)
                if (refused := probe_problem(job, reply, [task.id for task in parts.tasks] if parts else [])):
                    raise WorkerFailed("protocol", f"the reply is refused: {refused}")
            except WorkerFailed as exc:
                error = f"the code could not be run to the end: {exc.kind}: {exc}"
                reply = {"problems": [error], "world": [error]}
            finally:
                worker.kill()
        # What the executed code printed or raised goes back to the model and onto disk: no key may be in it.
        reply = self.session.engine.redactor.value(reply)
        return reply if result else reply["problems"]

    def _drop(self, item: str, exc: Dropped) -> None:
        with self._lock:
            self.dropped.append({"item": item, "stage": exc.stage, "reason": exc.reason})
        self._say(item, f"[red]dropped[/red] at {exc.stage}: {markup(exc.reason)}", safe=True)

    def _say(self, label: str, text: str, safe: bool = False) -> None:
        """``text`` about ``label`` (a model's names and problems: outside text), unless ``safe``, as plain text."""
        with self._lock:
            self.session.console.print(f"{markup(label)}: {text if safe else markup(text)}")


def _rows_by_table(parts: WorldParts) -> dict[str, list[dict[str, Any]]]:
    """The seed rows kept, as the later stages see them: per table, each row a column → value object."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for table, columns, values in parts.seed:
        tables.setdefault(table, []).append(dict(zip(columns, values)))
    return tables
