"""What Edge-LLM's callbacks (`cpp/chatTemplate/injaCallbacks.cpp`) do, one by one.

Each takes its evaluated arguments (the piped value or receiver first) and returns a JSON
value, or raises CallbackFailure / JsonError with the text the C++ throws; `call_callback`
prefixes the callback's name as Edge-LLM's `checked` wrapper does ("split: split delimiter
cannot be empty"). Strings are handled as the C++ handles bytes where it matters (strip,
case changes touch ASCII only).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import cmp_to_key
from typing import Any

from app.render.engines.edge_llm.inja.jsondump import dump, edge_tojson
from app.render.engines.edge_llm.inja.jsonvalue import (
    CallbackFailure,
    JsonError,
    as_int,
    as_str,
    equal,
    from_bytes,
    less,
    python_string,
    to_bytes,
    truthy,
)

_SPACE = b" \t\n\v\f\r"
_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
#: The longest list `range` may build here (Inja has no bound; we keep memory bounded).
MAX_RANGE = 1_000_000


def ascii_upper(text: str) -> str:
    """`std::toupper` byte by byte in the C locale: only ASCII letters change."""
    return text.translate(_ASCII_UPPER)


def ascii_lower(text: str) -> str:
    """`std::tolower` byte by byte in the C locale."""
    return text.translate(_ASCII_LOWER)


def _strip(value: Any, left: bool, right: bool, chars: str | None = None) -> str:
    # C++ strips bytes, so a multi-byte character in `chars` strips its bytes one by one.
    data = to_bytes(python_string(value))
    drop = _SPACE if not chars else to_bytes(chars)
    if left:
        data = data.lstrip(drop)
    if right:
        data = data.rstrip(drop)
    return from_bytes(data)


def _split(value: Any, delimiter: Any, max_splits: int = -1) -> list[str]:
    delimiter = as_str(delimiter)
    if not delimiter:
        raise CallbackFailure("split delimiter cannot be empty")
    return python_string(value).split(delimiter, max_splits if max_splits >= 0 else -1)


def find_attribute(value: Any, path: str) -> tuple[bool, Any]:
    """Edge-LLM's `findAttribute`: follow a dotted path through objects."""
    current = value
    for name in path.split("."):
        if not isinstance(current, dict) or name not in current:
            return False, None
        current = current[name]
    return True, current


def _attribute_matches(found: bool, value: Any, test: str, expected: list[Any]) -> bool:
    if not test:
        return found and truthy(value)
    if test == "defined":
        return found
    if test == "undefined":
        return not found
    if not found:
        return False
    if test in ("equalto", "eq"):
        if not expected:
            raise CallbackFailure(f"{test} requires a comparison value")
        return equal(value, expected[0])
    checks: dict[str, Callable[[Any], bool]] = {
        "none": lambda v: v is None,
        "string": lambda v: isinstance(v, str),
        "mapping": lambda v: isinstance(v, dict),
        "sequence": lambda v: isinstance(v, list | dict | str),
        "iterable": lambda v: isinstance(v, list | dict | str),
        "boolean": lambda v: isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    }
    if test not in checks:
        raise CallbackFailure(f"unsupported attribute test: {test}")
    return checks[test](value)


def _filter_by_attribute(args: list[Any], reject: bool) -> list[Any]:
    usage = "expected a sequence, attribute, optional test, and optional value"
    if not 2 <= len(args) <= 4 or not isinstance(args[1], str):
        raise CallbackFailure(usage)
    if args[0] is None:
        return []
    if not isinstance(args[0], list):
        raise CallbackFailure(usage)
    test = as_str(args[2]) if len(args) >= 3 else ""
    expected = args[3:4]
    result = []
    for item in args[0]:
        found, value = find_attribute(item, args[1])
        if _attribute_matches(found, value, test, expected) != reject:
            result.append(item)
    return result


def _tojson2(args: list[Any]) -> str:
    value, option = args
    if isinstance(option, bool):
        return edge_tojson(value, ensure_ascii=option)
    if isinstance(option, int):
        return dump(value, option)
    if (
        isinstance(option, list)
        and len(option) == 2
        and all(isinstance(item, str) for item in option)
    ):
        return edge_tojson(value, option[0], option[1])
    raise CallbackFailure("unsupported keyword argument")


def _get(args: list[Any]) -> Any:
    default = args[2] if len(args) == 3 else None
    if not isinstance(args[0], dict):
        return default
    return args[0].get(as_str(args[1]), default)


def _list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return list(value) if isinstance(value, dict) else []


def _fromjson(text: Any) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    def number(literal: str) -> float:
        value = float(literal)
        if value in (float("inf"), float("-inf")):
            raise CallbackFailure(
                f"[json.exception.out_of_range.406] number overflow parsing '{literal}'"
            )
        return value

    try:
        return json.loads(as_str(text), parse_constant=refuse, parse_float=number)
    except (ValueError, RecursionError) as error:
        # nlohmann words this differently (with the last bytes read); the gist is the same.
        raise CallbackFailure(
            "[json.exception.parse_error.101] parse error: syntax error while parsing value - "
            f"{error}"
        ) from None


def _reject(args: list[Any]) -> list[Any]:
    if not isinstance(args[0], list) or as_str(args[1]) != "equalto":
        raise CallbackFailure("reject currently supports equalto on arrays")
    return [item for item in args[0] if not equal(item, args[2])]


