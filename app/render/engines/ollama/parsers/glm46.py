"""Ollama's GLM-4.6 parser and `glm-4.7` on top of it (model/parsers/glm46.go and
glm47.go at ollama/ollama fb30760).

Thinking (after an optional `<think>`, or from the start for glm-4.7 unless `think`
is false) until `</think>`; content until `<tool_call>`; each call is the function
name followed by `<arg_key>K</arg_key><arg_value>V</arg_value>` pairs, read as XML
(text outside those tags escaped; broken tag sequences repaired), values typed by the
tool's schema as qwen3-coder's are. A call left open at the end is read if the tool
is declared and its required arguments are there.
"""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers.glm46_repair import repair
from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    overlap_chars,
    split_at_tag,
    trim_left,
    trim_right,
)
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError, kinds, parse_value

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
TOOL_OPEN, TOOL_CLOSE = "<tool_call>", "</tool_call>"
ARG_TAGS = ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")


def _step(state: str, buffer: str, out: list[tuple[str, str]]) -> tuple[str, str]:
    """One step of the state machine: (the next state, or "" to stop; the buffer)."""
    if state == "looking":
        trimmed = trim_left(buffer)
        if trimmed.startswith(THINK_OPEN):
            return "thinking", trim_left(trimmed[len(THINK_OPEN) :])
        if THINK_OPEN.startswith(trimmed):
            return "", buffer
        return "content", buffer
    tag = {"thinking": THINK_CLOSE, "content": TOOL_OPEN, "tool": TOOL_CLOSE}[state]
    if tag in buffer:
        before, after = split_at_tag(buffer, tag, True)
        kind = {"thinking": "thinking", "content": "content", "tool": "call"}[state]
        if before or kind == "call":
            out.append((kind, before))
        return ("tool" if state == "content" else "content"), after
    if state == "tool":
        return "", buffer
    sure, held = hold_back(buffer, tag)
    if sure:
        out.append((state, sure))
    return "", held


def events(text: str, state: str) -> tuple[list[tuple[str, str]], str, str]:
    """The events of a whole answer, the state it ends in and what is left."""
    out: list[tuple[str, str]] = []
    buffer = text
    while True:
        following, buffer = _step(state, buffer, out)
        if not following:
            return out, state, buffer
        state = following


def escape(text: str) -> str:
    """Escape &, <, > outside the four argument tags."""
    out, in_tag = [], False
    for i, ch in enumerate(text):
        if ch == "<" and any(text.startswith(tag, i) for tag in ARG_TAGS):
            in_tag = True
        if in_tag:
            out.append(ch)
            in_tag = ch != ">"
        else:
            out.append({"&": "&amp;", "<": "&lt;", ">": "&gt;"}.get(ch, ch))
    return "".join(out)


def read_xml(body: str) -> tuple[str, list[str], list[str]]:
    """`<tool_call>body</tool_call>` as (its own text, arg_key texts, arg_value texts)."""
    name: list[str] = []
    keys: list[str] = []
    values: list[str] = []
    depth = [0, ""]

    def start(tag: str, _attrs: dict[str, str]) -> None:
        depth[0] += 1
        if depth[0] == 2 and tag in ("arg_key", "arg_value"):
            depth[1] = tag
            (keys if tag == "arg_key" else values).append("")

    def end(_tag: str) -> None:
        depth[0] -= 1
        if depth[0] == 1:
            depth[1] = ""

    def text(data: str) -> None:
        if depth[0] == 1:
            name.append(data)
        elif depth[1]:
            target = keys if depth[1] == "arg_key" else values
            target[-1] += data

    parser = expat.ParserCreate()
    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = text
    parser.Parse(f"<tool_call>{body}</tool_call>", True)
    return "".join(name), keys, values


def parse_tool_call(raw: str, tools: list[dict[str, Any]] | None) -> tuple[str, dict[str, Any]]:
    """One call: its name and typed arguments (the XML repaired if it does not parse)."""
    escaped = escape(raw)
    try:
        name, keys, values = read_xml(escaped)
    except expat.ExpatError as error:
        try:
            name, keys, values = read_xml(repair(escaped))
        except expat.ExpatError:
            raise ToolCallError(f"failed to parse XML: {error}") from None
    name = name.strip()
    if not name:
        raise ToolCallError("empty function name")
    if len(keys) != len(values):
        raise ToolCallError(
            f"mismatched arg_key and arg_value counts: {len(keys)} keys, {len(values)} values"
        )
    arguments = {}
    for key, value in zip(keys, values, strict=True):
        arguments[key.strip()] = parse_value(value, kinds(tools or [], name, key.strip()))
    return name, arguments


def _finalize(raw: str, tools: list[dict[str, Any]]) -> str:
    """A call left open at the end: checked against the declared tools, or an error."""
    partial = overlap_chars(raw, TOOL_CLOSE)
    if partial:
        raw = trim_right(raw[: len(raw) - partial])
    try:
        name, keys, values = read_xml(escape(raw))
    except expat.ExpatError as error:
        raise ToolCallError(f"incomplete GLM tool call: {error}") from None
    name = name.strip()
    declared = next((t for t in tools if t.get("function", {}).get("name") == name), None)
    if not name or len(keys) != len(values) or declared is None:
        raise ToolCallError(f"incomplete GLM tool call: {name!r} is not a declared tool call")
    seen = {key.strip() for key in keys}
    required = (declared["function"].get("parameters") or {}).get("required") or []
    if "" in seen or any(r not in seen for r in required):
        raise ToolCallError("incomplete GLM tool call: an argument is missing or unnamed")
    return raw


def make(start_thinking: bool) -> Any:
    """A GLM parser: glm-4.7's starts in the thinking unless `think` is false."""

    def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
        """What Ollama's GLM parser reads from a whole answer."""
        thinking = start_thinking and (think is None or gojson.think_bool(think))
        found, state, rest = events(text, "thinking" if thinking else "looking")
        if state == "tool":
            found.append(("call", _finalize(trim_left(rest), tools or [])))
        return OllamaMessage(
            content="".join(body for kind, body in found if kind == "content"),
            thinking="".join(body for kind, body in found if kind == "thinking"),
            tool_calls=tuple(
                parse_tool_call(body, tools) for kind, body in found if kind == "call"
            ),
        )

    return parse
