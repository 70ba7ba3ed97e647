"""What the synthesis executes, always in a sandbox worker (the service `occubench.synth.executable.probe`):
each stage's output built into a scratch database or world folder and exercised. What goes wrong comes back as
problems for the stage's model to fix, worded the same on every run (no paths, no addresses), so that a resumed
synthesis asks the same questions and finds its stored answers."""

from __future__ import annotations

import re
import sqlite3
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from occubench.core.agent import NOOP_ANSWER
from occubench.core.tools import TimeLimitExceeded, call_with_time_limit, describe
from occubench.errors import ConfigError
from occubench.executable.environment import ExecutableEnvironment
from occubench.executable.registry import load_world_folder
from occubench.executable.suite import exec_task
from occubench.executable.validate import MIN_CALLS, validate
from occubench.executable.world import Call, Check, ExecTask, World, new_database
from occubench.synth.executable.parts import insert_sql

#: Seconds a tool call or a verification may run in the sandbox (an endless loop is a timeout, not a hang).
SECONDS = 2.0
#: Seed rows that may fail before the seed is asked for again.
FAILING_ROWS = 0.10
_CREATE_TABLE = re.compile(r"\s*CREATE\s+TABLE\s", re.IGNORECASE)


def run(job: dict[str, Any]) -> dict[str, Any]:
    kinds: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "schema": schema, "seed": seed, "tools": tools, "task": task, "validate": validate_world}
    return kinds[job["kind"]](job)


HANDLERS = {"run": run}


def schema(job: dict[str, Any]) -> dict[str, Any]:
    """Each table's statement, run in a scratch database: it must create exactly that table."""
    db = new_database()
    problems = []
    for name, ddl in job["tables"]:
        if not _CREATE_TABLE.match(ddl):
            problems.append(f"table {name}: the ddl must be one CREATE TABLE statement")
            continue
        before = _tables(db)
        try:
            db.execute(ddl)
        except (sqlite3.Error, ValueError) as exc:
            problems.append(f"table {name}: {describe(exc)}")
            continue
        made = _tables(db) - before
        if made != {name}:
            problems.append(f"table {name}: the statement creates {', '.join(sorted(made)) or 'no table'}")
    return {"problems": problems}


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                         "'sqlite_%'")}


def seed(job: dict[str, Any]) -> dict[str, Any]:
    """Each row inserted on its own, then foreign keys checked; more than 10 % failing is a problem, and so is a main
    table left with too few rows. Returns the failing rows (by index), which the world leaves out."""
    db = new_database()
    for _, ddl in job["tables"]:
        db.execute(ddl)
    failed: dict[int, str] = dict(job["failed"])  # rows already refused (say, too few values)
    inserted: dict[tuple[str, int | None], int] = {}  # (table, rowid) -> row
    for index, (table, columns, values) in enumerate(job["rows"]):
        if index in failed:
            continue
        try:
            inserted[table.lower(), db.execute(insert_sql(table, columns, values)).lastrowid] = index
        except (sqlite3.Error, ValueError, OverflowError) as exc:
            failed[index] = describe(exc)
    for table, rowid, parent, _ in db.execute("PRAGMA foreign_key_check"):
        if (row := inserted.get((table.lower(), rowid))) is not None:
            failed.setdefault(row, f"FOREIGN KEY: refers to a row of {parent} that does not exist")
    problems = []
    total = len(job["rows"])
    if len(failed) > FAILING_ROWS * total:
        examples = [f"row {index + 1} ({job['rows'][index][0]}): {failed[index]}" for index in sorted(failed)[:8]]
        problems.append(f"{len(failed)} of {total} rows fail to insert (at most 10 % may): {'; '.join(examples)}")
    for table in job["main_tables"]:
        count = sum(1 for index, row in enumerate(job["rows"]) if row[0] == table and index not in failed)
        if count < job["min_rows"]:
            problems.append(f"main table {table} gets {count} rows that insert; it needs at least {job['min_rows']}")
    return {"problems": problems, "failed": sorted(failed)}


def tools(job: dict[str, Any]) -> dict[str, Any]:
    """The world module loaded (allow-list first), and each tool called once with its sample arguments on a fresh
    database: it must succeed, and change nothing if it is marked as a read. Returns the tools' specs."""
    world, problems = _load(job["folder"])
    if world is None:
        return {"problems": problems}
    for name, tool in world.tools.items():
        arguments = job["samples"].get(name, {})
        env = ExecutableEnvironment(world, time_limit=SECONDS)
        try:
            observation = _observe(env, name, arguments)
            if "error" in observation:
                problems.append(f"tool {name} with its sample_arguments {_short(arguments)}: "
                                f"{observation['error']}: {observation['message']}")
            elif not tool.writes and env.state_diff():
                problems.append(f"tool {name} is marked as a read (writes: false) but changed the database")
        finally:
            env.close()
    specs = [{"name": t.name, "description": t.spec.description, "parameters": t.spec.parameters,
              "writes": t.writes} for t in world.tools.values()]
    return {"problems": [_clean(p, job["folder"]) for p in problems], "specs": specs}


