"""Generated code is checked before it is ever imported, and during synthesis runs only in a confined child process.

:func:`check_source` is an allow-list over the syntax tree: imports only of a few modules (and of names in them that
are not modules), builtins only from a safe set (no ``open``, ``eval``, ``exec``, ``__import__``, ``getattr``,
``globals``...), no dunder name and no attribute beginning with ``_`` (dunder tricks, private state), no attributes
that reach files, frames or the database engine's settings, no ``str.format`` (whose fields read attributes), no
classes, no ``global``, and no strings in annotations (``typing`` would evaluate them as code) outside ``Literal``.
A world folder loaded with ``--worlds-dir`` passes the same check before its ``__init__.py`` runs.

:func:`run_confined` runs a function in a child interpreter under an address-space limit (``RLIMIT_AS``), a CPU-time
limit (``RLIMIT_CPU``) and a wall-clock kill, with no API key in its environment, and returns its JSON result or why
it was stopped.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import json
import os
import signal
import subprocess
import symtable
import sys
import types
from dataclasses import dataclass
from typing import Any

from occubench._jsonsafe import dumps
from occubench.tools import describe

#: Builtins generated code may use: values and pure functions, nothing that reaches objects' internals or the system.
SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "chr", "dict", "divmod", "enumerate", "filter", "float", "frozenset", "int",
    "isinstance", "iter", "len", "list", "map", "max", "min", "next", "ord", "range", "repr", "reversed", "round",
    "set", "slice", "sorted", "str", "sum", "tuple", "zip", "ArithmeticError", "Exception", "IndexError",
    "KeyError", "LookupError", "RuntimeError", "TypeError", "ValueError", "ZeroDivisionError",
})
#: Modules that may be imported, and the names that may be used from each (None: any public name but a module).
MODULES: dict[str, frozenset[str] | None] = {
    "__future__": frozenset({"annotations"}),
    "sqlite3": frozenset({"Connection", "Row", "Error", "DatabaseError", "IntegrityError", "OperationalError"}),
    "pathlib": frozenset({"Path"}),  # and only as Path(__file__).parent: see _directory_of_file
    "typing": frozenset({"Any", "Literal", "Optional", "Union"}),
    "occubench.executable.world": frozenset({"Call", "Check", "ExecTask", "ToolError", "World", "found",
                                             "mentions_number", "next_id", "one", "only_changed", "rows", "scalar"}),
    "collections": None, "datetime": None, "decimal": None, "fractions": None, "functools": None, "itertools": None,
    "json": None, "math": None, "re": None, "statistics": None,
}
#: Attributes that reach files, frames, the database engine's settings or a transaction's boundaries, or that read
#: attributes named in a string (``str.format``), whatever object they are taken from.
DENIED_ATTRIBUTES = frozenset({
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rmdir", "mkdir", "touch", "chmod",
    "symlink_to", "hardlink_to", "iterdir", "glob", "rglob", "connect", "format", "format_map",
    "set_authorizer", "set_progress_handler", "set_trace_callback", "enable_load_extension", "load_extension",
    "backup", "iterdump", "serialize", "deserialize", "create_function", "create_aggregate",
    "create_window_function", "create_collation", "blobopen", "interrupt", "commit", "rollback", "close",
    "register_adapter", "register_converter", "mro", "directory", "parent", "parents", "gi_frame", "gi_code",
    "cr_frame", "cr_code", "ag_frame", "ag_code", "f_globals", "f_locals", "f_builtins", "f_back", "f_code",
    "tb_frame", "tb_next",
})
_DENIED_NODES = {ast.ClassDef: "classes", ast.Global: "global", ast.Nonlocal: "nonlocal",
                 ast.AsyncFunctionDef: "async functions", ast.Await: "await", ast.AsyncFor: "async for",
                 ast.AsyncWith: "async with", ast.Yield: "generators", ast.YieldFrom: "generators",
                 ast.Match: "match statements"}
_BUILTINS = frozenset(dir(builtins))
#: Longer source is refused before parsing: no part of a world needs it, and parsing it costs memory.
MAX_SOURCE = 200_000


@dataclass(frozen=True)
class Problem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def check_source(source: str, forbidden_names: frozenset[str] = frozenset()) -> list[Problem]:
    """What in ``source`` the allow-list refuses (empty when it may be imported); ``forbidden_names`` are further
    names it may not use."""
    if len(source) > MAX_SOURCE:
        return [Problem(1, f"the source is {len(source):,} characters long (at most {MAX_SOURCE:,})")]
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [Problem(exc.lineno or 1, f"syntax error: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte, nesting beyond the parser
        return [Problem(1, f"cannot be parsed: {describe(exc)}")]
    checker = _Checker(forbidden_names)
    try:
        checker.visit(tree)
        builtins_used = _builtins_used(source, tree)
    except RecursionError:
        return [Problem(1, "the code is nested too deeply")]
    return sorted(checker.problems + builtins_used, key=lambda problem: problem.line)


def _builtins_used(source: str, tree: ast.AST) -> list[Problem]:
    """The builtins outside the safe set that ``source`` uses: names it reads at module level or as globals of a
    function. A function's own local (a parameter named ``type``) never falls back to the builtin; a module-level
    name may (``for open in []: pass`` binds nothing), so defining one there does not make the builtin safe."""
    module = symtable.symtable(source, "<world>", "exec")
    lines: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            lines.setdefault(node.id, []).append(node.lineno)
    problems, tables = [], [module]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if (symbol.is_referenced() and (symbol.is_global() or table is module) and name in _BUILTINS
                    and name not in SAFE_BUILTINS and not name.startswith("__")):  # dunders are refused already
                line = min((n for n in lines.get(name, ()) if n >= table.get_lineno()), default=1)
                problems.append(Problem(line, f"the builtin {name!r} is not allowed"))
    return problems


class _Checker(ast.NodeVisitor):
    def __init__(self, forbidden_names: frozenset[str]) -> None:
        self.problems: list[Problem] = []
        self.forbidden = forbidden_names
        self.modules: dict[str, str] = {}  # name bound by `import m` -> m

    def refuse(self, node: ast.AST, message: str) -> None:
        self.problems.append(Problem(getattr(node, "lineno", 1), message))

    def generic_visit(self, node: ast.AST) -> None:
        for kind, what in _DENIED_NODES.items():
            if isinstance(node, kind):
                self.refuse(node, f"{what} are not allowed")
        super().generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in MODULES or MODULES[alias.name] is not None and alias.name != "sqlite3":
                self.refuse(node, f"`import {alias.name}` is not allowed (allowed: {', '.join(sorted(MODULES))}; "
                            "occubench.executable.world, pathlib and typing only with `from ... import`)")
            else:
                self.modules[alias.asname or alias.name] = alias.name
                self.name(node, alias.asname or alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module not in MODULES:
            self.refuse(node, f"import from {module or '.'!r} is not allowed (allowed: {', '.join(sorted(MODULES))})")
            return
        for alias in node.names:
            self.member(node, module, alias.name)
            if module == "pathlib" and alias.asname:
                self.refuse(node, "Path may not be renamed")
            elif alias.name != "Path":
                self.name(node, alias.asname or alias.name)

    def member(self, node: ast.AST, module: str, name: str) -> None:
        allowed = MODULES[module]
        if allowed is not None and name not in allowed:
            self.refuse(node, f"{module}.{name} is not allowed (allowed: {', '.join(sorted(allowed))})")
        elif allowed is None and (name.startswith("_") or name in DENIED_ATTRIBUTES or name == "*"
                                  or isinstance(getattr(importlib.import_module(module), name, None),
                                                types.ModuleType)):
            self.refuse(node, f"{module}.{name} is not allowed")

    def name(self, node: ast.AST, name: str) -> None:
        if name.startswith("__"):
            self.refuse(node, f"the name {name!r} is not allowed (no dunder names)")
        elif name == "Path":
            self.refuse(node, "Path may be used only as Path(__file__).parent")
        elif name in self.forbidden:
            self.refuse(node, f"the name {name!r} may not be used here")

    def visit_Name(self, node: ast.Name) -> None:
        self.name(node, node.id)

    def visit_arg(self, node: ast.arg) -> None:
        self.name(node, node.arg)
        if node.annotation is not None:
            self.annotation(node.annotation)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.name(node, node.name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.name(node, node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.visit(node.args)
        if node.returns is not None:
            self.annotation(node.returns)
        for statement in node.body:
            self.visit(statement)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        self.annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def annotation(self, node: ast.expr) -> None:
        # typing.get_type_hints evaluates a string in an annotation as code; a Literal's strings are only values.
        values: set[int] = set()
        for sub in ast.walk(node):
            literal = isinstance(sub, ast.Subscript) and (
                isinstance(sub.value, ast.Name) and sub.value.id == "Literal"
                or isinstance(sub.value, ast.Attribute) and sub.value.attr == "Literal")
            if literal:
                assert isinstance(sub, ast.Subscript)
                values.update(map(id, sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in values:
                self.refuse(sub, "an annotation may not hold a string (outside Literal[...]): write the type itself")
        self.visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _directory_of_file(node):
            return  # Path(__file__).parent: where a world's SQL files are
        if node.attr.startswith("_"):
            self.refuse(node, f"the attribute {node.attr!r} is not allowed (no attribute may begin with an "
                        "underscore)")
        elif node.attr in DENIED_ATTRIBUTES:
            self.refuse(node, f"the attribute {node.attr!r} is not allowed")
        elif isinstance(node.value, ast.Name) and node.value.id in self.modules:
            if not isinstance(node.ctx, ast.Load):  # a module is shared by the whole process: no patching it
                self.refuse(node, f"{node.value.id}.{node.attr} may be read, not assigned or deleted")
            self.member(node, self.modules[node.value.id], node.attr)
        self.visit(node.value)


def _directory_of_file(node: ast.Attribute) -> bool:
    call = node.value
    return (node.attr == "parent" and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "Path" and not call.keywords and len(call.args) == 1
            and isinstance(call.args[0], ast.Name) and call.args[0].id == "__file__")


# -- the confined child ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 30
    memory_bytes: int = 2 << 30
    wall_seconds: float = 60.0


@dataclass(frozen=True)
class Outcome:
    """What a confined run gave: its result, or why there is none (an exception, a limit, a crash)."""

    result: Any = None
    error: str | None = None


def run_confined(target: str, job: Any, limits: Limits = Limits()) -> Outcome:
    """``module:function`` called with ``job`` (JSON data) in a confined child interpreter; its return value (JSON
    data) as the outcome's result."""
    command = [sys.executable, "-m", __name__, target, str(limits.cpu_seconds), str(limits.memory_bytes)]
    # No API key or token for generated code to find; a fixed hash seed, so that messages are the same every run.
    env = {"PYTHONPATH": os.pathsep.join(sys.path), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(command, input=json.dumps(job).encode(), stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, timeout=limits.wall_seconds, check=False)
    except subprocess.TimeoutExpired:  # run() has killed it
        return Outcome(error=f"stopped: did not finish within {limits.wall_seconds:g} s")
    try:
        reply = json.loads(done.stdout)
        return Outcome(result=reply.get("result"), error=reply.get("error"))
    except (ValueError, AttributeError):  # no reply: the child was killed by a limit, or crashed
        if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            return Outcome(error=f"stopped: used more than {limits.cpu_seconds} s of CPU time")
        if done.returncode < 0:
            return Outcome(error=f"stopped by signal {signal.Signals(-done.returncode).name}")
        return Outcome(error=f"the process ended with exit status {done.returncode} without a result")


def _main(target: str, cpu_seconds: int, memory_bytes: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    job = json.loads(sys.stdin.buffer.read())
    out, sys.stdout = sys.stdout, sys.stderr  # stdout carries the reply only
    try:
        module, _, name = target.partition(":")
        reply = {"result": getattr(importlib.import_module(module), name)(job)}
    except BaseException as exc:  # noqa: BLE001 - whatever the code raised (MemoryError too) is the result
        reply = {"error": f"{type(exc).__name__}: {describe(exc)}"}
    out.write(dumps(reply))


if __name__ == "__main__":
    _main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
