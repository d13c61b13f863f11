"""The messages and tools llama-server hands to a template, and the rewrites on the way.

llama-server does not pass the request's messages through: it parses them into its
own message type (`common_chat_msgs_parse_oaicompat` in common/chat.cpp, after the
checks of `oaicompat_chat_params_parse` in tools/server/server-common.cpp) and turns
them back into JSON (`common_chat_msg::to_json_oaicompat`), which keeps only the
fields it knows, in its own order, and then applies the workarounds of
`common_chat_templates_apply_jinja` that depend on the template's capabilities.
Every rewrite that changes what the template sees is reported as a sentence.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any


class LlamaCppInputError(ValueError):
    """A request llama-server refuses before rendering (answered as HTTP 400 there)."""


def refuse_continued_tool_calls(parsed: list[ChatMessage]) -> None:
    """oaicompat_chat_params_parse (since b11434): a continued final assistant message
    (a prefill) may not carry tool calls."""
    if parsed and parsed[-1].role == "assistant" and parsed[-1].tool_calls:
        raise LlamaCppInputError("Cannot continue an assistant message that contains tool calls.")


@dataclass
class ChatMessage:
    """common_chat_msg: what survives parsing, with tool arguments as JSON text."""

    role: str
    content: str = ""
    parts: list[dict[str, str]] = field(default_factory=list)
    reasoning_content: str = ""
    tool_name: str = ""
    tool_call_id: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    had_content: bool = True
    #: Whether the request gave some tool call's arguments as an object (llama.cpp keeps
    #: its JSON text, and the template sees an object again only if it reads objects).
    object_arguments: bool = False

    def is_empty(self) -> bool:
        """common_chat_msg::empty: nothing to continue from."""
        return not (self.content or self.parts or self.reasoning_content or self.tool_calls)

    def render_content(self, delimiter: str = "\n") -> str:
        """common_chat_msg::render_content: the text, parts joined by `delimiter`."""
        if self.content:
            return self.content
        return delimiter.join(p["text"] for p in self.parts if p["type"] == "text")


def _dump(value: Any) -> str:
    """nlohmann's `dump()`: compact JSON, UTF-8 kept as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _string(message: dict[str, Any], key: str) -> str:
    value = message[key]
    if not isinstance(value, str):
        raise LlamaCppInputError(
            f"Failed to parse messages: [json.exception.type_error.302] type must be string, "
            f"but is {_json_type(value)}"
        )
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(value), "value")


def parse_messages(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """The server's checks, then common_chat_msgs_parse_oaicompat."""
    for message in messages:
        role = message.get("role")
        if role != "assistant" and "content" not in message:
            raise LlamaCppInputError("All non-assistant messages must contain 'content'")
        if role == "assistant" and "content" not in message and "tool_calls" not in message:
            raise LlamaCppInputError(
                "Assistant message must contain either 'content' or 'tool_calls'!"
            )
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if not isinstance(part, dict) or part.get("type") != "text":
                    raise LlamaCppInputError("unsupported content[].type")
        elif content is not None and not isinstance(content, str):
            raise LlamaCppInputError("Expected 'content' to be a string or an array")
    return [_parse_message(message) for message in messages]


def _parse_message(message: dict[str, Any]) -> ChatMessage:
    if "role" not in message:
        raise LlamaCppInputError(
            f"Failed to parse messages: Missing 'role' in message: {_dump(message)}"
        )
    parsed = ChatMessage(
        role=_string(message, "role"), had_content=message.get("content") is not None
    )
    content = message.get("content")
    if isinstance(content, str):
        parsed.content = content
    elif isinstance(content, list):
        parsed.parts = [
            {"type": part["type"], "text": str(part.get("text", ""))} for part in content
        ]
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(function, dict)
            or call.get("type") != "function"
            or "name" not in function
        ):
            raise LlamaCppInputError(f"Failed to parse messages: Invalid tool call: {_dump(call)}")
        if "arguments" not in function:
            raise LlamaCppInputError("Failed to parse messages: key 'arguments' not found")
        arguments = function["arguments"]
        parsed.object_arguments |= not isinstance(arguments, str)
        call_id = call.get("id", "")
        if not isinstance(call_id, str):
            raise LlamaCppInputError("Failed to parse messages: the tool call id must be a string")
        parsed.tool_calls.append(
            {
                "name": str(function["name"]),
                "arguments": arguments if isinstance(arguments, str) else _dump(arguments),
                "id": call_id,
            }
        )
    if "reasoning_content" in message:
        parsed.reasoning_content = _string(message, "reasoning_content")
    if "name" in message:
        parsed.tool_name = _string(message, "name")
    if "tool_call_id" in message:
        parsed.tool_call_id = _string(message, "tool_call_id")
    return parsed


