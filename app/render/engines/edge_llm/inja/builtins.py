"""Inja 3.5.0's builtin functions (`at`, `length`, `join`, ...) on evaluated JSON values.

These are the operations of the vendored Inja's `FunctionStorage` that take plain values;
`default`, `exists` and `super`, which need the renderer's state, live in the evaluator.
Errors are the exceptions the C++ raises: nlohmann's type errors (JsonError), or the bare
`what()` of a standard library exception (`stoi`, `stod`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cmp_to_key
from typing import Any

from app.render.engines.edge_llm.inja.edge_callbacks import ascii_lower, ascii_upper, int_range
from app.render.engines.edge_llm.inja.jsonvalue import (
    JsonError,
    as_float,
    as_int,
    as_list,
    as_str,
    is_integer,
    is_number,
    less,
    python_repr,
    str_ref,
    utf8_len,
)

#: The member Edge-LLM adds to every object to remember its key order; nlohmann's sorted
#: map puts it among the real keys, which `first`, `join` and friends can see.
ORDER_KEY = "__edgellm_internal_key_order__"


class StdError(Exception):
    """A standard library exception escaping a builtin; `str()` is its `what()`."""


def members(value: Any) -> list[Any]:
    """What iterating a json value with `begin()`/`end()` visits: array items, object
    values in nlohmann's sorted key order (with the hidden key list), nothing for null and
    the value itself for any other type."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        keyed = dict(value)
        keyed.setdefault(ORDER_KEY, list(value))
        return [keyed[key] for key in sorted(keyed)]
    return [] if value is None else [value]


def _cmp(a: Any, b: Any) -> int:
    return -1 if less(a, b) else (1 if less(b, a) else 0)


def _front(value: Any, last: bool) -> Any:
    items = members(value)
    if not items:
        raise JsonError("[json.exception.invalid_iterator.214] cannot get value")
    return items[-1] if last else items[0]


def _stoi(value: Any) -> int:
    text = str_ref(value).lstrip(" \t\n\v\f\r")
    sign = 1
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    digits = len(text) - len(text.lstrip("0123456789"))
    if digits == 0:
        raise StdError("stoi")
    number = sign * int(text[:digits])
    if not -(2**31) <= number < 2**31:
        raise StdError("stoi")
    return number


def _stod(value: Any) -> float:
    text = str_ref(value).lstrip(" \t\n\v\f\r")
    # strtod reads the longest prefix that is a number; try prefixes from the longest.
    end = 0
    while end < len(text) and text[end] in "0123456789+-.eEinfatyINFATY":
        end += 1
    for stop in range(end, 0, -1):
        try:
            return float(text[:stop])
        except ValueError:
            continue
    raise StdError("stod")


def _round(value: Any, precision: Any) -> int | float:
    digits = as_int(precision)
    scale = 10.0**digits
    scaled = as_float(value) * scale
    # std::round rounds halves away from zero (Python's round() does not).
    rounded = math.copysign(math.floor(abs(scaled) + 0.5), scaled) / scale
    return int(rounded) if digits == 0 else rounded


def _range(count: Any) -> list[int]:
    number = as_int(count)
    if number < 0:
        raise StdError("cannot create std::vector larger than max_size()")
    return int_range(0, number)


def _replace(value: Any, old: Any, new: Any) -> str:
    text, old, new = as_str(value), as_str(old), as_str(new)
    return text if not old else text.replace(old, new)


def _capitalize(value: Any) -> str:
    text = as_str(value)
    return ascii_upper(text[:1]) + ascii_lower(text[1:])


def _join(items: Any, separator: Any) -> str:
    sep = as_str(separator)
    return sep.join(item if isinstance(item, str) else python_repr(item) for item in members(items))


def _length(value: Any) -> int:
    if isinstance(value, str):
        return utf8_len(value)
    if isinstance(value, list | dict):
        return len(value)
    return 0 if value is None else 1


def _extreme(value: Any, largest: bool) -> Any:
    items = members(value)
    if not items:
        raise StdError("max/min of an empty sequence (undefined behaviour in Inja)")
    best = items[0]
    for item in items[1:]:
        if less(best, item) if largest else less(item, best):
            best = item
    return best


def _existsin(obj: Any, name: Any) -> bool:
    key = str_ref(name)
    return isinstance(obj, dict) and key in obj


#: Builtins by name, each taking the list of evaluated arguments.
BUILTIN_IMPLS: dict[str, Callable[[list[Any]], Any]] = {
    "capitalize": lambda a: _capitalize(a[0]),
    "divisibleBy": lambda a: as_int(a[1]) != 0 and _cmod(as_int(a[0]), as_int(a[1])) == 0,
    "even": lambda a: as_int(a[0]) % 2 == 0,
    "odd": lambda a: as_int(a[0]) % 2 != 0,
    "existsIn": lambda a: _existsin(a[0], a[1]),
    "first": lambda a: _front(a[0], False),
    "last": lambda a: _front(a[0], True),
    "float": lambda a: _stod(a[0]),
    "int": lambda a: _stoi(a[0]),
    "isArray": lambda a: isinstance(a[0], list),
    "isBoolean": lambda a: isinstance(a[0], bool),
    "isFloat": lambda a: isinstance(a[0], float),
    "isInteger": lambda a: is_integer(a[0]),
    "isNumber": lambda a: is_number(a[0]),
    "isObject": lambda a: isinstance(a[0], dict),
    "isString": lambda a: isinstance(a[0], str),
    "length": lambda a: _length(a[0]),
    "lower": lambda a: ascii_lower(as_str(a[0])),
    "upper": lambda a: ascii_upper(as_str(a[0])),
    "max": lambda a: _extreme(a[0], True),
    "min": lambda a: _extreme(a[0], False),
    "range": lambda a: _range(a[0]),
    "replace": lambda a: _replace(a[0], a[1], a[2]),
    "round": lambda a: _round(a[0], a[1]),
    "sort": lambda a: sorted(as_list(a[0]), key=cmp_to_key(_cmp)),
    "join": lambda a: _join(a[0], a[1]),
}


def _cmod(a: int, b: int) -> int:
    """C++'s `%`: the remainder takes the sign of the dividend."""
    remainder = abs(a) % abs(b)
    return -remainder if a < 0 else remainder


def cmod(a: int, b: int) -> int:
    """C++'s integer `%` (b must not be zero)."""
    return _cmod(a, b)
