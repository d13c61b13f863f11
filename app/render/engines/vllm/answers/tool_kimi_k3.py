"""vLLM's `kimi_k3` tool parser (0.33.0: `KimiK3ToolParser`).

Kimi K3 writes its calls in a `tools` channel after its `response` channel (see
`_xtml`). Each `call` element with a `tool` attribute is a call; each of its `argument`
elements a key, its value taken as written when its `type` is `string` (the default),
else read as JSON (as written when that fails). Anything else in a call (a `json` block)
is ignored. The content is the response channel's text, or the text before the tools
channel without its response markers. vLLM's server (`KimiK3Parser`) takes the content
from this parser even when it finds no call, or when the request has no tools.
"""

from __future__ import annotations

import json

from app.render.answer import ToolCall
from app.render.engines.vllm.answers._xtml import (
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    attributes,
    closer,
    elements,
    opener,
    strip_response,
)
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction, tool_call_id

NAME = "kimi_k3"
TOOLS_OPEN, TOOLS_CLOSE = opener("tools"), closer("tools")


class _Deep(Exception):
    pass


def _arguments(body: str) -> str:
    """The call's `argument` elements as one JSON object."""
    arguments: dict[str, object] = {}
    for attrs, value in elements("argument", body):
        found = attributes(attrs)
        key, kind = found.get("key", ""), found.get("type", "string")
        if kind == "string":
            arguments[key] = value
            continue
        try:
            arguments[key] = json.loads(value)
        except ValueError:
            arguments[key] = value
        except RecursionError:
            raise _Deep from None
    return json.dumps(arguments, ensure_ascii=False)


def _content(text: str, before: str) -> str | None:
    """The response channel's text when one is closed, else `before` unwrapped."""
    start = RESPONSE_OPEN.search(text)
    end = RESPONSE_CLOSE.search(text, start.end()) if start else None
    if start is not None and end is not None:
        return text[start.end() : end.start()] or None
    return strip_response(before) or None


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser kimi_k3`."""
    start = TOOLS_OPEN.search(text)
    if start is None:
        return ToolExtraction(tools_called=False, content=_content(text, text))
    end = TOOLS_CLOSE.search(text, start.end())
    section = text[start.end() : end.start() if end else len(text)]
    calls: list[ToolCall] = []
    try:
        for attrs, body in elements("call", section):
            arguments = _arguments(body)
            name = attributes(attrs).get("tool", "")
            if name:
                calls.append(
                    ToolCall(name=name, arguments=arguments, id=tool_call_id(len(calls), name))
                )
    except _Deep:
        note = (
            "An argument's JSON nests too deeply for Python's json module: vLLM's kimi_k3 "
            "parser gives up on the calls and returns the whole answer as content."
        )
        return ToolExtraction(tools_called=False, content=text, notes=(note,))
    dropped = text.count("<|open|>call") - len(calls)
    notes = (
        (f"vLLM's kimi_k3 parser reads no call from {dropped} `call` element(s) here.",)
        if dropped > 0
        else ()
    )
    return ToolExtraction(
        tools_called=bool(calls),
        tool_calls=tuple(calls),
        content=_content(text, text[: start.start()]),
        notes=notes,
    )
