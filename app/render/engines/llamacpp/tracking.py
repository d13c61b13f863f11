"""Values that remember how a template used them: llama.cpp's "stats" mode in Python.

llama.cpp's Jinja engine (`common/jinja/runtime.cpp`), when its context has
`is_get_stats` set, marks a value as used when the template looks it up, reads a
member of it or reads it as a member, applies a filter or a test to it, or loops over
it, and records the operation's name ("array_access", "object_access", the filter,
method or `test_is_<name>` test). `common/jinja/caps.cpp` decides the template's
capabilities from these marks. Here the probe inputs are wrapped in `TrackedStr`,
`TrackedList` and `TrackedDict`, and a sandbox whose attribute and item access,
filters and tests mark them renders the template. A variable lookup has no hook in
Python's Jinja, so any operation on the value (printing it, adding, comparing,
measuring or testing its truth) stands in for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import jinja2

from app.render.bounded import generate_bounded
from app.render.engines.llamacpp.jinja import LlamaCppEnvironment, build_llamacpp_environment
from app.render.environment import compile_cache


def _note(value: Any, op: str | None = None) -> None:
    """Mark `value` used (if it is tracked) and record the operation, as mark_used does."""
    stats = getattr(type(value), "_tracked", False) and value.__dict__
    if stats is False:
        return
    stats["_used"] = True
    if op is not None:
        stats.setdefault("_ops", set()).add(op)


def _note_deep(value: Any, op: str) -> None:
    """Mark a value and everything inside it, as tojson's mark_used(value, deep=true)."""
    _note(value, op)
    if isinstance(value, dict):
        for item in dict.values(value):
            _note_deep(item, op)
    elif isinstance(value, list | tuple):
        for item in list.__iter__(value) if isinstance(value, list) else value:
            _note_deep(item, op)


def _plain(value: Any) -> Any:
    """A tracked value as plain JSON data, read without marking anything."""
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in dict.items(value)}
    if isinstance(value, list):
        return [_plain(item) for item in list.__iter__(value)]
    if isinstance(value, str):
        return str.__str__(value)
    return value


def used(value: Any) -> bool:
    """Whether the template touched `value` (llama.cpp's `stats.used`)."""
    return bool(getattr(value, "__dict__", {}).get("_used"))


def has_op(value: Any, op: str) -> bool:
    """Whether the template applied `op` to `value` (llama.cpp's `stats.ops`)."""
    return op in getattr(value, "__dict__", {}).get("_ops", ())


def _marking(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def marked(self: Any, *args: Any, **kwargs: Any) -> Any:
        _note(self)
        return method(self, *args, **kwargs)

    return marked


class TrackedStr(str):
    """A probe string; printing, joining, comparing or measuring it counts as a use."""

    _tracked = True

    __str__ = _marking(str.__str__)
    __add__ = _marking(str.__add__)
    __eq__ = _marking(str.__eq__)
    __ne__ = _marking(str.__ne__)
    __len__ = _marking(str.__len__)
    __contains__ = _marking(str.__contains__)
    __mod__ = _marking(str.__mod__)
    __hash__ = str.__hash__

    def __radd__(self, other: Any) -> Any:
        _note(self)
        if isinstance(other, str):
            return str(other) + str.__str__(self)
        return NotImplemented

    def __iter__(self) -> Iterator[str]:
        # llama.cpp's for loop marks "array_access" and then refuses a string.
        _note(self, "array_access")
        raise TypeError("Expected iterable or object type in for loop: got String")

    def __getitem__(self, key: Any) -> Any:
        _note(self, "array_access" if isinstance(key, int) else "slice")
        return str.__getitem__(self, key)


class TrackedList(list):
    """A probe list; looping over it or indexing it records "array_access"."""

    _tracked = True

    __len__ = _marking(list.__len__)
    __eq__ = _marking(list.__eq__)
    __contains__ = _marking(list.__contains__)
    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[Any]:
        _note(self, "array_access")
        return list.__iter__(self)


class TrackedDict(dict):
    """A probe object; looping over it records "object_access"."""

    _tracked = True

    __len__ = _marking(dict.__len__)
    __eq__ = _marking(dict.__eq__)
    __contains__ = _marking(dict.__contains__)
    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[Any]:
        _note(self, "object_access")
        return dict.__iter__(self)


def track(value: Any) -> Any:
    """A JSON value with every string, list and object wrapped so its uses are recorded."""
    if isinstance(value, dict):
        return TrackedDict({key: track(item) for key, item in value.items()})
    if isinstance(value, list):
        return TrackedList(track(item) for item in value)
    if isinstance(value, str):
        return TrackedStr(value)
    return value


class _TrackingEnvironment(LlamaCppEnvironment):
    """llama.cpp's engine semantics with its member_expression bookkeeping on every access."""

    def getitem(self, obj: Any, argument: Any) -> Any:
        result = super().getitem(obj, argument)
        if isinstance(argument, slice):
            _note(obj, "slice")
        elif isinstance(argument, int):
            _note(obj, "array_access")
        else:
            _note(obj, "object_access")
        if not isinstance(result, jinja2.Undefined):
            _note(result)
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        # `obj.name` first looks for a method called `name` on obj (try_builtin_func),
        # which marks obj and records the name; then the member itself is read.
        _note(obj, attribute)
        result = super().getattr(obj, attribute)
        if not isinstance(result, jinja2.Undefined) and not callable(result):
            _note(obj, "object_access")
            _note(result)
        return result


def _tracked_callable(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """A filter or test that marks its subject, keeping Jinja's pass_context/... flags."""
    passes = getattr(function, "jinja_pass_arg", None)
    skip = 1 if passes is not None else 0

    # tojson and string serialise the whole value: llama.cpp marks it used all the way
    # down, as that filter's use only (its own walk through a list is no array access).
    deep = name in ("tojson", "string")

    @functools.wraps(function)
    def tracked(*args: Any, **kwargs: Any) -> Any:
        if len(args) > skip and deep:
            _note_deep(args[skip], name)
            args = (*args[:skip], _plain(args[skip]), *args[skip + 1 :])
        elif len(args) > skip:
            _note(args[skip], name)
        return function(*args, **kwargs)

    if passes is not None:
        tracked.jinja_pass_arg = passes  # type: ignore[attr-defined]
    return tracked


@functools.lru_cache(maxsize=1)
def tracking_environment() -> _TrackingEnvironment:
    """The llama.cpp environment (same options, filters and globals) in stats mode."""
    env = build_llamacpp_environment(_TrackingEnvironment)
    env.filters = {name: _tracked_callable(name, f) for name, f in env.filters.items()}
    env.tests = {name: _tracked_callable(f"test_is_{name}", f) for name, f in env.tests.items()}
    return env


#: Compile once per process for the probes, keyed by content hash.
_compiled = compile_cache(tracking_environment)


def render_tracked(template: str, variables: dict[str, Any], max_chars: int) -> str | None:
    """The output, or None when the template raised or wrote more than `max_chars`
    (caps.cpp ignores the error)."""
    try:
        return generate_bounded(_compiled(template), variables, max_chars)
    except Exception:
        # caps_try_execute swallows every failure: a failed probe is an answer too.
        return None