def task(job: dict[str, Any]) -> dict[str, Any]:
    """The world's one task, its checks run on the untouched initial database (with the reference answer), after the
    reference solution, after doing nothing and after the wrong solution."""
    world, problems = _load(job["folder"])
    if world is None:
        return {"problems": problems}
    spec = world.tasks[0]
    if len(spec.reference) < MIN_CALLS:
        problems.append(f"the reference solution makes {len(spec.reference)} calls; it needs at least {MIN_CALLS}")
    if not any(world.tools[c.tool].writes for c in spec.reference if c.tool in world.tools):
        problems.append("the reference solution calls no tool that writes: the task must change the database")
    initial = world.instance()
    reference, errors = _play(world, spec.reference)
    problems += [f"reference call {n} {call}: {error}" for n, call, error in errors]
    wrong, _ = _play(world, spec.wrong)
    runs = {"on the untouched initial database (with the reference answer)": (world.instance(), spec.answer),
            "after the reference solution": (reference, spec.answer),
            "after doing nothing": (world.instance(), NOOP_ANSWER),
            "after the wrong solution": (wrong, spec.wrong_answer)}
    for when, (final, answer) in runs.items():
        checks = _verify(spec, initial, final, answer, job["folder"])
        if isinstance(checks, str):
            problems.append(f"the checks fail to run {when}: {checks}")
        elif when == "after the reference solution" and not all(c.passed for c in checks):
            problems.append(f"{when}, checks fail: " + "; ".join(_check(c) for c in checks if not c.passed))
        elif when != "after the reference solution" and all(c.passed for c in checks):
            problems.append(f"{when}, every check passes: " + _why_not(when))
    return {"problems": [_clean(p, job["folder"]) for p in problems]}


def _why_not(when: str) -> str:
    if "initial" in when:
        return ("the checks must test the change the task makes, and the seed data must not already hold it (the "
                "initial state must fail them)")
    if "nothing" in when:
        return "the checks must require the change the task asks for"
    return "make the wrong solution a plausible mistake that the checks catch, or make the checks catch it"


def validate_world(job: dict[str, Any]) -> dict[str, Any]:
    """``occubench validate`` on the assembled world: its size rules, and per task reference, do-nothing, wrong."""
    world, problems = _load(job["folder"])
    if world is None:
        return {"world": problems, "tasks": {}}
    world_problems, results = validate([world])
    tasks = {}
    for result in results:
        failures = ([] if result.reference else ["the reference solution fails"]) + (
            ["doing nothing passes"] if result.noop else []) + (["the wrong solution passes"] if result.wrong else [])
        tasks[exec_task(result.task).id] = [_clean(p, job["folder"]) for p in failures + result.problems]
    return {"world": world_problems[world.name], "tasks": tasks}


def _load(folder: str) -> tuple[World | None, list[str]]:
    try:
        return load_world_folder(Path(folder)), []
    except ConfigError as exc:
        return None, [_clean(f"the world module does not load: {exc}", folder)]


def _play(world: World, calls: Sequence[Call]) -> tuple[sqlite3.Connection, list[tuple[int, str, str]]]:
    env = ExecutableEnvironment(world, time_limit=SECONDS)
    errors = []
    for number, call in enumerate(calls, start=1):
        observation = _observe(env, call.tool, dict(call.arguments))
        if "error" in observation:
            errors.append((number, f"{call.tool}({_short(call.arguments)})",
                           f"{observation['error']}: {observation['message']}"))
    return env.db, errors


def _observe(env: ExecutableEnvironment, name: str, arguments: Any) -> dict[str, Any]:
    """The call's observation; a call past the worker's memory limit is one too, for the model to fix."""
    try:
        return env.call(name, arguments)
    except MemoryError:
        return {"error": "memory", "message": f"{name}: the call ran out of memory"}


def _verify(spec: ExecTask, initial: sqlite3.Connection, final: sqlite3.Connection, answer: str,
            folder: str) -> list[Check] | str:
    """The checks, or why they did not run (the exception and the line of the world's code that raised it)."""
    try:
        checks = call_with_time_limit(lambda: spec.verify(initial, final, answer), SECONDS)
    except TimeLimitExceeded:
        return f"they did not finish within {SECONDS:g} s"
    except Exception as exc:  # noqa: BLE001 - the generated checks' own failure is what the model must fix
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).parent == Path(folder)]
        return f"{type(exc).__name__}: {describe(exc)}" + (f" (at `{frames[-1].line}`)" if frames else "")
    if not isinstance(checks, list) or not checks or not all(isinstance(c, Check) for c in checks):
        return "verify must return a non-empty list of Check(name, passed, message)"
    return checks


def _check(check: Check) -> str:
    return f"{check.name!r}" + (f" ({check.message})" if check.message else "")


def _short(arguments: Any) -> str:
    text = repr(arguments)
    return text if len(text) <= 200 else f"{text[:200]}..."


def _clean(problem: str, folder: str) -> str:
    # The same words on every run: no scratch folder, no memory address.
    return re.sub(r"0x[0-9a-fA-F]{6,}", "0x…", problem.replace(f"{folder}/", "").replace(folder, "<world>"))
