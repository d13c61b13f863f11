"""Inja's two-argument operators on existing JSON values, with nlohmann's conversions:
`+` joins strings and arrays or adds numbers (integers wrap at 64 bits), `/` always
divides as doubles, `%` takes the dividend's sign as C++ does, `~` joins Python-style
strings, and comparisons order values of different types as nlohmann does.
"""

from __future__ import annotations

import math
from typing import Any

from app.render.engines.edge_llm.inja import nodes as n
from app.render.engines.edge_llm.inja.builtins import ORDER_KEY, cmod, members
from app.render.engines.edge_llm.inja.jsonvalue import (
    as_float,
    as_int,
    equal,
    is_integer,
    less,
    less_equal,
    python_string,
    wrap64,
)


class InjaError(Exception):
    """Inja's `render_error` at a source offset."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def _contains(haystack: Any, needle: Any) -> bool:
    if isinstance(haystack, dict) and isinstance(needle, str):
        return needle in haystack or needle == ORDER_KEY
    if isinstance(haystack, str) and isinstance(needle, str):
        return needle in haystack
    return any(equal(item, needle) for item in members(haystack))


def binary(op: str, left: Any, right: Any, node: n.Node, max_repeat: int) -> Any:
    """A two-argument operator on existing values, with nlohmann's conversions."""
    if op == "==":
        return equal(left, right)
    if op == "!=":
        return not equal(left, right)
    if op == "<":
        return less(left, right)
    if op == ">":
        return less(right, left)
    if op == "<=":
        return less_equal(left, right)
    if op == ">=":
        return less_equal(right, left)
    if op == "in":
        return _contains(right, left)
    if op == "not in":
        return not _contains(right, left)
    if op == "~":
        return python_string(left) + python_string(right)
    if op == "+":
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        if is_integer(left) and is_integer(right):
            return wrap64(left + right)
        return as_float(left) + as_float(right)
    if op == "-":
        if is_integer(left) and is_integer(right):
            return wrap64(left - right)
        return as_float(left) - as_float(right)
    if op == "*":
        return _multiply(left, right, max_repeat)
    if op == "/":
        divisor = as_float(right)
        if divisor == 0:
            raise InjaError("division by zero", node.pos)
        return as_float(left) / divisor
    if op == "^":
        if is_integer(left) and as_int(right) >= 0:
            return int(float(left) ** as_int(right))
        return _pow(as_float(left), as_int(right))
    if op == "%":
        divisor = as_int(right)
        dividend = as_int(left)
        if divisor == 0:
            # Undefined behaviour in C++ (the process usually dies); say so plainly.
            raise InjaError("integer modulo by zero", node.pos)
        return cmod(dividend, divisor)
    raise InjaError(f"unknown operator {op}", node.pos)


def _multiply(left: Any, right: Any, max_repeat: int) -> Any:
    if isinstance(left, str | list) and is_integer(right):
        count = max(right, 0)
        if len(left) * count > max_repeat:
            raise InjaError(f"repeating a value {count:,} times is over this renderer's limit", 0)
        return left * count
    if is_integer(left) and is_integer(right):
        return wrap64(left * right)
    return as_float(left) * as_float(right)


def _pow(base: float, exponent: int) -> float:
    """`std::pow(double, int64)`: zero to a negative power is infinity, not an error."""
    try:
        return base**exponent
    except ZeroDivisionError:
        return math.copysign(math.inf, base) if exponent % 2 else math.inf
    except OverflowError:
        return math.inf if base > 0 or exponent % 2 == 0 else -math.inf
