"""A world as the synthesis holds it: the parts the model wrote — each table's statement, each seed row, each tool and
each task's checks as a function of its own — checked one by one, then assembled into the folder every built-in
world has (``schema.sql``, ``seed.sql``, ``__init__.py``). Nothing the model wrote is edited: a part that is wrong
goes back to the model with what is wrong."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occubench.sandbox.allowlist import check_source
from occubench.util.jsonsafe import clean_text, json_safe

#: The names every assembled module imports from :mod:`occubench.executable.world`.
_WORLD_NAMES = ("Call", "Check", "ExecTask", "ToolError", "World", "found", "mentions_number", "next_id", "one",
                "only_changed", "rows", "scalar")
#: The header of every assembled ``__init__.py``: what the parts may use besides their own names (the world's names
#: one a line, as the built-in worlds import them).
HEADER = '''
from __future__ import annotations

import datetime
import json
import math
import re
import sqlite3
from pathlib import Path
from typing import Any, Literal

from occubench.executable.world import (
''' + "".join(f"    {name},\n" for name in _WORLD_NAMES) + ")\n"
#: Names of the header that a part may neither use (they build the world, not work in it) nor define.
RESERVED = frozenset({"world", "World", "Path", "ExecTask", "Call"})
#: Names a part may not define: the reserved ones and every name the header imports.
_TAKEN = RESERVED | {alias.asname or alias.name for node in ast.parse(HEADER).body
                     if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{2,47}")
_WORD = re.compile(r"\w+")
_PARENTHESIS = re.compile(r"\s*\(")


@dataclass(frozen=True)
class ToolPart:
    name: str
    writes: bool
    source: str

    def code(self) -> str:
        """The tool in the world module: its function, registered with the world."""
        return f"\n\n@world.tool{'(writes=True)' if self.writes else ''}\n{self.source.strip()}\n"


@dataclass(frozen=True)
class TaskPart:
    id: str
    difficulty: int
    instruction: str
    rubric: str
    verify: str
    reference: list[dict[str, Any]]
    answer: str
    wrong: list[dict[str, Any]]
    wrong_answer: str

    @property
    def function(self) -> str:
        return f"verify_{self.id}"

    def code(self) -> str:
        """The task in the world module: its checks' function, then the task registered with the world."""
        return (f"\n\n{self.verify.strip()}\n\n\nworld.task(ExecTask(\n"
                f"    id={_literal(self.id)}, difficulty={self.difficulty},\n"
                f"    instruction={_literal(self.instruction)},\n    verify={self.function},\n"
                f"    reference={_calls(self.reference)},\n    answer={_literal(self.answer)},\n"
                f"    wrong={_calls(self.wrong)},\n    wrong_answer={_literal(self.wrong_answer)},\n"
                f"    rubric={_literal(self.rubric)},\n))\n")


@dataclass
class WorldParts:
    name: str
    scenario: str
    category: str
    domain: str
    description: str
    #: (table, its CREATE TABLE statement), in order.
    tables: list[tuple[str, str]] = field(default_factory=list)
    main_tables: list[str] = field(default_factory=list)
    #: (table, columns, values) of every seed row kept.
    seed: list[tuple[str, list[str], list[Any]]] = field(default_factory=list)
    tools: list[ToolPart] = field(default_factory=list)
    tasks: list[TaskPart] = field(default_factory=list)

    def files(self) -> dict[str, str]:
        """The world folder's files."""
        return {"schema.sql": "".join(f"{ddl.strip().rstrip(';')};\n" for _, ddl in self.tables),
                "seed.sql": "".join(f"{insert_sql(*row)};\n" for row in self.seed),
                "__init__.py": self.module()}

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files().items():
            (folder / name).write_text(text, encoding="utf-8")

    def module(self) -> str:
        text = _literal(f"{self.description} (Made by `occubench synth executable` from the scenario "
                        f"{self.scenario!r}.)") + "\n" + HEADER
        text += (f"\nworld = World(\n    name={_literal(self.name)}, scenario={_literal(self.scenario)},\n"
                 f"    category={_literal(self.category)}, domain={_literal(self.domain)},\n"
                 f"    directory=Path(__file__).parent, main_tables={_literal(tuple(self.main_tables))},\n"
                 f"    description={_literal(self.description)},\n)\n")
        return text + "".join(tool.code() for tool in self.tools) + "".join(task.code() for task in self.tasks)


