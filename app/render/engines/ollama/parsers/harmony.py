"""Ollama's `harmony` parser for gpt-oss (harmony/harmonyparser.go at ollama/ollama
fb30760).

Ollama reads Harmony with its own text splitter, not with openai-harmony's token
parser (app/render/harmony.py, which the vLLM engine uses). Where they differ:
messages are split on the text of `<|start|>`, `<|message|>` and `<|end|>` only (an
answer stops at `<|call|>` or `<|return|>`, so those are never read); the header's
first word is the role (`to=X` there makes the role "tool"), `<|channel|>` names the
channel up to a space, and `to=` is read from the first or second word; nothing is
refused (no HarmonyError): text outside a message is dropped and an unfinished
message's text is kept. The answer starts in an implicit `<|start|>assistant`.
Content in the analysis channel is thinking, in commentary or final content; a
header with a recipient makes the message's text a tool call's arguments: one call
per answer, named by the last such recipient (`functions.` dropped, the name mapped
back from its Harmony-safe form), whose JSON arguments are read at the end.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from app.render.engines.ollama.parsers.message import OllamaMessage, is_space, overlap_chars
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

START, MESSAGE, END = "<|start|>", "<|message|>", "<|end|>"
CHANNEL, CONSTRAIN = "<|channel|>", "<|constrain|>"
#: Built-in tool names gpt-oss knows, kept as they are.
BUILT_INS = ("browser.open", "browser.search", "browser.find", "python")

Event = tuple[str, ...]


def parse_header(raw: str) -> tuple[str, str, str]:
    """A header's (role, channel, recipient)."""
    role = channel = recipient = ""
    if CONSTRAIN in raw:
        raw = raw.replace(CONSTRAIN, " " + CONSTRAIN, 1).strip()
    at = raw.find(CHANNEL)
    if at != -1:
        after = raw[at + len(CHANNEL) :]
        end = next((i for i, ch in enumerate(after) if is_space(ch)), len(after))
        channel = after[:end]
        raw = (raw[:at] + after[end:]).strip()
    words = raw.split()
    if not words:
        return role, channel, recipient
    if words[0].startswith("to="):
        role, recipient = "tool", words[0][3:]
    else:
        role = words[0]
    if not recipient and len(words) > 1 and words[1].startswith("to="):
        recipient = words[1][3:]
    return role, channel, recipient


class Splitter:
    """Ollama's HarmonyParser: text in, message events out (start, header, content, end)."""

    def __init__(self) -> None:
        """Looking for a message's start, with nothing read."""
        self.state, self.buffer = "start", ""

    def add_implicit_start(self) -> None:
        """The prompt ended in `<|start|>assistant`: the answer goes on from there."""
        self.buffer += START + "assistant"

    def add(self, text: str) -> list[Event]:
        """The events the text completes."""
        self.buffer += text
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def _step(self, events: list[Event]) -> bool:
        """One step; whether to go on."""
        if self.state == "start":
            if START not in self.buffer:
                return False
            self.buffer = self.buffer.split(START, 1)[1]
            self.state = "header"
            events.append(("start",))
            return True
        if self.state == "header":
            if MESSAGE not in self.buffer:
                return False
            header, self.buffer = self.buffer.split(MESSAGE, 1)
            self.state = "content"
            events.append(("header", *parse_header(header)))
            return True
        if END in self.buffer:
            content, self.buffer = self.buffer.split(END, 1)
            self.state = "start"
            events.extend([("content", content)] if content else [])
            events.append(("end",))
            return True
        keep = overlap_chars(self.buffer, END)
        content = self.buffer[: len(self.buffer) - keep]
        self.buffer = self.buffer[len(self.buffer) - keep :]
        if content:
            events.append(("content", content))
        return False


def valid_chars(name: str) -> str:
    """A function name in the characters Harmony allows (letters, digits, _ and $)."""
    out = []
    for ch in name:
        if ch in " -.":
            out.append("_")
        elif ch in "_$" or unicodedata.category(ch)[0] == "L" or unicodedata.category(ch) == "Nd":
            out.append(ch)  # Go's unicode.IsLetter, unicode.IsDigit
    candidate = "".join(out)
    if not candidate:
        return "unnamed"
    # Go tests the first byte as a rune: only an ASCII digit counts.
    return "_" + candidate if candidate[0] in "0123456789" else candidate


class FunctionNames:
    """The tools' names as gpt-oss sees them, and back."""

    def __init__(self) -> None:
        """No names yet."""
        self.to_harmony: dict[str, str] = {}
        self.to_user: dict[str, str] = {}

    def add(self, name: str) -> str:
        """The Harmony name for a tool (numbered when taken), remembered both ways."""
        base = valid_chars(name)
        candidate, count = base, 2
        while candidate in self.to_user:
            candidate, count = f"{base}_{count}", count + 1
        if name in BUILT_INS:
            candidate = name
        self.to_harmony[name], self.to_user[candidate] = candidate, name
        return candidate

    def original(self, harmony_name: str) -> str:
        """The user's name of a Harmony name (itself when unknown)."""
        return self.to_user.get(harmony_name, harmony_name)


def _sort(events: list[Event]) -> tuple[str, str, str, str | None]:
    """(content, thinking, tool text, tool name) of the events, as Ollama routes them."""
    content, thinking, tool_text = [], [], []
    state, name = "normal", None
    for event in events:
        if event[0] == "header":
            _role, channel, recipient = event[1:]
            if channel in ("analysis", "commentary") and recipient:
                state, name = "tool", recipient
            elif channel == "analysis":
                state = "thinking"
            elif channel in ("commentary", "final"):
                state = "normal"
        elif event[0] == "content":
            {"normal": content, "thinking": thinking, "tool": tool_text}[state].append(event[1])
        elif event[0] == "end":
            state = "normal"
    return "".join(content), "".join(thinking), "".join(tool_text), name


def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
    """What Ollama's harmony parser reads from a whole gpt-oss answer."""
    names = FunctionNames()
    for tool in tools or []:
        if tool.get("function", {}).get("name"):
            names.add(tool["function"]["name"])
    splitter = Splitter()
    splitter.add_implicit_start()
    content, thinking, raw, name = _sort(splitter.add(text))
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    if name is not None:
        try:
            arguments = json.loads(raw, parse_int=float)
        except ValueError as error:
            raise ToolCallError(f"error parsing tool call: raw='{raw}', err={error}") from None
        if not isinstance(arguments, dict):
            raise ToolCallError(f"error parsing tool call: raw='{raw}' is not an object")
        calls = ((names.original(name.removeprefix("functions.")), arguments),)
    return OllamaMessage(content=content, thinking=thinking, tool_calls=calls)
