"""Ollama's `lfm2` and `lfm2-thinking` parsers (model/parsers/lfm2.go at ollama/ollama
fb30760), as a stream: `Stream.add(chunk, done)` as Ollama's Add.

With thinking (lfm2-thinking and `think` on, unless the answer continues an assistant
prefill), an answer that starts (after space) with `<think>` is thinking until
`</think>`; any other start is a direct answer. Content until `<|tool_call_start|>`;
the calls (lfm2_calls) until `<|tool_call_end|>`, another `<|tool_call_start|>` right
after continuing them. At the end, when the request has tools and no call was read,
the whole content is tried as bare calls (kept if every name is one of the tools').
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers import lfm2_calls
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    read_stream,
    trim_left,
    trim_right,
)
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = lfm2_calls.CALL_OPEN, lfm2_calls.CALL_CLOSE
LOOKING, THINKING, CONTENT, CALLS = "looking", "thinking", "content", "calls"
Call = tuple[str, dict[str, Any]]


class Stream:
    """One answer read as Ollama's LFM2Parser reads it (Init, then Add per chunk)."""

    def __init__(
        self, thinking_support: bool, tools: Any, think: Any, last: dict[str, Any] | None = None
    ) -> None:
        """Init: the start state from the model, the request's think and last message."""
        self.names = {
            t["function"]["name"] for t in tools or [] if t.get("function", {}).get("name")
        }
        self.has_tools, self.buffer = bool(tools), ""
        self.trim_thinking = self.trim_content = False
        prefill = last is not None and last.get("role") == "assistant" and last.get("content")
        thinking = thinking_support and gojson.think_bool(think)
        # A prefill with text continues it: the answer is content from the start.
        self.state = LOOKING if thinking and not prefill else CONTENT

    def add(self, chunk: str, done: bool) -> tuple[str, str, list[Call]]:
        """Add: (content, thinking, calls) read from this chunk on."""
        self.buffer += chunk
        if done and self.state == LOOKING and not trim_left(self.buffer).startswith(THINK_OPEN):
            self.buffer, self.state = trim_left(self.buffer), CONTENT
        events: list[tuple[str, Any]] = []
        while self._eat(events):
            pass
        content = "".join(v for kind, v in events if kind == CONTENT)
        thinking = "".join(v for kind, v in events if kind == THINKING)
        calls = [v for kind, v in events if kind == CALLS]
        if done and not calls and self.has_tools:
            with contextlib.suppress(ToolCallError):
                bare = lfm2_calls.parse_calls(content)
                if not self.names or all(name in self.names for name, _ in bare):
                    content, calls = "", bare
        return content, thinking, calls

    def _eat(self, events: list[tuple[str, Any]]) -> bool:
        """One step of the state machine; whether to go on."""
        if not self.buffer:
            return False
        return getattr(self, f"_{self.state}")(events)

    def _looking(self, events: list[tuple[str, Any]]) -> bool:
        """Before the first word: `<think>` starts thinking, anything else content."""
        trimmed = trim_left(self.buffer)
        if trimmed.startswith(THINK_OPEN):
            self.buffer, self.state = trimmed[len(THINK_OPEN) :], THINKING
            self.trim_thinking = True
            return True
        if trimmed == "" or THINK_OPEN.startswith(trimmed):
            return False  # space only, or what may become `<think>`
        self.buffer, self.state = trimmed, CONTENT
        return True

    def _thinking(self, events: list[tuple[str, Any]]) -> bool:
        """Thinking until `</think>`; a possible tag start and trailing space held back."""
        if self.buffer.startswith(THINK_OPEN):
            self.buffer, self.trim_thinking = self.buffer[len(THINK_OPEN) :], True
        if self.trim_thinking:
            self.buffer = trim_left(self.buffer)
            self.trim_thinking = not self.buffer
        if THINK_CLOSE in self.buffer:
            thinking, rest = self.buffer.split(THINK_CLOSE, 1)
            self.buffer, self.state = trim_left(rest), CONTENT
            self.trim_thinking, self.trim_content = False, not self.buffer
            if trim_right(thinking):
                events.append((THINKING, trim_right(thinking)))
            return True
        sure, self.buffer = hold_back(self.buffer, THINK_CLOSE)
        if sure:
            events.append((THINKING, sure))
        return False

    def _content(self, events: list[tuple[str, Any]]) -> bool:
        """Content until `<|tool_call_start|>` (all of it at once otherwise)."""
        if self.trim_content:
            self.buffer = trim_left(self.buffer)
            self.trim_content = not self.buffer
        if CALL_OPEN in self.buffer:
            before, self.buffer = self.buffer.split(CALL_OPEN, 1)
            self.state = CALLS
            if trim_right(before):
                events.append((CONTENT, trim_right(before)))
            return True
        if self.buffer:
            events.append((CONTENT, self.buffer))
        self.buffer = ""
        return False

    def _calls(self, events: list[tuple[str, Any]]) -> bool:
        """The calls until `<|tool_call_end|>` (a call that does not read waits)."""
        if CALL_CLOSE not in self.buffer:
            return False
        at = self.buffer.index(CALL_CLOSE)
        try:
            calls = lfm2_calls.parse_calls(self.buffer[:at])
        except ToolCallError:
            return False  # Ollama logs it and waits for more
        rest = self.buffer[at + len(CALL_CLOSE) :]
        if rest.startswith(CALL_OPEN):
            rest = rest[len(CALL_OPEN) :]
        else:
            rest, self.state = trim_left(rest), CONTENT
        self.buffer = rest
        events.extend((CALLS, call) for call in calls)
        return True


def parse_chunks(
    chunks: list[str], thinking_support: bool, tools: Any, think: Any, last: Any = None
) -> OllamaMessage:
    """The chunks added in turn (the last with done), their outputs joined."""
    return read_stream(Stream(thinking_support, tools, think, last), chunks)


def make(thinking_support: bool) -> Callable[..., OllamaMessage]:
    """The parser for PARSERS: a whole answer, then the empty done chunk."""

    def parse(text: str, tools: Any, think: Any = None) -> OllamaMessage:
        """What Ollama's lfm2 parser reads from a whole answer. The text comes before the
        done chunk, which is empty (llm/llama_server.go passes the stop message's content,
        and llama-server's stop message carries none): so the bare-call reading, which
        looks only at what the done chunk adds, does not run."""
        return parse_chunks([text, ""], thinking_support, tools, think)

    return parse
