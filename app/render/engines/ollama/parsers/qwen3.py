"""Ollama's `qwen3` and `qwen3-thinking` parsers (model/parsers/qwen3.go at ollama/ollama
fb30760).

With thinking on (`qwen3-thinking`, unless `think` is false), the answer starts inside
the thinking (the prompt ended with `<think>`; one stray leading `<think>` is dropped)
until `</think>` or a `<tool_call>`; then content, with each `<tool_call>` holding a
JSON object {"name", "arguments"}. `qwen3` never reads thinking.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    split_at_tag,
    trim_left,
)
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"


def _strip_open(buffer: str) -> tuple[str, bool]:
    """(buffer without one leading `<think>`, whether it is still undecided)."""
    trimmed = trim_left(buffer)
    if trimmed.startswith(THINK_OPEN):
        return trim_left(trimmed[len(THINK_OPEN) :]), False
    return buffer, THINK_OPEN.startswith(trimmed)


def _thinking(buffer: str, out: list[tuple[str, str]]) -> tuple[str, str]:
    """Read thinking until `</think>` or a tool call: (the next state, the buffer)."""
    close, tool = buffer.find(THINK_CLOSE), buffer.find(TOOL_OPEN)
    if tool != -1 and (close == -1 or tool < close):
        before, after = split_at_tag(buffer, TOOL_OPEN, True)
        if before:
            out.append(("thinking", before))
        return "tool", after
    if close != -1:
        before, after = split_at_tag(buffer, THINK_CLOSE, True)
        if before:
            out.append(("thinking", before))
        return "content", after
    sure, held = hold_back(buffer, THINK_CLOSE, TOOL_OPEN)
    if sure:
        out.append(("thinking", sure))
    return "", held


def _content(buffer: str, out: list[tuple[str, str]]) -> tuple[str, str]:
    """Read content until a tool call."""
    if TOOL_OPEN in buffer:
        before, after = split_at_tag(buffer, TOOL_OPEN, True)
        if before:
            out.append(("content", before))
        return "tool", after
    sure, held = hold_back(buffer, TOOL_OPEN)
    if sure:
        out.append(("content", sure))
    return "", held


def _tool(buffer: str, out: list[tuple[str, str]]) -> tuple[str, str]:
    """Read a tool call's body until `</tool_call>`."""
    if TOOL_CLOSE not in buffer:
        return "", buffer
    body, after = split_at_tag(buffer, TOOL_CLOSE, True)
    out.append(("call", body))
    return "content", after


_STATES: dict[str, Callable[[str, list[tuple[str, str]]], tuple[str, str]]] = {
    "thinking": _thinking,
    "content": _content,
    "tool": _tool,
}


def events(text: str, thinking: bool) -> list[tuple[str, str]]:
    """The (kind, text) events of a whole answer: thinking, content, call."""
    out: list[tuple[str, str]] = []
    state, buffer = ("thinking" if thinking else "content"), text
    if thinking:
        buffer, undecided = _strip_open(buffer)
        if undecided:
            return out
    while True:
        following, buffer = _STATES[state](buffer, out)
        if not following:
            return out
        state = following


def parse_tool_call(raw: str) -> tuple[str, dict[str, Any]]:
    """A `<tool_call>` body: a JSON object with a non-empty name."""
    try:
        parsed = json.loads(raw)
    except ValueError as error:
        raise ToolCallError(f"failed to parse JSON: {error}") from None
    name = parsed.get("name") if isinstance(parsed, dict) else None
    if not name:
        raise ToolCallError("empty function name")
    return name, parsed.get("arguments") or {}


def make(thinking_support: bool, default_thinking: bool) -> Callable[..., OllamaMessage]:
    """A qwen3 parser: with thinking support or not, and thinking on when `think` is None."""

    def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
        """What Ollama's qwen3 parser reads from a whole answer."""
        enabled = default_thinking if think is None else gojson.think_bool(think)
        found = events(text, thinking_support and enabled)
        return OllamaMessage(
            content="".join(body for kind, body in found if kind == "content"),
            thinking="".join(body for kind, body in found if kind == "thinking"),
            tool_calls=tuple(parse_tool_call(body) for kind, body in found if kind == "call"),
        )

    return parse
