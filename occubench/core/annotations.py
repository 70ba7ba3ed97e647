"""A tool's annotations read as data: the types they name, found without evaluating them.

``typing.get_type_hints`` evaluates an annotation written as text (under ``from __future__ import annotations`` every
annotation is text), and then any string inside one but a Literal's values, as code: a world's tool ran a shell that
way when its spec was built (issue 43). Here text is parsed and its names looked up; nothing in it runs.
"""

from __future__ import annotations

import ast
import builtins
import types
import typing
from collections.abc import Mapping
from typing import Any

#: Annotation text longer than this is cut in a message.
_SHOWN = 200


def named_type(annotation: Any, namespace: Mapping[str, Any]) -> Any:
    """The type ``annotation`` names: itself, or for text (or a forward reference to text) the type it names, its
    names looked up in ``namespace`` and then among the builtins. Text may name types (``X``, ``m.X``), subscript them
    (``X[A, B]``, ``Literal[constants]``) and join them with ``|``; anything else raises TypeError."""
    if isinstance(annotation, typing.ForwardRef):
        annotation = annotation.__forward_arg__
    if not isinstance(annotation, str):
        return annotation
    try:
        return _resolved(ast.parse(annotation.strip(), mode="eval").body, namespace)
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError, KeyError):
        raise TypeError(f"the annotation {annotation[:_SHOWN]!r} names no type a JSON schema can be derived "
                        "from") from None


def _resolved(node: ast.expr, namespace: Mapping[str, Any]) -> Any:
    if isinstance(node, (ast.Name, ast.Attribute)):
        if isinstance(node, ast.Name):
            found = namespace[node.id] if node.id in namespace else vars(builtins)[node.id]
        elif isinstance(module := _resolved(node.value, namespace), types.ModuleType):
            found = vars(module)[node.attr]
        else:
            raise TypeError(node)
        if isinstance(found, (str, typing.ForwardRef)):  # a name stands for a type, never for more text to read
            raise TypeError(node)
        return found
    if isinstance(node, ast.Constant) and node.value is None:
        return type(None)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _resolved(node.left, namespace) | _resolved(node.right, namespace)
    if isinstance(node, ast.Subscript):
        origin = _resolved(node.value, namespace)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin is typing.Literal:
            args = tuple(map(ast.literal_eval, items))
        elif isinstance(origin, type) or getattr(origin, "__module__", None) == "typing":
            args = tuple(_resolved(item, namespace) for item in items)
        else:
            raise TypeError(node)
        return origin[args[0] if len(args) == 1 else args]
    raise TypeError(node)
