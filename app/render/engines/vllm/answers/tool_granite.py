"""vLLM's `granite` tool parser (0.33.0: the Granite parser engine, `GraniteEngineToolParser`).

Granite 3.x answers `<|tool_call|>[{"name": ..., "arguments": {...}}, ...]` (3.0; 3.1 writes
`<tool_call>` as plain text). After either marker the engine expects a JSON array and cuts
it into one call per element by counting braces outside strings; a marker not followed by
`[` (blanks aside) or an unexpected character between elements gives the rest back as
content. Each call's name is the first `"name": "..."` in its element, its arguments the
text of the element's top-level `"arguments"` object, verbatim (retyped from the schema).
The content is the text before the first call, stripped; text after a named call is lost.
"""

from __future__ import annotations

import re

from app.render.answer import ToolCall
from app.render.engines.vllm.answers._engine_reading import _name_and_args
from app.render.engines.vllm.answers._schema_types import fix_arguments
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction, tool_call_id

NAME = "granite"
MARKERS = re.compile(r"<\|tool_call\|>|<tool_call>")
NAME_IN_ELEMENT = re.compile(r'"name"\s*:\s*"([^"]*)"')
BLANK = " \t\r\n"


def _elements(text: str, at: int) -> tuple[list[str], int, bool]:
    """The array's elements from `at` (after a marker): their texts, where the array
    region ends, and whether it ended cleanly (`]`, or the text ran out)."""
    found: list[str] = []
    started = False
    while at < len(text):
        ch = text[at]
        if ch in BLANK or (started and ch == ","):
            at += 1
        elif not started and ch == "[":
            started, at = True, at + 1
        elif started and ch == "]":
            return found, at + 1, True
        elif started and ch == "{":
            end = _element_end(text, at)
            found.append(text[at:end])
            at = end
        else:
            return found, at, False  # vLLM bails: this character and the rest are content
    return found, at, True


def _element_end(text: str, at: int) -> int:
    """Where the element starting with `{` at `at` ends (past its closing `}`)."""
    depth, in_string, escape = 0, False, False
    for index in range(at, len(text)):
        ch = text[index]
        if escape:
            escape = False
        elif in_string:
            if ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth = max(depth - 1, 0)
            if ch == "}" and depth == 0:
                return index + 1
    return len(text)


def _member_object(raw: str, key: str) -> str | None:
    """The verbatim text of the top-level member `key` of a JSON object (None when
    absent; ValueError when it is not an object): vLLM's `extract_json_member_object`."""
    depth, in_string, escape, start, last = 0, False, False, -1, None
    for index, ch in enumerate(raw):
        if escape:
            escape = False
        elif in_string:
            if ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
                if depth == 1:
                    last = raw[start + 1 : index]
        elif ch == '"':
            in_string, start = True, index
        elif ch == ":" and depth == 1 and last == key:
            value = index + 1
            while value < len(raw) and raw[value] in BLANK:
                value += 1
            if value >= len(raw):
                return None
            if raw[value] != "{":
                raise ValueError(f"member {key!r} must be a JSON object")
            return raw[value : _element_end(raw, value)]
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
    return None


def _arguments(element: str, name: str, tools: list[dict] | None) -> str:
    try:
        span = _member_object(element, "arguments")
    except ValueError:
        span = _name_and_args(element)[1] if element.strip() else "{}"
    return fix_arguments("{}" if span is None else span, tools, name)


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser granite`."""
    before: list[str] = []
    after: list[str] = []
    calls: list[ToolCall] = []
    named = False
    at = search_from = 0
    while (marker := MARKERS.search(text, search_from)) is not None:
        (after if calls or named else before).append(text[at : marker.start()])
        elements, at, clean = _elements(text, marker.end())
        # A marker where the array breaks off is read as text, in the array's state.
        again = None if clean else MARKERS.match(text, at)
        search_from = again.end() if again else at
        for element in elements:
            found = NAME_IN_ELEMENT.search(element)
            name = found.group(1) if found and found.group(1) else ""
            if name:
                named = True
                calls.append(ToolCall(name, _arguments(element, name, given.tools), ""))
            elif element.strip():
                raw_name, arguments = _name_and_args(element)
                if isinstance(raw_name, str) and raw_name:
                    calls.append(
                        ToolCall(raw_name, fix_arguments(arguments, given.tools, raw_name), "")
                    )
    (after if calls or named else before).append(text[at:])
    content = "".join(before)
    if not named:
        content += "".join(after)
    calls = [ToolCall(c.name, c.arguments, tool_call_id(i, c.name)) for i, c in enumerate(calls)]
    if calls:
        content = content.strip()
    return ToolExtraction(
        tools_called=bool(calls), tool_calls=tuple(calls), content=content or None
    )