def _literal(value: Any) -> str:
    # repr of JSON data (strings, numbers, booleans, None, lists, dicts) is a Python literal of the same value.
    return repr(json_safe(value))


def _calls(calls: Sequence[dict[str, Any]]) -> str:
    if not calls:
        return "[]"
    lines = "".join(f"        Call({_literal(call['tool'])}, {_literal(call['arguments'])}),\n" for call in calls)
    return f"[\n{lines}    ]"


def sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + clean_text(str(value)).replace("'", "''") + "'"


def insert_sql(table: str, columns: Sequence[str], values: Sequence[Any]) -> str:
    names = ", ".join(map(_identifier, columns))
    return f"INSERT INTO {_identifier(table)} ({names}) VALUES ({', '.join(map(sql_literal, values))})"


def _identifier(name: str) -> str:
    return '"' + clean_text(name).replace('"', '""') + '"'


def function_problems(source: str, name: str, parameters: Sequence[str], *, tool: bool) -> list[str]:
    """Why ``source`` is not one plain function ``name`` whose parameters begin with ``parameters`` (and, for a
    tool, typed and described), safe to import; empty when it is."""
    problems = [str(problem) for problem in check_source(source, RESERVED)]
    if problems:
        return problems
    body = ast.parse(source).body
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef):
        return ["the source must be exactly one function definition (def ...), with nothing before or after it"]
    function = body[0]
    arguments = function.args
    names = [argument.arg for argument in arguments.args]
    if function.name != name:
        problems.append(f"the function must be named {name}, not {function.name}")
    if function.decorator_list:
        problems.append("no decorators: the world registers the function itself")
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs or arguments.kwonlyargs:
        problems.append("only plain parameters: no *args, **kwargs, keyword-only or positional-only ones")
    if names[:len(parameters)] != list(parameters) or not tool and len(names) != len(parameters):
        problems.append(f"the parameters must be ({', '.join(parameters)}{', ...' if tool else ''}), not "
                        f"({', '.join(names)})")
    if tool:
        untyped = [argument.arg for argument in arguments.args[1:] if argument.annotation is None]
        if untyped or function.returns is None:
            problems.append(f"type every parameter and the return value (untyped: {', '.join(untyped) or 'return'})")
        doc = ast.get_docstring(function) or ""
        described = _described(doc.partition("Args:")[2])
        if not doc.strip():
            problems.append("give the function a docstring: what the tool does, then Args: with each parameter")
        elif set(names[1:]) - described:
            problems.append(f"describe every parameter under Args: in the docstring (missing: "
                            f"{', '.join(sorted(set(names[1:]) - described))})")
    if function.name in _TAKEN or tool and function.name.startswith("verify_"):
        problems.append(f"{function.name} is a name the world module already uses: choose another")
    return problems


def _described(args: str) -> set[str]:
    """The parameters described in ``args``, the docstring after ``Args:``: each a word first on its line after some
    space (or first after a blank line, or on the ``Args:`` line), then perhaps a type in parentheses, then a colon.

    What ``re.findall(r"^\\s+(\\w+)(?:\\s*\\([^)]*\\))?:", args, re.MULTILINE)`` finds, in one pass: that took time
    quadratic in a run of blank lines, or of lines with an unclosed parenthesis, as the model may write."""
    found: set[str] = set()
    start = end = 0  # where the line starts; where the last description's colon ends
    closing = -1  # the first ")" after the last "(" looked at; len(args) when there is none
    blank = False
    for line in args.split("\n"):
        rest = line.lstrip()
        first = start + len(line) - len(rest)
        word = _WORD.match(args, first) if (first > start or blank) and first >= end else None
        if word:
            colon = word.end()
            if parenthesis := _PARENTHESIS.match(args, colon):
                if closing < parenthesis.end():
                    closing = args.find(")", parenthesis.end())
                    closing = len(args) if closing < 0 else closing
                colon = closing + 1 if args.startswith(":", closing + 1) else colon
            if args.startswith(":", colon):
                found.add(word.group())
                end = colon + 1
        blank = not rest
        start += len(line) + 1
    return found
