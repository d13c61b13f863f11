"""Ollama's tools parser for Go templates (`tools/tools.go` at fb30760), written anew.

Ollama reads tool calls out of a model's streamed text with the tag its template names
(`gotemplate.runner.tool_call_tag`): text before the tag is content; after it, each
complete JSON object that names a tool the request offers (the first offered name found
in the text, the longest at one place) is a call, its arguments the object's `arguments`
(or `parameters`, or the key named like the tool, or JSON text of one), searched through
nested objects and lists; a `{` or `[` tag gives up on tools once other text came first.
`/api/chat` then answers the chunk's content when there is any, else its calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolsParser:
    """One answer's parser state, fed chunk by chunk (`add`)."""

    tag: str
    #: The names of the tools the request offers.
    names: list[str]
    buffer: str = ""
    state: str = "looking"  # "looking" for the tag, "calling", or "done"
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def add(self, text: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
        """The calls completed and the content to send for one more chunk of text."""
        if self.state == "done":
            return [], text
        self.buffer += text
        content = ""
        if self.state == "looking":
            at, found = self._find_tag()
            content, self.buffer = (
                (self.buffer, "") if at == -1 else (self.buffer[:at], self.buffer[at:])
            )
            if self.tag in ("{", "[") and content.strip():
                self.state = "done"
                return [], content + self.buffer
            if not found:
                return [], content
            self.state = "calling"
        calls = []
        while (call := self._next_call()) is not None:
            calls.append(call)
        if self._closed():
            self.state, content, self.buffer = "done", self.buffer, ""
        return calls, content

    def leftover(self) -> str:
        """What Ollama sends at the end when a chunk gave neither content nor calls."""
        if self.calls:
            return ""
        return self.buffer if self.tag in ("{", "[") else ""

    def _find_tag(self) -> tuple[int, bool]:
        """Where the tag starts and whether it is whole (-1: nowhere, not even begun)."""
        at = self.buffer.find(self.tag)
        if at > -1:
            return at, True
        # The buffer may end with the tag's start: keep it back until the next chunk.
        for size in range(min(len(self.buffer), len(self.tag)), 0, -1):
            if self.buffer.endswith(self.tag[:size]):
                return len(self.buffer) - size, False
        return -1, False

    def _next_call(self) -> tuple[str, dict[str, Any]] | None:
        """The next complete call in the buffer, which then starts after it."""
        name, end = _find_tool(self.names, self.buffer)
        if name is None:
            return None
        arguments, last = _find_arguments(name, self.buffer)
        if arguments is None:
            return None
        self.calls.append((name, arguments))
        self.buffer = self.buffer[max(end, last) :]
        return name, arguments

    def _closed(self) -> bool:
        """Whether a `{` or `[` tag's bracket closed (other tags never close)."""
        pairs = {"{": ("{", "}"), "[": ("[", "]")}
        if self.tag not in pairs:
            return False
        opening, closing = pairs[self.tag]
        depth = 0
        for char, quoted in _outside_strings(self.buffer):
            if quoted:
                continue
            if char == opening:
                depth += 1
            elif char == closing:
                depth -= 1
                if depth == 0:
                    return True
        return False


def _outside_strings(text: str) -> list[tuple[str, bool]]:
    """Each character with whether it is inside a JSON string (quotes and escapes count
    as inside), as Ollama's scanners skip them."""
    marked, in_string, escaped = [], False, False
    for char in text:
        if escaped:
            escaped = False
            marked.append((char, True))
        elif char == "\\":
            escaped = True
            marked.append((char, True))
        elif char == '"':
            in_string = not in_string
            marked.append((char, True))
        else:
            marked.append((char, in_string))
    return marked


def _find_tool(names: list[str], buffer: str) -> tuple[str | None, int]:
    """The offered name found first in the buffer (the longest at one place) and where it
    ends; none while the buffer ends with the start of a longer name."""
    if not buffer:
        return None, 0
    longest = max((len(name) for name in names), default=0)
    for size in range(1, min(len(buffer), longest) + 1):
        tail = buffer[-size:]
        if any(len(tail) < len(name) and name.startswith(tail) for name in names):
            return None, 0
    found, start, end = None, -1, -1
    for name in names:
        at = buffer.find(name)
        if at == -1 or (
            start != -1 and (at > start or (at == start and len(name) <= len(found or "")))
        ):
            continue
        found, start, end = name, at, at + len(name)
    return found, (end if found else 0)


def _find_arguments(name: str, buffer: str) -> tuple[dict[str, Any] | None, int]:
    """The arguments in the first complete JSON object of the buffer that holds some, and
    the index of its closing brace."""
    start, depth = -1, 0
    for index, (char, quoted) in enumerate(_outside_strings(buffer)):
        if quoted:
            continue
        if char == "{":
            start = index if depth == 0 else start
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0 and start != -1:
                try:
                    data = json.loads(buffer[start : index + 1])
                except ValueError:
                    start = -1
                    continue
                if isinstance(data, dict):
                    found, matched = _arguments_in(name, data)
                    return (found if matched else data), index
            depth = max(depth, 0)
    return None, 0


def _as_object(value: Any) -> dict[str, Any] | None:
    """An object, or JSON text of one; None for anything else."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _arguments_in(name: str, data: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """Ollama's findObject: the arguments an object holds, and whether it holds a call."""
    if "name" in data:
        for key in ("arguments", "parameters"):
            if (found := _as_object(data.get(key))) is not None:
                return found, True
        return None, True
    if (found := _as_object(data.get(name))) is not None:
        return found, True
    for value in data.values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                found, matched = _arguments_in(name, child)
                if matched:
                    return found, True
    return None, False


def read_tool_calls(
    tag: str, names: list[str], chunks: list[str]
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """What /api/chat answers for the streamed `chunks`: the content it sends and the
    calls it sends (a chunk with content sends its content and drops its calls)."""
    parser = ToolsParser(tag, names)
    content, calls = "", []
    for number, chunk in enumerate(chunks, 1):
        found, text = parser.add(chunk)
        if text:
            content += text
        elif found:
            calls.extend(found)
        elif number == len(chunks):
            content += parser.leftover()  # the last chunk: what the parser still holds
    return content, calls