def to_json(message: ChatMessage) -> dict[str, Any]:
    """common_chat_msg::to_json_oaicompat(concat_typed_text=false): its fields, its order."""
    data: dict[str, Any] = {"role": message.role}
    if message.content:
        data["content"] = message.content
    elif message.parts:
        data["content"] = [{"type": p["type"], "text": p["text"]} for p in message.parts]
    else:
        data["content"] = ""
    if message.reasoning_content:
        data["reasoning_content"] = message.reasoning_content
    if message.tool_name:
        data["name"] = message.tool_name
    if message.tool_call_id:
        data["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        data["tool_calls"] = []
        for call in message.tool_calls:
            entry: dict[str, Any] = {
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            if call["id"]:
                entry["id"] = call["id"]
            data["tool_calls"].append(entry)
    return data


def normalise_content(
    messages: list[dict[str, Any]], caps: dict[str, bool], rewrites: list[str]
) -> list[dict[str, Any]]:
    """messages_inp_normalizer: join text blocks, or wrap text in a block, as the template reads."""
    only_string = caps["supports_string_content"] and not caps["supports_typed_content"]
    only_typed = caps["supports_typed_content"] and not caps["supports_string_content"]
    for message in messages:
        content = message.get("content")
        if only_string and isinstance(content, list):
            message["content"] = "\n".join(p["text"] for p in content if p["type"] == "text")
            _note(rewrites, "content blocks joined with newlines (the template reads strings)")
        elif only_typed and isinstance(content, str):
            message["content"] = [{"type": "text", "text": content}]
            _note(rewrites, "content wrapped in a text block (the template reads blocks)")
    return messages


def _note(rewrites: list[str], sentence: str) -> None:
    if sentence not in rewrites:
        rewrites.append(sentence)


def apply_workarounds(
    messages: list[dict[str, Any]],
    originals: list[ChatMessage],
    source: str,
    caps: dict[str, bool],
    rewrites: list[str],
) -> list[dict[str, Any]]:
    """The `workaround::` rewrites of common_chat_templates_apply_jinja, in its order."""
    if "<|channel|>" not in source:
        # map_developer_role_to_system: every template but gpt-oss's.
        for message in messages:
            if message["role"] == "developer":
                message["role"] = "system"
                _note(rewrites, "developer message turned into system")
    if not caps["supports_system_role"] and messages and messages[0]["role"] == "system":
        # system_message_not_supported: merged into the next message, or dropped.
        first = messages.pop(0)
        if messages:
            messages[0]["content"] = _text(first) + "\n" + _text(messages[0])
            _note(
                rewrites,
                "system message merged into the first user message (the template has no "
                "system role)",
            )
        else:
            _note(rewrites, "system message removed (the template has no system role)")
    if caps["supports_tool_calls"]:
        # requires_non_null_content: to_json already wrote "" where content was missing.
        for original in originals:
            if original.tool_calls and not original.had_content:
                _note(rewrites, 'content "" added to a tool-call message')
    if not caps["supports_object_arguments"] and any(m.object_arguments for m in originals):
        _note(rewrites, "tool arguments passed as JSON text (the template reads strings)")
    if caps["supports_object_arguments"]:
        strings = any(m.tool_calls and not m.object_arguments for m in originals)
        for message in messages:
            for call in message.get("tool_calls", []):
                arguments = call["function"]["arguments"]
                if isinstance(arguments, str):
                    try:
                        call["function"]["arguments"] = json.loads(arguments)
                    except ValueError as error:
                        raise LlamaCppInputError(
                            f"Failed to parse tool call arguments as JSON: {error}"
                        ) from None
                    if strings:
                        _note(rewrites, "tool arguments parsed from a JSON string")
    return messages


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, str):
        # The C++ reads the content as a string and throws on anything else.
        raise LlamaCppInputError(
            "[json.exception.type_error.302] type must be string, but is array"
        )
    return content


def parse_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """common_chat_tools_parse_oaicompat + _to_json_oaicompat: name, description, parameters."""
    if not tools:
        return None
    result = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict):
            raise LlamaCppInputError(f"Failed to parse tools: Unsupported tool type: {_dump(tool)}")
        if "name" not in function:
            raise LlamaCppInputError(f"Failed to parse tools: Missing tool name: {_dump(tool)}")
        result.append(
            {
                "type": "function",
                "function": {
                    "name": function["name"],
                    "description": function.get("description", ""),
                    # A copy: the template's array `append` must not reach the request.
                    "parameters": copy.deepcopy(function.get("parameters", {})),
                },
            }
        )
    return result
