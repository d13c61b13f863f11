"""How llama.cpp's Jinja engine prints, compares and picks values (build b11434).

Python's Jinja prints a value with `str()`; llama.cpp's runtime (common/jinja/runtime.h,
`gather_string_parts_recursive`) writes a string as it is, a number or a boolean as
value.cpp spells it, the items of a list one after another, and nothing at all for none,
undefined or a mapping. Its `sameas` test and its `min`/`max` filters (value.cpp) follow
rules of their own, written out below.
"""

from __future__ import annotations

from typing import Any

import jinja2


def print_value(value: Any) -> Any:
    """What `{{ value }}` writes (the environment's `finalize`)."""
    if isinstance(value, str):
        return value
    if value is None or isinstance(value, jinja2.Undefined | dict):
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, list | tuple):
        # list.__iter__: printing a probe list is no array access (see `tracking`).
        items = list.__iter__(value) if isinstance(value, list) else iter(value)
        return "".join(str(print_value(item)) for item in items)
    return value


def format_float(value: float) -> str:
    """value.cpp's float text: std::to_string ("%f"), trailing zeros cut, one kept."""
    text = f"{value:f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def sameas(value: Any, other: Any) -> bool:
    """value.cpp's `sameas` test: none and none, equal booleans, equal integers from -5
    to 256 (CPython's cached ones, which llama.cpp imitates), otherwise the very same
    value. llama.cpp makes a new value for every literal and every string it computes,
    so two strings are never the same one here (a variable tested against itself would
    be, a case no template has a reason to write)."""
    if isinstance(value, jinja2.Undefined) or isinstance(other, jinja2.Undefined):
        return False
    if value is None or other is None:
        return value is None and other is None
    if isinstance(value, bool) or isinstance(other, bool):
        return isinstance(value, bool) and isinstance(other, bool) and value == other
    if isinstance(value, int) and isinstance(other, int):
        return -5 <= value <= 256 and value == other
    if isinstance(value, str):
        return False
    return value is other


def attribute_of(item: Any, attribute: Any, default: Any) -> Any:
    """value.cpp's get_attribute: a list by an index (or a string of digits), a mapping
    by its key, anything else the default."""
    if isinstance(item, list | tuple):
        if isinstance(attribute, str) and attribute.isascii() and attribute.isdigit():
            attribute = int(attribute)
        if isinstance(attribute, int) and -len(item) <= attribute < len(item):
            return item[attribute]
        return default
    if isinstance(item, dict):
        return item.get(attribute, default)
    return default


def _extreme(lower: bool) -> Any:
    """value.cpp's min (`lower`) or max: the first item whose value (or attribute) is
    strictly below (above) every earlier pick; always case sensitive."""

    @jinja2.pass_environment
    def pick(
        environment: jinja2.Environment,
        value: Any,
        case_sensitive: bool = False,
        attribute: Any = None,
    ) -> Any:
        items = list(value)
        if not items:
            return environment.undefined("No aggregated item, sequence was empty.")
        missing = environment.undefined()
        result = items[0]
        for item in items:
            mine, best = item, result
            if attribute is not None:
                mine = attribute_of(item, attribute, missing)
                best = attribute_of(result, attribute, missing)
            if (mine < best) if lower else (mine > best):
                result = item
        return result

    return pick


def install(env: jinja2.Environment) -> None:
    """Put llama.cpp's printing, `sameas`, `min` and `max` into `env`."""
    env.finalize = print_value
    env.tests["sameas"] = sameas
    env.filters["min"] = _extreme(lower=True)
    env.filters["max"] = _extreme(lower=False)
