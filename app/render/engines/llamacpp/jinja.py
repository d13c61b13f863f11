"""The sandboxed Jinja environment with the semantics of llama.cpp's own Jinja engine.

Since build b7756 llama.cpp renders chat templates with its own engine
(`common/jinja/`: lexer, parser, runtime.cpp, value.cpp) rather than Python's Jinja.
Templates written for transformers mostly render the same, but a few behaviours
differ systematically, and those are reproduced here on top of our sandbox:

- an undefined value is lenient: reading a member of it gives undefined again and
  `undefined + "text"` / `none + "text"` give the text (runtime.cpp's
  member_expression and binary_expression's "concat null with string" workaround);
- `default` also replaces none, not only undefined (value.cpp `default_value`);
- `tojson` is value.cpp's: `sort_keys=true` is refused, everything else as
  Python's `json.dumps` (same separators, same escaping, no HTML escaping);
- `split()` without a separator splits on single spaces (value.cpp: "FIXME");
- `map`, `select`, `reject`, `selectattr` and `rejectattr` give lists, not generators;
- arrays have the mutating `append` and `pop` (value.cpp's array builtins);
- `safe` returns the plain text: nothing is ever HTML-escaped;
- `raise_exception` prefixes its message with "Jinja Exception: ";
- a printed value is written as runtime.cpp writes it: a list's items one after
  another, none, undefined and mappings as nothing, floats as value.cpp spells them;
  the `sameas` test and `min`/`max` (also by attribute) follow value.cpp (`values`);
- the builtins value.cpp lacks or implements in part are refused as it refuses them
  (`refusals`: the `escaped` and `filter` tests, `replace` with a count, `format`
  beyond "{}", `map` through a filter).

`oracles/llamacpp/constructs.json` records each of these as llama.cpp's own library
answers it at the engine's build; the tests render the same templates here.

Everything else (filters, globals, sandbox rules) is our transformers environment.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import Any

import jinja2
import jinja2.ext
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.render.engines.llamacpp import refusals, values
from app.render.environment import GenerationTracker, build_environment, compile_cache


class LlamaCppUndefined(jinja2.Undefined):
    """runtime.cpp's value_undefined: members of it are undefined, + text is the text."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        return self

    def __getitem__(self, key: Any) -> LlamaCppUndefined:
        return self

    def __add__(self, other: Any) -> Any:
        if isinstance(other, str):
            return other
        return self._fail_with_undefined_error()

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, str):
            return other
        return self._fail_with_undefined_error()


class LlamaCppEnvironment(ImmutableSandboxedEnvironment):
    """Our sandbox, with `+` routed through llama.cpp's rules for none and undefined."""

    intercepted_binops = frozenset({"+"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        # binary_expression: when one side is none/undefined and the other a string,
        # the missing side counts as "" (the "concat null with string" workaround).
        if operator == "+":
            if left is None and isinstance(right, str):
                return right
            if right is None and isinstance(left, str):
                return left
        return super().call_binop(context, operator, left, right)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # value.cpp gives arrays `append` and `pop`, which the immutable sandbox refuses.
        if isinstance(obj, list) and attr in ("append", "pop"):
            return True
        return super().is_safe_attribute(obj, attr, value)

    def getattr(self, obj: Any, attribute: str) -> Any:
        # value.cpp's string methods are its filters: `split` has its own default separator
        # (see `_split`), `replace` and `format` refuse what it does not implement.
        if attribute == "split" and isinstance(obj, str):
            return functools.partial(_split, obj)
        if attribute in refusals.STRING_METHODS and isinstance(obj, str):
            return functools.partial(refusals.STRING_METHODS[attribute], obj)
        return super().getattr(obj, attribute)


def _raise_exception(message: str) -> None:
    """value.cpp's raise_exception: the message, prefixed as llama.cpp prints it."""
    raise TemplateError(f"Jinja Exception: {message}")


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | list[str] | None = None,
    sort_keys: bool = False,
) -> str:
    """value.cpp's tojson: json.dumps' layout, but sort_keys is not implemented there."""
    if sort_keys:
        raise NotImplementedError("NotImplemented: tojson sort_keys=true not implemented")
    if separators is not None:
        separators = (separators[0], separators[1])
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        default=_json_fallback,
    )


def _json_fallback(value: Any) -> Any:
    """value_to_json: undefined is null; what a filter produced lazily is a list."""
    if isinstance(value, jinja2.Undefined):
        return None
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _listing(function: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose (lazy) result is made a list, as value.cpp's array filters return."""

    @functools.wraps(function)
    def listed(*args: Any, **kwargs: Any) -> Any:
        return list(function(*args, **kwargs))

    passes = getattr(function, "jinja_pass_arg", None)
    if passes is not None:
        listed.jinja_pass_arg = passes  # type: ignore[attr-defined]
    return listed


def _safe(value: Any) -> str:
    """value.cpp's `safe`: the text itself (there is no markup escaping to turn off)."""
    return value if isinstance(value, str) else str(value)


def _default(value: Any, default_value: Any = "", boolean: bool = False) -> Any:
    """value.cpp's default_value: none counts as missing too."""
    if boolean:
        return value if value else default_value
    if value is None or isinstance(value, jinja2.Undefined):
        return default_value
    return value


def _split(value: Any, separator: str | None = None, maxsplit: int = -1) -> list[str]:
    """value.cpp's split: without a separator it splits on " ", keeping empty parts."""
    return str.split(value, " " if separator is None else separator, maxsplit)


def build_llamacpp_environment(
    environment_class: type[LlamaCppEnvironment] = LlamaCppEnvironment,
) -> LlamaCppEnvironment:
    """A fresh environment: our filters and globals with llama.cpp's differences."""
    base = build_environment()
    env = environment_class(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTracker, jinja2.ext.loopcontrols],
        undefined=LlamaCppUndefined,
    )
    env.filters.update(base.filters)
    env.globals.update(base.globals)
    env.filters["tojson"] = _tojson
    refusals.install(env)
    values.install(env)
    for name in ("map", "select", "reject", "selectattr", "rejectattr"):
        env.filters[name] = _listing(env.filters[name])
    env.filters["default"] = env.filters["d"] = _default
    env.filters["safe"] = _safe
    env.globals["raise_exception"] = _raise_exception
    return env


@functools.lru_cache(maxsize=1)
def llamacpp_environment() -> LlamaCppEnvironment:
    """One environment per process; built on first use, never at import."""
    return build_llamacpp_environment()


#: Compile once per process for the llama.cpp engine, keyed by content hash.
compile_llamacpp = compile_cache(llamacpp_environment)