def _dictsort(value: Any) -> list[Any]:
    if not isinstance(value, dict):
        raise CallbackFailure("dictsort expects an object")
    return [[key, value[key]] for key in sorted(value)]


def _sort_by(args: list[Any]) -> list[Any]:
    items, attribute = args
    if not isinstance(items, list) or not isinstance(attribute, str):
        raise CallbackFailure("sort(attribute=...) expects an array and attribute name")
    # std::stable_sort compares every element at least once when there are two or more.
    if len(items) >= 2 and any(not isinstance(i, dict) or attribute not in i for i in items):
        raise CallbackFailure("sort attribute is missing")

    def compare(a: Any, b: Any) -> int:
        if less(a[attribute], b[attribute]):
            return -1
        return 1 if less(b[attribute], a[attribute]) else 0

    return sorted(items, key=cmp_to_key(compare))


def _map(args: list[Any]) -> list[Any]:
    items, name = args
    if not isinstance(items, list) or not isinstance(name, str):
        raise CallbackFailure("map expects a sequence and filter name")
    result = []
    for item in items:
        if name == "upper":
            result.append(ascii_upper(python_string(item)))
        elif name == "lower":
            result.append(ascii_lower(python_string(item)))
        elif isinstance(item, dict):
            found, value = find_attribute(item, name)
            if not found:
                raise CallbackFailure(f"map attribute is missing: {name}")
            result.append(value)
        else:
            raise CallbackFailure(f"unsupported map filter: {name}")
    return result


def _unique(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise CallbackFailure("unique expects a sequence")
    result: list[Any] = []
    for item in value:
        if not any(equal(item, seen) for seen in result):
            result.append(item)
    return result


def int_range(start: int, stop: int, step: int = 1) -> list[int]:
    """The integers `range` yields, refused above MAX_RANGE to keep memory bounded."""
    count = len(range(start, stop, step))
    if count > MAX_RANGE:
        raise CallbackFailure(f"range of {count:,} numbers is over this renderer's limit")
    return list(range(start, stop, step))


def _range(args: list[Any]) -> list[int]:
    if not 2 <= len(args) <= 3:
        raise CallbackFailure("range expects two or three integer arguments")
    start, stop = as_int(args[0]), as_int(args[1])
    step = as_int(args[2]) if len(args) == 3 else 1
    if step == 0:
        raise CallbackFailure("range step cannot be zero")
    return int_range(start, stop, step)


def _namespace(args: list[Any]) -> dict[str, Any]:
    if len(args) % 2:
        raise CallbackFailure("namespace expects name/value pairs")
    result: dict[str, Any] = {}
    for index in range(0, len(args), 2):
        if not isinstance(args[index], str):
            raise CallbackFailure("namespace field names must be strings")
        result[args[index]] = args[index + 1]
    return result


def _raise(args: list[Any]) -> Any:
    raise CallbackFailure(python_string(args[0]))


def _strftime_now(args: list[Any], now: float | None = None) -> str:
    text = time.strftime(as_str(args[0]), time.localtime(now))
    if len(text) >= 16384:
        raise CallbackFailure("strftime output exceeds limit")
    return text


_IMPLS: dict[str, Callable[[list[Any]], Any]] = {
    "tojson": lambda a: edge_tojson(a[0]) if len(a) == 1 else _tojson2(a),
    "safe": lambda a: a[0],
    "string": lambda a: python_string(a[0]),
    "trim": lambda a: _strip(a[0], True, True),
    "strip": lambda a: _strip(a[0], True, True, as_str(a[1]) if len(a) == 2 else None),
    "lstrip": lambda a: _strip(a[0], True, False, as_str(a[1]) if len(a) == 2 else None),
    "rstrip": lambda a: _strip(a[0], False, True, as_str(a[1]) if len(a) == 2 else None),
    "startswith": lambda a: python_string(a[0]).startswith(as_str(a[1])),
    "endswith": lambda a: python_string(a[0]).endswith(as_str(a[1])),
    "split": lambda a: _split(a[0], a[1], as_int(a[2]) if len(a) == 3 else -1),
    "get": _get,
    "items": lambda a: [[k, v] for k, v in a[0].items()] if isinstance(a[0], dict) else [],
    "list": lambda a: _list(a[0]),
    "fromjson": lambda a: _fromjson(a[0]),
    "reject": _reject,
    "dictsort": lambda a: _dictsort(a[0]),
    "sort": _sort_by,
    "map": _map,
    "selectattr": lambda a: _filter_by_attribute(a, False),
    "rejectattr": lambda a: _filter_by_attribute(a, True),
    "unique": lambda a: _unique(a[0]),
    "range": _range,
    "namespace": _namespace,
    "raise_exception": _raise,
    "strftime_now": _strftime_now,
}


def call_callback(name: str, args: list[Any], now: float | None = None) -> Any:
    """Run Edge-LLM's callback `name` on evaluated `args`; any failure comes out as a
    CallbackFailure whose text starts with the name, as Edge-LLM's `checked` wrapper says.
    `now` pins the clock `strftime_now` reads (seconds since the epoch; None: the time)."""
    try:
        if name == "strftime_now":
            return _strftime_now(args, now)
        return _IMPLS[name](args)
    except (CallbackFailure, JsonError) as error:
        raise CallbackFailure(f"{name}: {error}") from None
