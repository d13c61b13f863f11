"""Builtins llama.cpp's Jinja engine lacks or implements only in part, refused as it refuses.

Python's Jinja renders all of these; llama.cpp's engine (common/jinja/value.cpp, build
b11434) throws a `not_implemented_exception`, whose message llama-server answers with the
prefix "NotImplemented: ". Where llama.cpp implements the plain form of a builtin
(`'{}'.format(x)`, `replace` without a count, `map(attribute=...)`), that form renders
here as before. (Until b11434 it also refused the `sameas` test and `min`/`max` by
attribute; those are now implemented, its own way: see `values`.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jinja2


def not_implemented(what: str) -> NotImplementedError:
    """What llama.cpp's not_implemented_exception says (the problem's type stays
    NotImplementedError, as for the engine's other refusals, such as `tojson` sorting)."""
    return NotImplementedError(f"NotImplemented: {what}")


def _refused_test(name: str) -> Callable[..., bool]:
    """value.cpp's `escaped` and `filter` tests: each throws when evaluated."""

    def test(*args: Any) -> bool:
        raise not_implemented(f"{name} test not implemented")

    return test


#: The tests llama.cpp registers but does not implement.
REFUSED_TESTS: dict[str, Callable[..., bool]] = {
    name: _refused_test(name) for name in ("escaped", "filter")
}


def replace(value: Any, old: Any, new: Any, count: Any = None) -> str:
    """value.cpp's string `replace`: every occurrence; a positive count is not implemented."""
    if isinstance(count, int) and count > 0:
        raise not_implemented("String replace with count argument not implemented")
    return str(value).replace(str(old), str(new))


def format_braces(value: Any, *args: Any, **kwargs: Any) -> str:
    """value.cpp's string `format`: each "{}" takes the next argument, nothing else is known.

    The same builtin serves `'{}'.format(x)` and the `format` filter, so `'%s'|format(x)`
    is returned as it is, as llama.cpp does (it has no "{").
    """
    text, out, next_arg = str(value), [], 0
    index = 0
    while index < len(text):
        char = text[index]
        if char != "{":
            out.append(char)
            index += 1
            continue
        if text[index + 1 : index + 2] != "}":
            raise not_implemented("format() only supports simple '{}' placeholders")
        if next_arg >= len(args):
            raise TypeError(
                f"Function 'format' expected at least {next_arg + 2} arguments, got {len(args) + 1}"
            )
        out.append(str(args[next_arg]))
        next_arg += 1
        index += 2
    return "".join(out)


def refuse_filter_mapping(map_filter: Callable[..., Any]) -> Callable[..., Any]:
    """`map` as value.cpp has it: by attribute only; `map('int')` is not implemented."""

    @functools.wraps(map_filter)
    def mapped(context: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise not_implemented("map: filter-mapping not implemented")
        return map_filter(context, value, *args, **kwargs)

    mapped.jinja_pass_arg = map_filter.jinja_pass_arg  # type: ignore[attr-defined]
    return mapped


def install(env: jinja2.Environment) -> None:
    """Put llama.cpp's refusals into `env`'s tests and filters."""
    env.tests.update(REFUSED_TESTS)
    env.filters["replace"] = replace
    env.filters["format"] = format_braces
    env.filters["map"] = refuse_filter_mapping(env.filters["map"])


#: String methods whose llama.cpp builtin differs from Python's `str` method.
STRING_METHODS: dict[str, Callable[..., str]] = {"replace": replace, "format": format_braces}
