"""A request as an engine's callers send it: the one place tool-call arguments change form.

The page keeps a tool call's `arguments` as the user wrote them: JSON text, as OpenAI
clients send them (or an object, from a pasted body or an API call). Who calls the engine
decides the form the engine gets. The clients of an OpenAI-compatible server send JSON
text (vLLM refuses an object); code that calls a library passes an object, as the
transformers documentation shows its callers doing (a dict, where the OpenAI API has a
JSON string). `engines.render` shapes every request here, so the main
view, the Diff and the portability matrix send the same thing, and the main view says
what changed (`as_callers_send`'s notes).

Both directions are idempotent (text stays text for a server, an object stays an object
for a library), so a request shaped twice is shaped once.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from app.render.core import Engine, RenderRequest


def as_callers_send(engine: Engine, request: RenderRequest) -> tuple[RenderRequest, list[str]]:
    """`request` with its tool-call arguments in the form `engine`'s callers send them,
    and a sentence on what changed (none when nothing did)."""
    convert = _as_text if engine.openai_server else _as_object
    messages, changed = [], []
    for number, message in enumerate(request.messages, 1):
        shaped = _with_arguments(message, convert)
        messages.append(shaped)
        if shaped is not message:
            changed.append(number)
    if not changed:
        return request, []
    which = ", ".join(str(number) for number in changed)
    noun = "message" if len(changed) == 1 else "messages"
    if engine.openai_server:
        note = f"tool-call arguments sent as JSON text, as an OpenAI client does ({noun} {which})"
    else:
        note = (
            "tool-call arguments passed as objects parsed from their JSON text, as "
            f"{engine.name} gets them from its callers ({noun} {which})"
        )
    return replace(request, messages=messages), [note]


def with_text_arguments(message: Any) -> Any:
    """`message` with every tool call's object arguments written as JSON text."""
    return _with_arguments(message, _as_text)


def _with_arguments(message: Any, convert: Any) -> Any:
    """`message` with `convert` applied to each call's arguments; the same object when
    no call changed (the caller counts what did by identity)."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return message
    shaped = [_call_with(call, convert) for call in calls]
    if all(new is old for new, old in zip(shaped, calls, strict=True)):
        return message
    return {**message, "tool_calls": shaped}


def _call_with(call: Any, convert: Any) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or "arguments" not in function:
        return call
    arguments = function["arguments"]
    converted = convert(arguments)
    if converted is arguments:
        return call
    return {**call, "function": {**function, "arguments": converted}}


def _as_text(arguments: Any) -> Any:
    # None is no arguments at all: the server says so in its own words.
    if isinstance(arguments, str) or arguments is None:
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _as_object(arguments: Any) -> Any:
    # Text that is not a JSON object stays as written: no caller could pass it otherwise.
    if not isinstance(arguments, str):
        return arguments
    try:
        parsed = json.loads(arguments)
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        return arguments
    return parsed if isinstance(parsed, dict) else arguments
