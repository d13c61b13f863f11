"""The request as its caller sends it: the one place tool-call arguments may change form.

Every engine gets the messages as the state holds them: a tool call's `arguments` stays
JSON text when written as text and an object when given as one, so that what a template
or a server does with either form shows (`arguments is string` branches, vLLM refusing
an object, transformers dumping text with `tojson`). Whether a client would send them
otherwise is the state's choice (`RenderRequest.tool_arguments`), the same for every
engine, for the main view, the Diff, the portability matrix and the Response view:

- `as_written`: exactly as given (the default: what a pasted log or API call holds);
- `json_text`: objects written as JSON text, as OpenAI clients send them;
- `objects`: JSON text that holds an object parsed to it, as library callers pass them.

`as_sent` says what it changed, for the Prompt view's note; shaping twice is shaping once.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from app.render.core import RenderRequest

#: The note for each choice, said when it changed a message.
_NOTES = {
    "json_text": "tool-call arguments sent as JSON text, as OpenAI clients send them",
    "objects": "tool-call arguments passed as objects parsed from their JSON text, as "
    "library callers pass them",
}


def as_sent(request: RenderRequest) -> tuple[RenderRequest, list[str]]:
    """`request` with its tool-call arguments in the form its `tool_arguments` names, and
    a sentence on what changed (none when nothing did)."""
    if request.tool_arguments not in _NOTES:
        return request, []
    convert = _as_text if request.tool_arguments == "json_text" else _as_object
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
    note = f"{_NOTES[request.tool_arguments]} ({noun} {which})"
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
