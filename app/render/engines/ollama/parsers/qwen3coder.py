"""Ollama's `qwen3-coder` parser (model/parsers/qwen3coder.go at ollama/ollama fb30760).

Content up to `<tool_call>` (trailing space trimmed), then each call's
`<function=NAME><parameter=KEY>value</parameter></function>`, read as XML once the
`<name=value>` tags are rewritten to attributes; each value is typed by the tool's
schema (integer, number, boolean, array, object, else the text).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from xml.parsers import expat

from app.render.engines.ollama.parsers.message import (
    OllamaMessage,
    hold_back,
    trim_left,
    trim_right,
)

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_TAG = re.compile(r"<(\w+)=([^>]+)>")
_XML_TAG = re.compile(r'</?(?:function|parameter)(?:\s+name="[^"]*")?>')
_INT64 = range(-(2**63), 2**63)


class ToolCallError(ValueError):
    """A tool call Ollama's parser refuses (the answer's parse fails)."""


def events(buffer: str, collecting: bool = False) -> tuple[list[tuple[str, str]], str, bool]:
    """The (kind, text) events in `buffer` ("content" or "call"), what is held back, and
    whether it is inside a tool call (to go on with the next chunk)."""
    out: list[tuple[str, str]] = []
    while True:
        if not collecting and OPEN in buffer:
            before, buffer = buffer.split(OPEN, 1)
            if trim_right(before):
                out.append(("content", trim_right(before)))
            collecting = True
        elif not collecting:
            sure, buffer = hold_back(buffer, OPEN)
            if sure:
                out.append(("content", sure))
            return out, buffer, collecting
        elif CLOSE in buffer:
            raw, rest = buffer.split(CLOSE, 1)
            out.append(("call", raw))
            buffer, collecting = trim_left(rest), False
        else:
            return out, buffer, collecting


def _escape_text(text: str) -> str:
    """The text between tags, with &, < and > escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def transform_to_xml(raw: str) -> str:
    """`<function=NAME>` -> `<function name="NAME">`, other text escaped."""

    def attribute(match: re.Match[str]) -> str:
        value = _escape_text(match.group(2)).replace('"', "&#34;").replace("'", "&#39;")
        value = value.replace("\t", "&#x9;").replace("\n", "&#xA;").replace("\r", "&#xD;")
        return f'<{match.group(1)} name="{value}">'

    transformed = _TAG.sub(attribute, raw)
    out, last = [], 0
    for match in _XML_TAG.finditer(transformed):
        out.append(_escape_text(transformed[last : match.start()]) + match.group())
        last = match.end()
    return "".join(out) + _escape_text(transformed[last:])


def _parse_int(raw: str) -> int | None:
    """strconv.ParseInt(raw, 10, 64), or None."""
    if not re.fullmatch(r"[+-]?\d+", raw):
        return None
    value = int(raw)
    return value if value in _INT64 else None


def _parse_float(raw: str) -> float | None:
    """strconv.ParseFloat(raw, 64), or None (no Python-only spellings like '1_0')."""
    if "_" in raw or raw.strip() != raw:
        return None
    try:
        return float(raw)
    except ValueError:
        return None


def _typed(raw: str, kinds: list[str]) -> tuple[bool, Any]:
    """(found, value) for the schema types that take precedence over a string."""
    if "boolean" in kinds:
        if raw.lower() in ("true", "false"):
            return True, raw.lower() == "true"
        if len(kinds) == 1:
            return True, False
    if "integer" in kinds:
        number = _parse_int(raw)
        if number is not None:
            return True, number
        if len(kinds) == 1:
            return True, raw
    if "number" in kinds:
        number = _parse_float(raw)
        if number is not None:
            whole = math.isfinite(number) and number == math.trunc(number)
            return True, int(number) if whole and int(number) in _INT64 else number
        if len(kinds) == 1:
            return True, raw
    for kind, shape in (("array", list), ("object", dict)):
        if kind in kinds:
            try:  # Go decodes every JSON number into a float64
                value = json.loads(raw, parse_int=float)
            except ValueError:
                value = None
            if isinstance(value, shape):
                return True, value
            if len(kinds) == 1:
                return True, raw
    return False, raw


def parse_value(raw: str, kinds: list[str] | None) -> Any:
    """A parameter's value: one newline trimmed each side, typed by the schema."""
    raw = raw.removeprefix("\n").removesuffix("\n")
    if raw.lower() == "null":
        return None
    if not kinds:
        return raw
    return _typed(raw, list(kinds))[1]


def kinds(tools: list[dict[str, Any]], function: str, name: str) -> list[str]:
    """The types the named tool's schema gives a parameter (anyOf's joined)."""
    for tool in tools:
        fn = tool.get("function", {})
        if fn.get("name") == function:
            prop = ((fn.get("parameters") or {}).get("properties") or {}).get(name)
            if prop is None:
                return []
            if prop.get("anyOf"):
                return [k for sub in prop["anyOf"] for k in _as_list(sub.get("type"))]
            return _as_list(prop.get("type"))
    return []


def _as_list(kind: Any) -> list[str]:
    """A PropertyType: one name or a list of names."""
    if not kind:
        return []
    return [kind] if isinstance(kind, str) else list(kind)


class _Reader:
    """The first element of a document and its `<parameter>` children, as Go reads them."""

    def __init__(self) -> None:
        """An empty reading."""
        self.root: tuple[str, str] | None = None
        self.parameters: list[list[str]] = []
        self.depth, self.done = 0, False

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        """An element opens: the root, or a parameter directly inside it."""
        if self.done:
            return
        self.depth += 1
        if self.depth == 1:
            self.root = (tag, attrs.get("name", ""))
        elif self.depth == 2 and tag == "parameter":
            self.parameters.append([attrs.get("name", ""), ""])

    def end(self, _tag: str) -> None:
        """An element closes; the root's close ends the reading."""
        if not self.done:
            self.depth -= 1
            self.done = self.depth == 0

    def text(self, data: str) -> None:
        """Character data: a parameter's own text (not its children's)."""
        if not self.done and self.depth == 2 and self.parameters:
            self.parameters[-1][1] += data


def _read(xml: str) -> _Reader:
    """Read `xml` up to the end of its first element (what follows is ignored, as Go does)."""
    reader = _Reader()
    parser = expat.ParserCreate()
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    try:
        parser.Parse(xml, True)
    except expat.ExpatError as error:
        if not reader.done:
            raise ToolCallError(f"the tool call is not well-formed XML: {error}") from None
    if reader.root is None:
        raise ToolCallError("the tool call holds no element")
    return reader


def parse_tool_call(raw: str, tools: list[dict[str, Any]] | None) -> tuple[str, dict[str, Any]]:
    """One `<function=...>` block as (name, arguments)."""
    reader = _read(transform_to_xml(raw))
    tag, name = reader.root or ("", "")
    if tag != "function":
        raise ToolCallError(f"expected element type <function> but have <{tag}>")
    arguments: dict[str, Any] = {}
    for key, text in reader.parameters:
        arguments[key] = parse_value(text, kinds(tools or [], name, key))
    return name, arguments


def parse(text: str, tools: list[dict[str, Any]] | None, think: Any = None) -> OllamaMessage:
    """What Ollama's qwen3-coder parser reads from a whole answer."""
    found, _held, _inside = events(text)
    content = "".join(body for kind, body in found if kind == "content")
    calls = tuple(parse_tool_call(body, tools) for kind, body in found if kind == "call")
    return OllamaMessage(content=content, tool_calls=calls)
