"""TGI's MiniJinja set-up, rebuilt with the `minijinja` Python binding.

TGI (router/src/infer/chat_template.rs) compiles a chat template in a plain
`minijinja::Environment` with three changes: pycompat's unknown-method callback (so
`.strip()`, `.items()`... work), two functions (`raise_exception`, `strftime_now`), and
a few text rewrites of the template. Nothing else: no trim/lstrip blocks, no contrib
filters. The Python binding adds more than that, so this module takes its extras away,
and it hands the template MiniJinja's own values (see `_prelude`), not Python objects.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import minijinja

from app.problems import TemplateProblem, limit_exceeded

#: The text rewrites TGI applies to every template before compiling it, in its order.
TEMPLATE_REWRITES = (
    (
        "messages[0]['content'][0]['text']",
        "messages[0]['content']",
        "template: messages[0]['content'][0]['text'] read as messages[0]['content'] "
        "(TGI's Gemma 3 patch)",
    ),
    ("[::-1]", "|reverse", "template: [::-1] replaced by |reverse (TGI's Qwen3 patch)"),
    ("{% generation %}", "", "template: {% generation %} removed"),
    ("{% endgeneration %}", "", "template: {% endgeneration %} removed"),
)

#: What the binding registers that TGI's environment does not have: minijinja-contrib's
#: filters and globals (TGI only takes its pycompat callback), the `urlencode` filter (a
#: crate feature TGI leaves off) and the `d` alias of `default` (added in MiniJinja 2.9).
BINDING_EXTRA_FILTERS = ("pluralize", "filesizeformat", "truncate", "striptags", "urlencode", "d")
BINDING_EXTRA_GLOBALS = ("cycler", "joiner")

#: MiniJinja instructions a render may run per second of `cpu_seconds`: about 15 million
#: run in a second on a slow core, so fuel usually stops a runaway loop, with a clear
#: error, before the worker's CPU limit kills it.
FUEL_PER_CPU_SECOND = 10_000_000


def rewritten(template: str) -> tuple[str, list[str]]:
    """The template TGI compiles, and a sentence for each rewrite that changed it."""
    applied = []
    for old, new, sentence in TEMPLATE_REWRITES:
        if old in template:
            template = template.replace(old, new)
            applied.append(sentence)
    return template, applied


def reads_tools(template: str) -> bool:
    """Whether `tools` is among the template's undeclared variables, as TGI checks to
    decide whether to write the tools into the last message itself."""
    try:
        names = minijinja.Environment().undeclared_variables_in_str(template, nested=True)
    except minijinja.TemplateError as error:
        raise _problem(error) from None
    return "tools" in names


def environment(now: datetime | None, cpu_seconds: float) -> minijinja.Environment:
    """A MiniJinja environment set up as TGI sets up its own."""
    env = minijinja.Environment()
    env.pycompat = True
    env.debug = False  # TGI's release build carries no debug info in its errors
    for name in BINDING_EXTRA_FILTERS:
        env.remove_filter(name)
    for name in BINDING_EXTRA_GLOBALS:
        env.remove_global(name)
    env.add_function("raise_exception", _raise_exception)
    env.add_function("strftime_now", lambda format: (now or datetime.now()).strftime(format))
    env.fuel = int(cpu_seconds * FUEL_PER_CPU_SECOND)
    return env


class RaisedException(Exception):
    """What `raise_exception(text)` raises: TGI answers with the template's text."""


def _raise_exception(text: Any) -> None:
    if not isinstance(text, str):
        raise TypeError("raise_exception takes a string")  # TGI's Rust signature
    raise RaisedException(text)


def render(env: minijinja.Environment, template: str, context: dict[str, Any]) -> str:
    """Render with `context` as MiniJinja values; raises `TemplateProblem`."""
    simple = {k: v for k, v in context.items() if not isinstance(v, list | dict)}
    built = {k: v for k, v in context.items() if isinstance(v, list | dict)}
    try:
        return env.render_str(_prelude(built) + template, **simple)
    except minijinja.TemplateError as error:
        raise _problem(error) from None


def _prelude(values: dict[str, Any]) -> str:
    """`{% set name = literal %}` for each list or map, all on the template's first line.

    The binding wraps a Python dict or list as a Python object whose methods are Python's
    (`messages.append` would run); TGI serialises its inputs into MiniJinja's own maps and
    lists. Literals compiled by MiniJinja are those values, and keep the template's lines.
    """
    return "".join(f"{{% set {name} = {_literal(value)} %}}" for name, value in values.items())


def _literal(value: Any) -> str:
    """A MiniJinja expression for JSON-like data of strings, booleans and none."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"TGI passes no {type(value).__name__} to a template")


def _problem(error: minijinja.TemplateError) -> TemplateProblem:
    """A MiniJinja error as a problem with its kind, its message and its line."""
    if "ran out of fuel" in (error.detail or error.message or ""):
        return limit_exceeded(
            "cpu_seconds", "The template ran out of MiniJinja fuel (its CPU allowance).", error.line
        )
    return TemplateProblem(error.kind or "TemplateError", error.detail or error.message, error.line)
