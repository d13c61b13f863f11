"""Ollama's `qwen3.5` parser (model/parsers/qwen35.go at ollama/ollama fb30760).

Thinking first (unless `think` is false or the answer continues an assistant
prefill), one leading `<think>` dropped, until `</think>`; a `<tool_call>` inside
the thinking ends it there. The content after is read by the qwen3-coder parser
(its XML tool calls typed by the tools' schemas).
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers import qwen3coder
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    overlap_chars,
    split_at_tag,
    trim_left,
)

THINK_OPEN, THINK_CLOSE, TOOL_OPEN = "<think>", "</think>", "<tool_call>"


def _thinking(buffer: str) -> tuple[str, str | None]:
    """(the thinking, the content after it, or None when the answer ends in thinking)."""
    trimmed = trim_left(buffer)
    if trimmed.startswith(THINK_OPEN):
        buffer = trim_left(trimmed[len(THINK_OPEN) :])
    elif THINK_OPEN.startswith(trimmed):
        return "", None
    while True:
        if THINK_CLOSE in buffer:
            return split_at_tag(buffer, THINK_CLOSE, True)
        partial = overlap_chars(buffer, THINK_CLOSE) or overlap_chars(buffer, TOOL_OPEN)
        if partial or TOOL_OPEN not in buffer:
            # What may start a tag, and trailing space, is held back (and so dropped).
            return hold_back(buffer, THINK_CLOSE, TOOL_OPEN)[0], None
        # A tool call inside the thinking ends the thinking there.
        thinking, tooling = split_at_tag(buffer, TOOL_OPEN, True)
        buffer = thinking + THINK_CLOSE + TOOL_OPEN + tooling


def parse_after(
    text: str, tools: list[dict[str, Any]] | None, think: Any, last: dict[str, Any] | None
) -> OllamaMessage:
    """The parse, given the conversation's last message (a prefill starts in content)."""
    enabled = True if think is None else gojson.think_bool(think)
    prefill = last is not None and last.get("role") == "assistant" and bool(last.get("content"))
    thinking, content = ("", text) if not enabled or prefill else _thinking(text)
    found, _held, _inside = qwen3coder.events(content or "")
    return OllamaMessage(
        content="".join(body for kind, body in found if kind == "content"),
        thinking=thinking,
        tool_calls=tuple(
            qwen3coder.parse_tool_call(body, tools) for kind, body in found if kind == "call"
        ),
    )


def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
    """What Ollama's qwen3.5 parser reads from a whole answer."""
    return parse_after(text, tools, think, None)
