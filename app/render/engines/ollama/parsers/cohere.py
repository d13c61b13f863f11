"""Ollama's `cohere` parser (model/parsers/cohere.go at ollama/ollama fb30760), as a
stream: `Stream.add(chunk, done)` as Ollama's Add.

The prompt ends inside `<|START_THINKING|>` when reasoning is on (the default), so the
answer is thinking until `<|END_THINKING|>`; then, between blocks, `<|START_TEXT|>` (or
the older `<|START_RESPONSE|>`) opens content, closed by `<|END_TEXT|>`,
`<|END_RESPONSE|>` or `<|END_OF_TURN_TOKEN|>`; `<|START_ACTION|>` opens a JSON list of
calls `{"tool_call_id", "tool_name", "parameters"}` until `<|END_ACTION|>` (when the
list does not read, each balanced `{...}` is read alone; a truncated list is read at
the end). Other text between blocks is content. An assistant prefill starts in content.
"""

from __future__ import annotations

import json
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    overlap_chars,
    read_stream,
    trailing_space,
    trim_left,
    trim_right,
)

END_THINKING, END_OF_TURN = "<|END_THINKING|>", "<|END_OF_TURN_TOKEN|>"
OPENERS = ("<|START_TEXT|>", "<|START_RESPONSE|>")
CLOSERS = ("<|END_TEXT|>", "<|END_RESPONSE|>", END_OF_TURN)
START_ACTION, END_ACTION = "<|START_ACTION|>", "<|END_ACTION|>"
THINKING, AWAITING, CONTENT, ACTION = "thinking", "awaiting", "content", "action"
Call = tuple[str, dict[str, Any]]


def _call(value: Any) -> Call:
    """A decoded `cohereToolCall` (json.Unmarshal into the struct) as (name, arguments);
    `null` leaves the struct empty."""
    if value is None:
        return "", {}
    if not isinstance(value, dict):
        raise ValueError("a tool call is not a JSON object")
    fields = {key.lower(): item for key, item in value.items()}  # Go matches names so
    name, arguments = fields.get("tool_name"), fields.get("parameters")
    if any(v is not None and not isinstance(v, str) for v in (name, fields.get("tool_call_id"))):
        raise ValueError("tool_name or tool_call_id is not a string")
    if arguments is not None and not isinstance(arguments, dict):
        raise ValueError("parameters is not a JSON object")
    return name or "", arguments or {}


def _decode(text: str) -> Any:
    """json.Unmarshal: Go's JSON only (numbers as floats, no NaN)."""

    def refuse(name: str) -> None:
        raise ValueError(f"invalid character in {name}")

    return json.loads(text, parse_int=float, parse_constant=refuse)


def objects(text: str) -> list[str]:
    """scanJSONObjects: the balanced top-level `{...}` of text, strings skipped."""
    found, depth, start, in_string, escaped = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif ch == "\\" and in_string:
            escaped = True
        elif ch == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif ch == "{":
            start = i if depth == 0 else start
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0 and start >= 0:
                found.append(text[start : i + 1])
                start = -1
    return found


def actions(payload: str) -> list[Call]:
    """parseCohereActions: the list, else each object that reads (others dropped)."""
    payload = trim_left(trim_right(payload))
    if not payload:
        return []
    try:
        listed = _decode(payload)
        if listed is None or isinstance(listed, list):
            return [_call(item) for item in listed or []]
    except ValueError:
        pass
    calls = []
    for text in objects(payload):
        try:
            calls.append(_call(_decode(text)))
        except ValueError:
            continue  # Ollama logs the call it cannot read and goes on
    return calls


class Stream:
    """One answer read as Ollama's CohereParser reads it (Init, then Add per chunk)."""

    def __init__(self, think: Any, last: dict[str, Any] | None = None) -> None:
        """Init: a prefill continues content; else thinking unless `think` is false."""
        self.buffer = ""
        if last is not None and last.get("role") == "assistant" and last.get("content"):
            self.state = CONTENT
        else:
            self.state = THINKING if think is None or gojson.think_bool(think) else AWAITING

    def add(self, chunk: str, done: bool) -> tuple[str, str, list[Call]]:
        """Add: (content, thinking, calls) read from this chunk on."""
        self.buffer += chunk
        content, thinking, calls = "", "", []
        more = True
        while more and self.buffer:
            c, t, found, more = getattr(self, f"_{self.state}")(done)
            content, thinking, calls = content + c, thinking + t, calls + found
        return content, thinking, calls

    def _thinking(self, done: bool) -> tuple[str, str, list[Call], bool]:
        """Thinking until `<|END_THINKING|>`; a possible tag start and trailing space wait."""
        if END_THINKING in self.buffer:
            thinking, self.buffer = self.buffer.split(END_THINKING, 1)
            self.state = AWAITING
            return "", trim_right(thinking), [], True
        end = len(self.buffer) - overlap_chars(self.buffer, END_THINKING)
        end -= trailing_space(self.buffer[:end])
        thinking, self.buffer = self.buffer[:end], self.buffer[end:]
        return "", thinking, [], False

    def _awaiting(self, done: bool) -> tuple[str, str, list[Call], bool]:
        """Between blocks: the next opener, an end of turn skipped, else content."""
        for opener in OPENERS:
            if opener in self.buffer:
                self.buffer, self.state = self.buffer.split(opener, 1)[1], CONTENT
                return "", "", [], True
        if START_ACTION in self.buffer:
            self.buffer, self.state = self.buffer.split(START_ACTION, 1)[1], ACTION
            return "", "", [], True
        trimmed = trim_left(self.buffer)
        if trimmed.startswith(END_OF_TURN):
            self.buffer = trimmed[len(END_OF_TURN) :]
            return "", "", [], True
        if not trimmed:
            self.buffer = "" if done else self.buffer
            return "", "", [], False
        tags = (*OPENERS, START_ACTION, END_OF_TURN)
        if not done and any(len(trimmed) < len(t) and t.startswith(trimmed) for t in tags):
            return "", "", [], False
        self.buffer, self.state = trimmed, CONTENT
        return "", "", [], True

    def _content(self, done: bool) -> tuple[str, str, list[Call], bool]:
        """Content until a closer; a possible closer's start waits (all of it at the end)."""
        for closer in CLOSERS:
            if closer in self.buffer:
                content, self.buffer = self.buffer.split(closer, 1)
                self.state = AWAITING
                return content, "", [], True
        end = len(self.buffer) - max(overlap_chars(self.buffer, closer) for closer in CLOSERS)
        content, self.buffer = self.buffer[:end], self.buffer[end:]
        if done:
            content, self.buffer = content + self.buffer, ""
        return content, "", [], False

    def _action(self, done: bool) -> tuple[str, str, list[Call], bool]:
        """The calls until `<|END_ACTION|>` (what came, at the end of a truncated answer)."""
        if END_ACTION in self.buffer:
            payload, self.buffer = self.buffer.split(END_ACTION, 1)
            self.state = AWAITING
            return "", "", actions(payload), True
        if done:
            payload, self.buffer = self.buffer, ""
            return "", "", actions(payload), False
        return "", "", [], False


def parse_chunks(chunks: list[str], think: Any, last: Any = None) -> OllamaMessage:
    """The chunks added in turn (the last with done), their outputs joined."""
    return read_stream(Stream(think, last), chunks)


def parse(text: str, tools: Any, think: Any = None) -> OllamaMessage:
    """What Ollama's cohere parser reads from a whole answer, then the empty done chunk
    (llama-server's stop message carries no text; see lfm2.make)."""
    return parse_chunks([text, ""], think)
