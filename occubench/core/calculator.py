"""The calculator tool's arithmetic, shared by the worlds that offer one: numbers, + - * / // % ** and parentheses,
parsed, never evaluated as Python, and bounded so that no expression can take long or build a huge number."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from occubench.core.tools import ToolError

#: Calculator bounds: every number, intermediate ones included, stays within this magnitude (so no step can build
#: a huge integer or overflow a float), and an expression has at most so many characters and syntax-tree nodes.
MAX_MAGNITUDE = 1e100
MAX_EXPRESSION = 500
MAX_NODES = 200


class _Calculator(ast.NodeVisitor):
    _ops: dict[type, Callable[..., Any]] = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                                            ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: operator.mod,
                                            ast.FloorDiv: operator.floordiv, ast.USub: operator.neg,
                                            ast.UAdd: operator.pos}

    def evaluate(self, expression: str) -> int | float:
        if len(expression) > MAX_EXPRESSION:
            raise ToolError(f"the expression is longer than {MAX_EXPRESSION} characters")
        try:
            tree = ast.parse(expression.strip(), mode="eval")
        except (SyntaxError, ValueError):  # ValueError: null bytes, lone surrogates
            raise ToolError("not an arithmetic expression: use numbers, + - * / // % ** and parentheses") from None
        if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
            raise ToolError("the expression is too long; split it into steps")
        return self.visit(tree.body)

    def visit_BinOp(self, node: ast.BinOp) -> int | float:
        left, right = self.visit(node.left), self.visit(node.right)
        if isinstance(node.op, ast.Pow) and left not in (0, 1, -1) and right * math.log10(abs(left)) > \
                math.log10(MAX_MAGNITUDE):  # estimated before computing: the exact power could take forever
            raise _too_large()
        try:
            return _bounded(self._operator(node.op)(left, right))
        except ZeroDivisionError:
            raise ToolError("division by zero") from None

    def visit_UnaryOp(self, node: ast.UnaryOp) -> int | float:
        return self._operator(node.op)(self.visit(node.operand))

    def visit_Constant(self, node: ast.Constant) -> int | float:
        if not isinstance(node.value, (int, float)) or isinstance(node.value, bool):
            raise ToolError("only numbers")
        return _bounded(node.value)

    def generic_visit(self, node: ast.AST) -> int | float:
        raise ToolError(f"unsupported expression: {type(node).__name__}")

    def _operator(self, op: ast.AST) -> Callable[..., Any]:
        if type(op) not in self._ops:
            raise ToolError(f"unsupported operator: {type(op).__name__}")
        return self._ops[type(op)]


def _bounded(value: object) -> int | float:
    if not isinstance(value, (int, float)):  # a fractional power of a negative number is complex
        raise ToolError("the result is not a real number")
    if not abs(value) <= MAX_MAGNITUDE:  # also false for NaN
        raise _too_large()
    return value


def _too_large() -> ToolError:
    return ToolError(f"the number is too large: the calculator works with magnitudes up to {MAX_MAGNITUDE:g}")


def calculate(expression: str) -> int | float:
    """The value of ``expression``; a :class:`ToolError` says what is refused."""
    return _Calculator().evaluate(expression)
