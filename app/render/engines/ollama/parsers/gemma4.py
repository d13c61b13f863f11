"""Ollama's `gemma4` and `gemma4-no-thinking` parsers (model/parsers/gemma4.go at
ollama/ollama fb30760).

Content until `<|channel>` (thinking, its `thought\\n` name dropped, until
`<channel|>`; kept only when thinking is on) or `<|tool_call>` (`call:NAME{args}`
until `<tool_call|>`, the arguments read by gemma4_args; a call that does not read is
dropped); stray `<tool_call|>` and `<|tool_response>` right after a call are skipped.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers import gemma4_args as args
from app.render.engines.ollama.parsers.message import OllamaMessage, trim_left, trim_right
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError

THINK_OPEN, THINK_CLOSE = "<|channel>", "<channel|>"
CALL_OPEN, CALL_CLOSE, RESPONSE = "<|tool_call>", "<tool_call|>", "<|tool_response>"

Events = list[tuple[str, Any]]


def _decode(text: str) -> dict[str, Any]:
    """json.Unmarshal into api.ToolCallFunctionArguments: an object, Go's JSON only."""

    def refuse(name: str) -> None:
        raise ValueError(f"invalid character in {name}")

    value = json.loads(text, parse_int=float, parse_constant=refuse)
    if not isinstance(value, dict):
        raise ValueError("the arguments are not a JSON object")
    return value


def parse_tool_call(content: str, tools: list[dict[str, Any]] | None) -> tuple[str, dict]:
    """`call:NAME{...}` as (name, arguments), repairing the arguments if need be."""
    if not content.startswith("call:"):
        raise ToolCallError("expected 'call:' prefix")
    content = content[len("call:") :]
    brace = content.find("{")
    if brace == -1:
        raise ToolCallError("expected '{' in tool call")
    name, raw = content[:brace].strip(), content[brace:]
    try:
        return name, _decode(args.args_to_json(raw))
    except ValueError as error:
        for candidate in args.repair_candidates(raw, name, tools or []):
            try:
                return name, _decode(args.args_to_json(candidate))
            except ValueError:
                continue
        raise ToolCallError(f"{error}\nrepair failed to produce valid JSON arguments") from None


def _content(buffer: str, out: Events, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """Content until the first thinking or tool-call tag (all of it at the end)."""
    think, call = buffer.find(THINK_OPEN), buffer.find(CALL_OPEN)
    if think != -1 or call != -1:
        at, tag, state = (think, THINK_OPEN, "name") if think != -1 else (call, CALL_OPEN, "call")
        if trim_right(buffer[:at]):
            out.append(("content", trim_right(buffer[:at])))
        return state, buffer[at + len(tag) :]
    out.append(("content", buffer))
    return "", ""


def _name(buffer: str, out: Events, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """Just inside `<|channel>`: drop the channel's name `thought\\n`."""
    return "thinking", buffer.removeprefix("thought\n")


def _thinking(buffer: str, out: Events, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """Thinking until `<channel|>` (all of it at the end)."""
    if THINK_CLOSE in buffer:
        thinking, rest = buffer.split(THINK_CLOSE, 1)
        if trim_right(thinking):
            out.append(("thinking", trim_right(thinking)))
        return "content", trim_left(rest)
    out.append(("thinking", buffer))
    return "", ""


def _call(buffer: str, out: Events, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """A call until `<tool_call|>` (or the end); a call that does not read is dropped."""
    body, closed, rest = buffer.partition(CALL_CLOSE)
    with contextlib.suppress(ToolCallError):
        out.append(("call", parse_tool_call(body, tools)))
    return ("noise", trim_left(rest)) if closed else ("", "")


def _noise(buffer: str, out: Events, tools: list[dict[str, Any]]) -> tuple[str, str]:
    """Skip the close and response tags a model repeats after a call."""
    buffer = trim_left(buffer)
    while buffer.startswith((CALL_CLOSE, RESPONSE)):
        tag = CALL_CLOSE if buffer.startswith(CALL_CLOSE) else RESPONSE
        buffer = trim_left(buffer[len(tag) :])
    if not buffer or CALL_CLOSE.startswith(buffer) or RESPONSE.startswith(buffer):
        return "", ""
    return "content", buffer


_STATES: dict[str, Callable[[str, Events, list[dict[str, Any]]], tuple[str, str]]] = {
    "content": _content,
    "name": _name,
    "thinking": _thinking,
    "call": _call,
    "noise": _noise,
}


def events(text: str, tools: list[dict[str, Any]], state: str = "content") -> Events:
    """The events of a whole answer (read as Ollama's last chunk is: nothing held)."""
    out: Events = []
    buffer = text
    while buffer:
        state, buffer = _STATES[state](buffer, out, tools)
        if not state:
            break
    return out


def parse_after(
    text: str,
    tools: list[dict[str, Any]] | None,
    think: Any,
    last: dict[str, Any] | None,
    thinking_support: bool = True,
) -> OllamaMessage:
    """The parse, given the conversation's last message (after a tool result the answer
    starts inside the thinking)."""
    thinking = thinking_support and gojson.think_bool(think)
    start = (
        "thinking" if thinking and last is not None and last.get("role") == "tool" else "content"
    )
    found = events(text, tools or [], start)
    return OllamaMessage(
        content="".join(body for kind, body in found if kind == "content"),
        thinking="".join(body for kind, body in found if kind == "thinking") if thinking else "",
        tool_calls=tuple(call for kind, call in found if kind == "call"),
    )


def make(thinking_support: bool) -> Callable[..., OllamaMessage]:
    """The gemma4 parser (with thinking) or gemma4-no-thinking."""

    def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
        """What Ollama's gemma4 parser reads from a whole answer."""
        return parse_after(text, tools, think, None, thinking_support)

    return parse
