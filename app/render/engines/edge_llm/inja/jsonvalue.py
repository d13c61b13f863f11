"""JSON values as nlohmann::json and Edge-LLM's patched Inja treat them, in Python.

Values are None, bool, int, float, str, list and dict (dicts keep their key order, as
Edge-LLM's hidden `__edgellm_internal_key_order__` list does). These helpers reproduce the
conversions that raise nlohmann's type errors (`get<double>()` on a string, ...), its
equality and ordering across types, its number printing, and the renderer's
"Python-style" output (`True`, `None`, `['a', 1]`).
"""

from __future__ import annotations

import json
import math
from typing import Any


class JsonError(Exception):
    """An exception nlohmann::json raises; `str()` is its `what()` text."""


class CallbackFailure(Exception):
    """A `std::runtime_error` thrown inside a callback (Edge-LLM prefixes the name)."""


def type_name(value: Any) -> str:
    """nlohmann's `type_name()` for a value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _type_error(code: int, text: str) -> JsonError:
    return JsonError(f"[json.exception.type_error.{code}] {text}")


def is_number(value: Any) -> bool:
    """`is_number()`: int or float, never a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    """`is_number_integer()` (signed or unsigned)."""
    return isinstance(value, int) and not isinstance(value, bool)


def as_float(value: Any) -> float:
    """`get<double>()`: numbers convert; anything else (a boolean too) is type_error 302."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _type_error(302, f"type must be number, but is {type_name(value)}")


def as_int(value: Any) -> int:
    """`get<int64_t>()`: a float is truncated towards zero as C++ converts it; a boolean
    is a type error (nlohmann converts booleans only to other arithmetic types)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return 0  # undefined behaviour in C++; any value will do
        return int(value)
    raise _type_error(302, f"type must be number, but is {type_name(value)}")


def as_str(value: Any) -> str:
    """`get<std::string>()`."""
    if isinstance(value, str):
        return value
    raise _type_error(302, f"type must be string, but is {type_name(value)}")


def str_ref(value: Any) -> str:
    """`get_ref<const std::string&>()`, whose error is type_error 303."""
    if isinstance(value, str):
        return value
    actual = type_name(value)
    raise _type_error(303, f"incompatible ReferenceType for get_ref, actual type is {actual}")


def as_bool(value: Any) -> bool:
    """`get<bool>()`."""
    if isinstance(value, bool):
        return value
    raise _type_error(302, f"type must be boolean, but is {type_name(value)}")


def as_list(value: Any) -> list[Any]:
    """`get<std::vector<json>>()`."""
    if isinstance(value, list):
        return list(value)
    raise _type_error(302, f"type must be array, but is {type_name(value)}")


def wrap64(number: int) -> int:
    """An integer result as a signed 64-bit `int64_t` holds it (C++ wraps on overflow)."""
    return (number + 2**63) % 2**64 - 2**63


def size(value: Any) -> int:
    """nlohmann's `size()`: 0 for null, the length of a container, 1 for anything else."""
    if value is None:
        return 0
    if isinstance(value, list | dict):
        return len(value)
    return 1


def to_bytes(text: str) -> bytes:
    """The UTF-8 bytes the C++ holds for `text` (split characters kept as escapes)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # an unpaired surrogate from the request: keep its bytes
        return text.encode("utf-8", "surrogatepass")


def from_bytes(data: bytes) -> str:
    """Text for bytes that may end in the middle of a character (kept as escapes)."""
    return data.decode("utf-8", "surrogateescape")


def utf8_len(text: str) -> int:
    """Length in bytes, as `std::string::length()` counts."""
    return len(to_bytes(text))


def truthy(value: Any) -> bool:
    """Inja's truthiness: false, 0, "", [], {}, null and a missing value are false."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | list | dict):
        return len(value) != 0
    return True


def equal(left: Any, right: Any) -> bool:
    """nlohmann's `==`: numbers compare across int/float, other types only with their own;
    objects also compare their key order (Edge-LLM keeps it as a hidden member)."""
    if is_number(left) and is_number(right):
        return left == right
    if type_name(left) != type_name(right):
        return False
    if isinstance(left, list):
        return len(left) == len(right) and all(map(equal, left, right))
    if isinstance(left, dict):
        if list(left) != list(right):
            return False
        return all(equal(left[key], right[key]) for key in left)
    return left == right


_RANK = {"null": 0, "boolean": 1, "number": 2, "object": 3, "array": 4, "string": 5}


def less(left: Any, right: Any) -> bool:
    """nlohmann's `<`: values of different types order as null < boolean < number <
    object < array < string; arrays compare element by element, objects by sorted items."""
    lname, rname = type_name(left), type_name(right)
    if lname != rname:
        return _RANK[lname] < _RANK[rname]
    if lname == "null":
        return False
    if lname == "array":
        for a, b in zip(left, right, strict=False):
            if less(a, b):
                return True
            if less(b, a):
                return False
        return len(left) < len(right)
    if lname == "object":
        return less([[k, left[k]] for k in sorted(left)], [[k, right[k]] for k in sorted(right)])
    return left < right


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def less_equal(left: Any, right: Any) -> bool:
    """nlohmann's `<=` (false when either side is NaN)."""
    if _is_nan(left) or _is_nan(right):
        return False
    return not less(right, left)


def format_number(value: int | float) -> str:
    """nlohmann's `dump()` of a number: the shortest round-trip digits, `.0` on whole
    floats, an exponent from 1e15 up or below 1e-4, and `null` for NaN or infinity."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        return "null"
    text = repr(value)
    # Python writes 1e15..1e16 in positional form; nlohmann's limit is one digit lower.
    if "e" not in text and abs(value) >= 1e15:
        sign = "-" if text.startswith("-") else ""
        digits = text.lstrip("-").split(".")[0].rstrip("0") or "0"
        exponent = len(text.lstrip("-").split(".")[0]) - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e+{exponent:02d}"
    return text


def dump_scalar(value: Any, ensure_ascii: bool = False) -> str:
    """nlohmann's compact `dump()` of a non-container value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return format_number(value)
    return json.dumps(value, ensure_ascii=ensure_ascii)


def python_string_literal(text: str) -> str:
    """Inja's `python_string_literal`: Python's repr quoting of a string."""
    quote = '"' if "'" in text and '"' not in text else "'"
    out = [quote]
    escapes = {"\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
    for ch in text:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append(quote)
    return "".join(out)


def python_repr(value: Any) -> str:
    """Inja's `python_repr`: `'text'`, `True`, `None`, `[1, 'a']`, `{'k': 1}`."""
    if isinstance(value, str):
        return python_string_literal(value)
    if isinstance(value, bool):
        return "True" if value else "False"
    if value is None:
        return "None"
    if isinstance(value, list):
        return "[" + ", ".join(python_repr(item) for item in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{python_string_literal(k)}: {python_repr(v)}" for k, v in value.items())
        return "{" + inner + "}"
    return format_number(value)


def python_string(value: Any) -> str:
    """`injaPythonString` / the renderer's `string_value`: a string as is, else its repr."""
    return value if isinstance(value, str) else python_repr(value)


def printed(value: Any) -> str:
    """What `{{ value }}` writes: strings raw, null nothing, anything else its repr."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return python_repr(value)


def copy_value(value: Any) -> Any:
    """A deep copy, as assigning a json value copies it."""
    if isinstance(value, list):
        return [copy_value(item) for item in value]
    if isinstance(value, dict):
        return {key: copy_value(item) for key, item in value.items()}
    return value
