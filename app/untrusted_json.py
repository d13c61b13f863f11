"""JSON from visitors: parsed with bounds on nesting, numbers and non-JSON constants.

Python's `json` accepts what RFC 8259 does not (`NaN`, `Infinity`), turns `1e400` into
an infinity that no JSON writer can write back, refuses integers over 4,300 digits with
a bare ValueError, and fails with RecursionError about 1,000 levels down. Deeply nested
values also break every later step that recurses (pickling a task for a worker, Jinja's
`tojson`, storing a share). So every body a visitor sends is read here: a too-deep value
is refused with the path to where it goes too deep, before any other work.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: Nesting depth a body may have when no limit is given (`PLAYGROUND_JSON_DEPTH`).
DEFAULT_MAX_DEPTH = 64
#: Steps of a path shown in an error (the rest is elided): enough to find the place.
_PATH_STEPS = 6
#: A JSON string (skipped whole) or a bracket.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_CLOSERS = {"[": "]", "{": "}"}


class JSONRefused(ValueError):
    """A text that is not acceptable JSON; `path` locates a too-deep value, if that is why.

    `message` completes "The request body is ...": "not valid JSON: ... (line 1, column 9)".
    """

    def __init__(self, message: str, path: str | None = None, too_deep: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.too_deep = too_deep


def _no_constant(name: str) -> Any:
    raise JSONRefused(f"not JSON: {name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONRefused(f"not acceptable JSON: the number {text[:40]} is out of range")
    return value


def loads(text: str | bytes, max_depth: int = DEFAULT_MAX_DEPTH, where: str = "") -> Any:
    """Parse `text`; raise `JSONRefused` saying what is wrong, and where.

    `where` prefixes paths in messages (a form field's name, say).
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JSONRefused(f"not UTF-8 text (byte {error.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except JSONRefused:
        raise
    except RecursionError:
        value = _cut_below(text, max_depth)
    except json.JSONDecodeError as error:
        raise JSONRefused(
            f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    except ValueError as error:  # an integer over Python's 4,300-digit conversion limit
        raise JSONRefused(f"not acceptable JSON: {error}") from None
    check_depth(value, max_depth, where)
    return value


def _containers(value: Any) -> list[Any]:
    if type(value) is dict:
        return [v for v in value.values() if type(v) in (dict, list)]
    return [v for v in value if type(v) in (dict, list)]


def nesting_depth(value: Any, stop_after: int | None = None) -> int:
    """How many containers deep `value` goes (a scalar is 0, `[]` is 1).

    Level by level, without recursion; stops counting past `stop_after`.
    """
    level = [value] if type(value) in (dict, list) else []
    depth = 0
    while level:
        depth += 1
        if stop_after is not None and depth > stop_after:
            break
        level = [child for container in level for child in _containers(container)]
    return depth


def check_depth(value: Any, max_depth: int, where: str = "") -> None:
    """Raise `JSONRefused` with the path to the first place deeper than `max_depth`."""
    if nesting_depth(value, stop_after=max_depth) <= max_depth:
        return
    path = _deep_path(value, max_depth)
    shown = (where or "") + path
    field = shown.lstrip(".") or None
    raise JSONRefused(
        f"nested more than {max_depth} levels deep (at {field or 'the top'})",
        field,
        too_deep=True,
    )


def _cut_below(text: str, max_depth: int) -> Any:
    """`text` cut where it first nests past `max_depth`, so that it parses.

    Only for texts too deep for `json.loads` itself: what is kept has the original keys
    and indices, so `check_depth` can still say where the text goes too deep.
    """
    opened: list[str] = []
    for match in _STRING_OR_BRACKET.finditer(text):
        bracket = match.group()
        if bracket in _CLOSERS:
            opened.append(_CLOSERS[bracket])
            if len(opened) > max_depth + 1:
                closers = "".join(reversed(opened[:-1]))
                kept = text[: match.start()].rstrip()
                filler = "" if kept.endswith(("[", "{")) else "null"
                try:
                    return json.loads(kept + filler + closers)
                except ValueError:
                    break
        elif bracket in ("]", "}") and opened:
            opened.pop()
    raise JSONRefused(f"nested more than {max_depth} levels deep", too_deep=True)


def _deep_path(value: Any, max_depth: int) -> str:
    """The path (`.messages[0].content[0]...`) down to a container past `max_depth`.

    A depth-first walk with a stack of iterators (no recursion: the value is too deep
    for it), visiting each container once.
    """
    keys: list[Any] = []
    iterators = [_children(value)]
    while iterators and len(iterators) <= max_depth:
        for key, child in iterators[-1]:
            if type(child) in (dict, list):
                keys.append(key)
                iterators.append(_children(child))
                break
        else:
            iterators.pop()
            if keys:
                keys.pop()
    steps = [f".{key}" if isinstance(key, str) else f"[{key}]" for key in keys]
    if len(steps) > _PATH_STEPS:
        steps = [*steps[:_PATH_STEPS], "…"]
    return "".join(steps)


def _children(container: Any) -> Any:
    return iter(container.items()) if type(container) is dict else enumerate(container)
