"""Generated code is checked before it is ever imported: :func:`check_source`, an allow-list over its syntax tree.

The allow-list is a second wall, behind the operating system's sandbox (:mod:`occubench.sandbox`), and not a wall of
its own: it keeps generated code to plain functions on values and on the connection it is handed, so that the usual
ways out of a Python process take an interpreter bug rather than a line of code. It allows imports only of a few
modules (and of names in them that are not modules); a module imported whole only as ``m.name`` read directly (never
put in a list, passed, assigned or returned, so no chain of attributes starts from it); builtins only from a safe
set (no ``open``, ``eval``, ``exec``, ``__import__``, ``getattr``, ``globals``...); no dunder name and no attribute
beginning with ``_``; no attribute that reaches files, frames, modules or the database engine's settings, nor
``str.format`` and functools' wrappers (which read or set attributes named in strings); ``sqlite3.Connection`` and
``sqlite3.Row`` in annotations only, and annotations that only name types (``typing`` evaluates them); ``Path``,
``__file__`` and ``World`` only as ``World(..., directory=Path(__file__).parent)``; no classes, no ``global``, no
generators. A world folder loaded with ``--worlds-dir`` passes the same check before its ``__init__.py`` runs. What
an allowed object reaches that the check does not know of (a bug in the interpreter or in a module it allows) is the
OS sandbox's to stop.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import symtable
import types
from dataclasses import dataclass

from occubench.core.tools import describe

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
    "pathlib": frozenset({"Path"}),  # and only as World(..., directory=Path(__file__).parent)
    "typing": frozenset({"Any", "Literal", "Optional", "Union"}),
    "occubench.executable.world": frozenset({"Call", "Check", "ExecTask", "ToolError", "World", "found",
                                             "mentions_number", "next_id", "one", "only_changed", "rows", "scalar"}),
    "collections": None, "datetime": None, "decimal": None, "fractions": None, "functools": None, "itertools": None,
    "json": None, "math": None, "re": None, "statistics": None,
}
#: sqlite3's classes that open a database file (``Connection('/etc/passwd')``) or read one: names for annotations.
TYPES_ONLY = frozenset({"Connection", "Row"})
#: Attributes refused whatever object they are taken from.
DENIED_ATTRIBUTES = frozenset({
    # files
    "open", "read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rmdir", "mkdir", "touch", "chmod",
    "symlink_to", "hardlink_to", "iterdir", "glob", "rglob", "directory", "parent", "parents",
    # the database engine's settings, other databases, a transaction's boundaries
    "connect", "set_authorizer", "set_progress_handler", "set_trace_callback", "enable_load_extension",
    "load_extension", "setconfig", "setlimit", "backup", "iterdump", "serialize", "deserialize", "create_function",
    "create_aggregate", "create_window_function", "create_collation", "blobopen", "interrupt", "commit", "rollback",
    "close", "register_adapter", "register_converter",
    # attributes read or set by a name in a string: str.format's fields, and functools' wrappers, which copy any
    # attribute (updated=("__globals__",) pours another module's globals, its imported modules, into the world's)
    "format", "format_map", "update_wrapper", "wraps",
    # frames and classes' insides, from which any function's globals are a step away
    "mro", "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_globals", "f_locals", "f_builtins",
    "f_back", "f_code", "tb_frame", "tb_next",
    # Modules one step from files, processes or the interpreter, and the import machinery. A module imported whole
    # is read only as `m.name`, never handled as a value, but another object may hold one (`codecs.sys`): these
    # names stop such a chain wherever it starts.
    "builtins", "codecs", "ctypes", "importlib", "io", "load_module", "loader", "marshal", "meta_path", "modules",
    "multiprocessing", "os", "pathlib", "pickle", "posix", "resource", "shutil", "signal", "socket", "spec",
    "subprocess", "sys", "tempfile", "threading", "types",
})
#: What an annotation may hold: types named, subscripted and joined with `|`; never a call or an assignment
#: (typing.get_type_hints evaluates annotations in the module's namespace).
_ANNOTATION_NODES = (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant, ast.BinOp,
                     ast.BitOr, ast.Load)
#: The only use of Path and of __file__: where a world's SQL files are, handed to World(..., directory=...).
_DIRECTORY_OF_FILE = ast.dump(ast.parse("Path(__file__).parent", mode="eval").body)
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
    try:
        checker = _Checker(tree, forbidden_names)
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


def _importable(module: str) -> bool:
    """Whether ``import module`` is allowed: sqlite3 (for annotations) and the modules any of whose names may be used;
    the others only with ``from ... import``."""
    return module in MODULES and (MODULES[module] is None or module == "sqlite3")


class _Checker(ast.NodeVisitor):
    def __init__(self, tree: ast.AST, forbidden_names: frozenset[str]) -> None:
        self.problems: list[Problem] = []
        self.forbidden = forbidden_names
        # Read from the whole tree first: a function may use a name above the import that binds it.
        imports = [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
        self.modules = {alias.asname or alias.name: alias.name for node in imports if isinstance(node, ast.Import)
                        for alias in node.names if _importable(alias.name)}  # name bound by `import m` -> m
        self.types_only = {alias.asname or alias.name for node in imports
                           if isinstance(node, ast.ImportFrom) and node.module == "sqlite3" and not node.level
                           for alias in node.names if alias.name in TYPES_ONLY}
        self.in_annotation = False

    def refuse(self, node: ast.AST, message: str) -> None:
        self.problems.append(Problem(getattr(node, "lineno", 1), message))

    def generic_visit(self, node: ast.AST) -> None:
        for kind, what in _DENIED_NODES.items():
            if isinstance(node, kind):
                self.refuse(node, f"{what} are not allowed")
        super().generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _importable(alias.name):
                self.refuse(node, f"`import {alias.name}` is not allowed (allowed: {', '.join(sorted(MODULES))}; "
                            "occubench.executable.world, pathlib and typing only with `from ... import`)")
            else:
                self.name(node, alias.asname or alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or module not in MODULES:
            self.refuse(node, f"import from {module or '.'!r} is not allowed (allowed: {', '.join(sorted(MODULES))})")
            return
        for alias in node.names:
            self.member(node, module, alias.name)
            if alias.name in ("Path", "World") and alias.asname not in (None, alias.name):
                self.refuse(node, f"{alias.name} may not be renamed")
            elif alias.name not in ("Path", "World"):  # the two are checked where they are used
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
        elif name in ("Path", "World"):  # a world's folder goes to World and nowhere else: see visit_Call
            self.refuse(node, f"{name} may be used only as World(..., directory=Path(__file__).parent)")
        elif name in self.forbidden:
            self.refuse(node, f"the name {name!r} may not be used here")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.modules:  # its attribute reads do not come here: see visit_Attribute
            self.refuse(node, f"the module {node.id} may be used only to read a name from it ({node.id}.name), "
                        "not as a value")
        elif node.id in self.types_only and not self.in_annotation:
            self.refuse(node, f"{node.id} may be used only in annotations")
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
            if not isinstance(sub, _ANNOTATION_NODES):
                self.refuse(sub, "an annotation may only name a type (X, m.X, X[...], X | Y): no calls, "
                            "assignments or other expressions")
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in values:
                self.refuse(sub, "an annotation may not hold a string (outside Literal[...]): write the type itself")
        self.in_annotation = True
        self.visit(node)
        self.in_annotation = False

    def visit_Attribute(self, node: ast.Attribute) -> None:
        module = self.modules.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if node.attr.startswith("_"):
            self.refuse(node, f"the attribute {node.attr!r} is not allowed (no attribute may begin with an "
                        "underscore)")
        elif node.attr in DENIED_ATTRIBUTES:
            self.refuse(node, f"the attribute {node.attr!r} is not allowed")
        elif module is not None:
            if not isinstance(node.ctx, ast.Load):  # a module is shared by the whole process: no patching it
                self.refuse(node, f"{module}.{node.attr} may be read, not assigned or deleted")
            self.member(node, module, node.attr)
            if module == "sqlite3" and node.attr in TYPES_ONLY and not self.in_annotation:
                self.refuse(node, f"sqlite3.{node.attr} may be used only in annotations")
        if module is None:  # `m` of `m.name` is the one use a module's name may have
            self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        # World(..., directory=Path(__file__).parent) is the one place for World, Path and __file__: nothing else
        # gets the world's folder, and a world reads its SQL files from beside its code, never from elsewhere.
        exempt: list[ast.AST] = []
        if isinstance(node.func, ast.Name) and node.func.id == "World":
            exempt = [node.func, *(keyword for keyword in node.keywords
                                   if keyword.arg == "directory" and ast.dump(keyword.value) == _DIRECTORY_OF_FILE)]
            if len(exempt) == 1:
                self.refuse(node, "World(...) must be given directory=Path(__file__).parent")
        for child in ast.iter_child_nodes(node):
            if child not in exempt:
                self.visit(child)
