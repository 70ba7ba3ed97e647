"""Generated code is checked before it is ever imported: :func:`check_source`, an allow-list over its syntax tree.

The allow-list is a second wall, behind the operating system's sandbox (:mod:`occubench.sandbox`), and not a wall of
its own: it keeps generated code to plain functions on values and on the connection it is handed, so that the usual
ways out of a Python process take an interpreter bug rather than a line of code. It allows imports only of a few
modules (and of names in them that are not modules); a module imported whole only as ``m.name`` read directly (never
put in a list, passed, assigned or returned, so no chain of attributes starts from it); builtins only from a safe
set (no ``open``, ``eval``, ``exec``, ``__import__``, ``getattr``, ``globals``...); no dunder name and no attribute
beginning with ``_``; no attribute that reaches files, frames, modules or the database engine's settings, nor
``str.format`` and functools' wrappers (which read or set attributes named in strings); ``sqlite3.Connection`` and
``sqlite3.Row`` in annotations only; annotations that only name types, each name's meaning decided by the one
place that binds it, never by its spelling (``typing`` evaluates annotations, and strings in them as code: see
:meth:`_Checker.type_expression`); ``Path``, ``__file__`` and ``World`` only as ``World(...,
directory=Path(__file__).parent)``; no classes, no ``global``, no generators, no generics. A world folder loaded
with ``--worlds-dir`` passes the same check before its ``__init__.py`` runs. What an allowed object reaches that
the check does not know of (a bug in the interpreter or in a module it allows) is the OS sandbox's to stop.
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
#: typing's names, bound only by `from typing import X` (not renamed): an annotation's meaning rests on them.
TYPING_NAMES = MODULES["typing"] or frozenset()
#: The only use of Path and of __file__: where a world's SQL files are, handed to World(..., directory=...).
_DIRECTORY_OF_FILE = ast.dump(ast.parse("Path(__file__).parent", mode="eval").body)
_DENIED_NODES = {ast.ClassDef: "classes", ast.Global: "global", ast.Nonlocal: "nonlocal",
                 ast.AsyncFunctionDef: "async functions", ast.Await: "await", ast.AsyncFor: "async for",
                 ast.AsyncWith: "async with", ast.Yield: "generators", ast.YieldFrom: "generators",
                 ast.Match: "match statements",
                 # Python 3.12's generics and `type X = ...`: evaluated lazily, outside what annotations are held to.
                 **{getattr(ast, kind): what for kind, what in (("TypeAlias", "type statements"),
                                                                ("TypeVar", "type parameters"),
                                                                ("ParamSpec", "type parameters"),
                                                                ("TypeVarTuple", "type parameters"))
                    if hasattr(ast, kind)}}
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


#: What a name bound nowhere in a source stands for in an annotation: a builtin type, or what the one import allowed
#: to bind it binds (a tool checked on its own, in synthesis, is later run under the world's imports; in a whole
#: module such a name is unbound, and evaluating it fails).
_IMPLIED = {**{name: f"builtins.{name}" for name in _BUILTINS if isinstance(getattr(builtins, name), type)},
            **{module: module for module in MODULES if _importable(module)},
            **{name: f"{module}.{name}" for module, names in MODULES.items() for name in names or ()}}


def _bindings(tree: ast.AST) -> dict[str, list[ast.AST]]:
    """Every node that binds each name, in any scope: assignment, deletion, loop and `with` targets, parameters,
    imports, definitions, `except ... as`, match captures, type parameters."""
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        name: object
        if isinstance(node, ast.alias):
            name = (node.asname or node.name).partition(".")[0]
        elif isinstance(node, ast.Name):
            name = node.id if not isinstance(node.ctx, ast.Load) else None
        elif isinstance(node, ast.arg):
            name = node.arg
        else:
            name = getattr(node, "rest" if isinstance(node, ast.MatchMapping) else "name", None)
        if isinstance(name, str):
            bound.setdefault(name, []).append(node)
    return bound


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
        # What a name in an annotation stands for is decided by the places that bind it, not by how it is spelled.
        self.bound = _bindings(tree)
        body = tree.body if isinstance(tree, ast.Module) else []
        self.definitions = {id(child): statement for statement in body
                            for child in (statement.names if isinstance(statement, (ast.Import, ast.ImportFrom))
                                          else statement.targets if isinstance(statement, ast.Assign) else [])}
        self.aliases_checked: set[int] = set()
        for name in TYPING_NAMES & self.bound.keys():
            for node in self.bound[name]:
                statement = self.definitions.get(id(node))
                if not (isinstance(statement, ast.ImportFrom) and statement.module == "typing"
                        and isinstance(node, ast.alias) and node.name == name):
                    self.refuse(node, f"the name {name!r} is typing's: it may be bound only by `from typing import "
                                f"{name}`")

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
            renamed = alias.asname not in (None, alias.name)
            if renamed and (alias.name in ("Path", "World") or module == "typing"):
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
        for child in [*node.decorator_list, *getattr(node, "type_params", ())]:  # type parameters: Python 3.12 on
            self.visit(child)
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
        self.type_expression(node)
        self.in_annotation = True
        self.visit(node)
        self.in_annotation = False

    def type_expression(self, node: ast.expr) -> None:
        """Refuse in an annotation what evaluating it could run: typing evaluates an annotation (all of them are text
        under ``from __future__ import annotations``), and then any string in it but a Literal's values, as code."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            self.type_expression(node.left)
            self.type_expression(node.right)
        elif isinstance(node, ast.Subscript):
            origin = self.origin(node.value)
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if not isinstance(origin, str) or not _is_type(origin):
                self.refuse(node, f"{ast.unparse(node.value)}[...]: only a type imported or built in may be "
                            "subscripted in an annotation")
            elif origin == "typing.Literal":
                if not all(_is_constant(item) for item in items):
                    self.refuse(node, "Literal[...] may hold only constants (strings, numbers, True, False, None)")
            else:
                for item in items:
                    self.type_expression(item)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            origin = self.origin(node)
            if origin is None or isinstance(origin, str) and not _is_type(origin):
                self.refuse(node, f"{ast.unparse(node)} in an annotation must be a builtin type, a type imported "
                            "at module level or a type alias assigned once at module level (a value could be text "
                            "typing evaluates; a parameter, a local, a name bound twice could stand for anything)")
            elif not isinstance(origin, str) and id(origin) not in self.aliases_checked:
                self.aliases_checked.add(id(origin))
                self.type_expression(origin)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.refuse(node, "an annotation may not hold a string (outside Literal[...]): write the type itself")
        elif not (isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis)):
            self.refuse(node, "an annotation may only name a type (X, m.X, X[...], X | Y): no calls, "
                        "assignments or other expressions")

    def origin(self, node: ast.expr) -> str | ast.expr | None:
        """What a name (or ``m.name``) in an annotation stands for, from the one place that binds it: "module.name"
        for a name imported or built in, a module's name, or the value of a type alias ``X = ...``; None when it is
        bound otherwise, or more than once."""
        if isinstance(node, ast.Attribute):
            module = self.origin(node.value) if isinstance(node.value, ast.Name) else None
            return f"{module}.{node.attr}" if isinstance(module, str) and _importable(module) else None
        if not isinstance(node, ast.Name):
            return None
        places = self.bound.get(node.id, [])
        if not places:
            return _IMPLIED.get(node.id)
        statement = self.definitions.get(id(places[0])) if len(places) == 1 else None
        if isinstance(statement, ast.ImportFrom) and isinstance(places[0], ast.alias):
            return f"{statement.module}.{places[0].name}"
        if isinstance(statement, ast.Import) and isinstance(places[0], ast.alias):
            return places[0].name
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            return statement.value
        return None

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


def _is_type(origin: str) -> bool:
    """Whether the "module.name" an annotation's name stands for is a class or one of typing's forms: never a value,
    such as a string constant (``decimal.ROUND_UP``, ``functools.WRAPPER_ASSIGNMENTS``), which typing would read as
    the name of another, and that one's text as code."""
    module, _, name = origin.rpartition(".")
    if module == "typing" or module not in MODULES and module != "builtins":  # no module named by the source is loaded
        return module == "typing"
    return isinstance(getattr(importlib.import_module(module), name, None), type)


def _is_constant(node: ast.expr) -> bool:
    """Whether ``node`` is a constant a Literal may hold: no expression, no nested type."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bytes, int)))
