"""Edge-LLM's messages and tools as its chat template code turns them into JSON.

Read from `cpp/chatTemplate/chatTemplate.cpp` (messageToJson, contentToJson, toolToJson,
normalizeDeveloperMessages) and `injaRenderer.cpp` (detectContentBlocks) of
guswns531/TensorRT-Edge-LLM at 83f5f768. A request message first becomes Edge-LLM's
runtime message (`Message` below: role, content items, flags), as its OpenAI server
makes it (`server.py`); the JSON the template sees is built from that, so a field the
runtime message has no room for never reaches it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

#: The bytes C's isspace() accepts in the "C" locale (Python's str.isspace() takes more).
C_SPACE = frozenset(" \t\n\v\f\r")
#: The message fields Edge-LLM's server reads into its runtime message.
MESSAGE_FIELDS = (
    "role", "content", "reasoning_content", "reasoning", "tool_call_id", "name", "tool_calls",
    "function_call",
)  # fmt: skip
#: The function fields of a tool definition Edge-LLM carries.
TOOL_FIELDS = ("name", "description", "parameters", "strict")
#: What contentToJson throws for a media item when the template wants a string.
MEDIA_ERROR = "provider string-content template requires a model-specific media processor"


@dataclass
class Call:
    """A tool call as Edge-LLM keeps it: `arguments` is text, parsed unless `as_string`."""

    id: str
    type: str
    name: str
    arguments: str
    as_string: bool


@dataclass(frozen=True)
class ToolDefinition:
    """Edge-LLM's runtime tool (rt::ToolDefinition): `parameters` is JSON text; a field
    the request left out is None."""

    name: str
    description: str | None = None
    parameters: str | None = None
    strict: bool | None = None


@dataclass
class Message:
    """Edge-LLM's runtime message (rt::Message), with the flags its server sets."""

    role: str
    has_content: bool = True
    content_is_null: bool = False
    content_is_array: bool = False
    items: list[tuple[str, str]] = field(default_factory=list)
    reasoning: str | None = None
    tool_call_id: str = ""
    name: str = ""
    tool_calls: list[Call] | None = None


def as_nlohmann(value: Any) -> Any:
    """`value` after a trip through nlohmann's dump and parse: non-finite floats become
    null and integers beyond 64 bits become floats; objects keep their key order."""
    if isinstance(value, dict):
        return {str(key): as_nlohmann(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [as_nlohmann(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        # nlohmann reads it as a double; one beyond a double's range dumps as null.
        try:
            return float(value)
        except OverflowError:
            return None
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # nlohmann's parser knows no NaN or Infinity


def json_or_string(text: str) -> Any:
    """chatTemplate.cpp's parseJsonOrString: the JSON value `text` holds, else `text`."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return text
    return as_nlohmann(value)


def developer_normalised(messages: list[Message]) -> tuple[list[Message], bool]:
    """normalizeDeveloperMessages: developer becomes system, and every system message is
    merged into one first message when one is not first or there are several. Returns
    the messages and whether they were merged."""
    for message in messages:
        if message.role == "developer":
            message.role = "system"
    contents: list[str] = []
    merge = False
    for index, message in enumerate(messages):
        if message.role != "system":
            continue
        merge = merge or index > 0 or bool(contents)
        # Items of a content list are joined by newlines; media items are left out.
        joiner = "\n" if message.content_is_array else ""
        text = joiner.join(text for kind, text in message.items if kind == "text")
        if text:
            contents.append(text)
    if not merge:
        return messages, False
    merged = Message(role="system", items=[("text", "\n\n".join(contents))])
    return [merged, *(message for message in messages if message.role != "system")], True


def content_json(message: Message, blocks: bool) -> Any:
    """contentToJson: null, one string (text items joined by newlines; media refused), or
    a list of blocks when the template loops over content (tool results stay strings)."""
    if message.content_is_null:
        return None
    if not blocks or message.role == "tool":
        if any(kind != "text" for kind, _ in message.items):
            raise MediaRefused(MEDIA_ERROR)
        return "\n".join(text for _, text in message.items)
    return [
        {"type": kind, "text": text} if kind == "text" else {"type": kind, kind: text}
        for kind, text in message.items
    ]


class MediaRefused(Exception):
    """A media item in a message the template renders as a string (Edge-LLM's apply
    fails with this text before Inja runs)."""


def message_json(message: Message, blocks: bool) -> dict[str, Any]:
    """messageToJson: the message as the template sees it, keys in Edge-LLM's order."""
    value: dict[str, Any] = {"role": message.role}
    if message.has_content:
        value["content"] = content_json(message, blocks)
    if message.reasoning is not None:
        value["reasoning_content"] = message.reasoning
        value["reasoning"] = message.reasoning
    if message.tool_call_id:
        value["tool_call_id"] = message.tool_call_id
    if message.name:
        value["name"] = message.name
    if message.tool_calls is not None:
        value["tool_calls"] = [
            {
                "id": call.id,
                "type": call.type,
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if call.as_string
                    else json_or_string(call.arguments),
                },
            }
            for call in message.tool_calls
        ]
    return value


def tool_json(tool: ToolDefinition) -> dict[str, Any]:
    """toolToJson: absent fields are left out, not null; `type` is always "function"."""
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = json_or_string(tool.parameters)
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def expects_content_blocks(source: str) -> bool:
    """injaRenderer.cpp's detectContentBlocks: a text scan of every `{% ... %}` for a
    `for ... in <iterable>` whose iterable reads a message's content."""
    offset = 0
    while (start := source.find("{%", offset)) != -1:
        end = source.find("%}", start + 2)
        if end == -1:
            return False
        offset = end + 2
        statement = _strip(source[start + 2 : end], C_SPACE | {"-", "+"})
        if not statement.startswith("for "):
            continue
        where = statement.find(" in ", 4)
        if where == -1:
            continue
        iterable = statement[where + 4 :]
        if (cut := iterable.find(" if ")) != -1:
            iterable = iterable[:cut]
        iterable = "".join(char for char in iterable if char not in C_SPACE)
        if (
            ".content" in iterable
            or "['content']" in iterable
            or '["content"]' in iterable
            or iterable == "content"
            or iterable.startswith("content|")
        ):
            return True
    return False


def _strip(text: str, chars: frozenset[str]) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in chars:
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    return text[start:end]


def supports_developer_role(source: str) -> bool:
    """injaRenderer.cpp: the template names the developer role in quotes somewhere."""
    return '"developer"' in source or "'developer'" in source
