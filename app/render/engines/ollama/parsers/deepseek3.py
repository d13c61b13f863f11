"""Ollama's `deepseek3` parser for DeepSeek-V3.1 (model/parsers/deepseek3.go at
ollama/ollama fb30760).

With `think` on, the answer starts in the thinking until `</think>`; then content,
from which `<｜tool▁output▁begin｜>...<｜tool▁output▁end｜>` is kept as content and
`<｜tool▁calls▁begin｜>` opens the tool calls: each `<｜tool▁call▁begin｜>NAME
<｜tool▁sep｜>JSON<｜tool▁call▁end｜>` (the next such call anywhere in the rest is
taken, as Ollama's search does), until `<｜tool▁calls▁end｜>`. A call whose JSON does
not read is dropped.
"""

from __future__ import annotations

import json
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    trim_left,
    trim_right,
)
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

THINK_CLOSE = "</think>"
CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
OUTPUT_BEGIN, OUTPUT_END = "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"

Events = list[tuple[str, Any]]


def parse_tool_call_content(text: str) -> tuple[str, dict[str, Any]]:
    """`NAME<｜tool▁sep｜>JSON` as (name, arguments); ToolCallError when it does not read."""
    if SEP not in text:
        raise ToolCallError("invalid format")
    name, arguments = text.split(SEP, 1)
    try:
        value = json.loads(arguments.strip(), parse_int=float)
    except ValueError as error:
        raise ToolCallError(str(error)) from None
    if not isinstance(value, dict):
        raise ToolCallError("the arguments are not a JSON object")
    return name.strip(), value


def _thinking(buffer: str, out: Events) -> tuple[str, str]:
    """Thinking until `</think>` (both sides trimmed)."""
    if THINK_CLOSE in buffer:
        thinking, rest = buffer.split(THINK_CLOSE, 1)
        if trim_right(thinking):
            out.append(("thinking", trim_right(thinking)))
        return "content", trim_left(rest)
    sure, held = hold_back(buffer, THINK_CLOSE)
    if sure:
        out.append(("thinking", sure))
    return "", held


def _content(buffer: str, out: Events) -> tuple[str, str]:
    """Content until the tool calls or a tool output (nothing held back)."""
    if CALLS_BEGIN in buffer:
        before, rest = buffer.split(CALLS_BEGIN, 1)
        if trim_right(before):
            out.append(("content", trim_right(before)))
        return "calls", rest
    if OUTPUT_BEGIN in buffer:
        before, rest = buffer.split(OUTPUT_BEGIN, 1)
        if before:
            out.append(("content", before))
        return "output", rest
    out.append(("content", buffer))
    return "", ""


def _calls(buffer: str, out: Events) -> tuple[str, str]:
    """The next call anywhere in the rest, else the end of the calls."""
    at = buffer.find(CALL_BEGIN)
    if at != -1:
        start = at + len(CALL_BEGIN)
        end = buffer.find(CALL_END, start)
        if end != -1:
            try:
                out.append(("call", parse_tool_call_content(buffer[start:end])))
                return "calls", trim_left(buffer[end + len(CALL_END) :])
            except ToolCallError:
                pass  # Ollama drops it and looks for the end of the calls
    if CALLS_END in buffer:
        return "content", trim_left(buffer.split(CALLS_END, 1)[1])
    return "", buffer


def _output(buffer: str, out: Events) -> tuple[str, str]:
    """A tool output, kept as content."""
    if OUTPUT_END not in buffer:
        return "", buffer
    output, rest = buffer.split(OUTPUT_END, 1)
    if output:
        out.append(("content", output))
    return "content", rest


_STATES = {"thinking": _thinking, "content": _content, "calls": _calls, "output": _output}


def events(text: str, thinking: bool) -> Events:
    """The events of a whole answer."""
    out: Events = []
    state, buffer = ("thinking" if thinking else "content"), text
    while buffer:
        following, buffer = _STATES[state](buffer, out)
        if not following:
            break
        state = following
    return out


def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
    """What Ollama's deepseek3 parser reads from a whole answer."""
    found = events(text, gojson.think_bool(think))
    return OllamaMessage(
        content="".join(body for kind, body in found if kind == "content"),
        thinking="".join(body for kind, body in found if kind == "thinking"),
        tool_calls=tuple(call for kind, call in found if kind == "call"),
    )
