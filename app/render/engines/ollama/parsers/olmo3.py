"""Ollama's `olmo3` and `olmo3-think` parsers (model/parsers/olmo3.go, olmo3_think.go
at ollama/ollama fb30760), as streams: `add(chunk, done)` as Ollama's Add.

olmo3: content until `<function_calls>` (a possible start of it held back), the calls
(olmo3_calls) until `</function_calls>` (calls that do not read are dropped), then the
rest of that chunk as content. Its done Add reads nothing: it returns what is left as
content (a call list never closed is lost), so a whole answer is read as Ollama's
runner streams it, the text and then an empty final chunk.
olmo3-think: the prompt opens `<think>`, so the answer is thinking until `</think>`
(unless it continues an assistant prefill), then content; it reads no tool calls.
"""

from __future__ import annotations

import contextlib
from typing import Any

from app.render.engines.ollama.parsers import olmo3_calls
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    overlap_chars,
    read_stream,
    trim_left,
    trim_right,
)
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

OPEN, CLOSE, THINK_CLOSE = "<function_calls>", "</function_calls>", "</think>"
Result = tuple[str, str, list[tuple[str, dict[str, Any]]]]


class Stream:
    """One answer read as Ollama's Olmo3Parser reads it."""

    def __init__(self) -> None:
        """Init: content first."""
        self.buffer, self.state = "", "content"

    def add(self, chunk: str, done: bool) -> Result:
        """Add: (content, thinking, calls) read from this chunk on."""
        self.buffer += chunk
        if done:
            rest, self.buffer = self.buffer, ""
            return (rest if self.state == "content" else ""), "", []
        content, calls, more = "", [], True
        while more and self.buffer:
            text, found, more = getattr(self, f"_{self.state}")()
            content, calls = content + text, calls + found
        return content, "", calls

    def _content(self) -> tuple[str, list, bool]:
        """Content until `<function_calls>`; a possible start of it waits."""
        if OPEN in self.buffer:
            text, self.buffer = self.buffer.split(OPEN, 1)
            self.state = "calls"
            return text, [], True
        end = len(self.buffer) - overlap_chars(self.buffer, OPEN)
        text, self.buffer = self.buffer[:end], self.buffer[end:]
        return text, [], False

    def _calls(self) -> tuple[str, list, bool]:
        """The calls until `</function_calls>` (Ollama logs a list that does not read)."""
        if CLOSE not in self.buffer:
            return "", [], False
        listed, self.buffer = self.buffer.split(CLOSE, 1)
        self.state = "after"
        calls = []
        with contextlib.suppress(ToolCallError):
            calls = olmo3_calls.parse_calls(listed)
        return "", calls, True

    def _after(self) -> tuple[str, list, bool]:
        """After the calls: what is buffered is content, and content follows."""
        text, self.buffer, self.state = self.buffer, "", "content"
        return text, [], False


class ThinkStream:
    """One answer read as Ollama's Olmo3ThinkParser reads it."""

    def __init__(self, last: dict[str, Any] | None = None) -> None:
        """Init: a prefill with text continues as content; else thinking first."""
        prefill = last is not None and last.get("role") == "assistant" and last.get("content")
        self.buffer, self.thinking = "", not prefill

    def add(self, chunk: str, done: bool) -> Result:
        """Add: (content, thinking, no calls); `done` changes nothing."""
        self.buffer += chunk
        thinking = ""
        if self.thinking and THINK_CLOSE in self.buffer:
            before, rest = self.buffer.split(THINK_CLOSE, 1)
            thinking, self.buffer, self.thinking = trim_right(before), trim_left(rest), False
        elif self.thinking:
            thinking, self.buffer = hold_back(self.buffer, THINK_CLOSE)
            return "", thinking, []
        content, self.buffer = self.buffer, ""
        return content, thinking, []


def parse(text: str, tools: Any, think: Any = None) -> OllamaMessage:
    """What Ollama's olmo3 parser reads from a whole answer (then an empty done chunk)."""
    return read_stream(Stream(), [text, ""])


def parse_think(text: str, tools: Any, think: Any = None) -> OllamaMessage:
    """What Ollama's olmo3-think parser reads from a whole answer."""
    return read_stream(ThinkStream(), [text])
