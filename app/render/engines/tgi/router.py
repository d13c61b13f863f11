"""TGI's router: how a chat request is parsed and reshaped before its template runs.

text-generation-inference parses the request body into Rust types (`Message`, `Tool`,
`ToolCall`) with serde, then turns every message into a `TextMessage` (role and one
content string) and renders `{messages, bos_token, eos_token, add_generation_prompt,
tools}`. Whatever those types do not hold never reaches the template. This module
follows those types field by field; the parse errors say what serde would refuse.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

#: What TGI appends after the tools when the request gives no `tool_prompt` (lib.rs).
DEFAULT_TOOL_PROMPT = (
    "\nGiven the functions available, please respond with a JSON for a function call with "
    "its proper arguments that best answers the given prompt. Respond in the format "
    "{name: function name, parameters: dictionary of argument name and its value}.Do not "
    "use variables.\n"
)

#: The tool TGI adds when `tool_choice` is "auto" (the default), so the model may answer.
NO_TOOL = {
    "type": "function",
    "function": {
        "description": "Open ended response with no specific tool selected",
        "name": "no_tool",
        "arguments": {"type": "object"},
    },
}

#: Keys a message keeps: `TextMessage` has a role and a content string, nothing else.
KEPT_KEYS = ("role", "content")


class RequestRefused(ValueError):
    """The body does not parse into TGI's request types (TGI answers 422)."""


@dataclass
class Shaped:
    """The template's inputs as TGI builds them, and the rewrites made on the way."""

    messages: list[dict[str, str]]
    tools: list[dict[str, Any]] | None
    rewrites: list[str] = field(default_factory=list)


def shape_request(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    kwargs: dict[str, Any],
    template_reads_tools: bool,
) -> Shaped:
    """The messages and tools TGI's router hands to its template."""
    rewrites: list[str] = []
    texts = [
        _text_message(message, f"messages[{i}]", rewrites) for i, message in enumerate(messages)
    ]
    parsed_tools = None if tools is None else [_tool(t, f"tools[{i}]") for i, t in enumerate(tools)]
    chosen = _tools_to_use(parsed_tools, kwargs.get("tool_choice"), rewrites)
    if chosen is None:
        return Shaped(texts, None, rewrites)
    prompt = kwargs.get("tool_prompt") or DEFAULT_TOOL_PROMPT
    if not isinstance(prompt, str):
        raise RequestRefused("tool_prompt: invalid type, expected a string")
    _append_tool_prompt(messages, texts, chosen, prompt, template_reads_tools, rewrites)
    rewrites.append(
        "tools reach the template as {function: {arguments, description, name}, type}: "
        "parameters renamed arguments and serialised to a JSON string"
    )
    return Shaped(texts, [_template_tool(tool) for tool in chosen], rewrites)


def _text_message(message: dict[str, Any], where: str, rewrites: list[str]) -> dict[str, str]:
    """A `Message` parsed by serde, then converted to a `TextMessage`."""
    role = message.get("role")
    if not isinstance(role, str):
        raise RequestRefused(f"{where}: missing field `role` (a string)")
    if message.get("name") is not None and not isinstance(message["name"], str):
        raise RequestRefused(f"{where}.name: invalid type, expected a string")
    # MessageBody is untagged: `content` is tried first, and `tool_calls` only if it fails.
    kept = KEPT_KEYS
    content = _content(message.get("content"), rewrites)
    if content is None:
        content = _tool_calls_text(message, where)
        kept = (*KEPT_KEYS, "tool_calls")
        rewrites.append("tool calls given as the message content: their JSON, as TGI serialises it")
    dropped = sorted(key for key in message if key not in kept)
    if dropped:
        rewrites.append(f"message keys other than role and content dropped: {', '.join(dropped)}")
    return {"content": content, "role": role}


def _content(content: Any, rewrites: list[str]) -> str | None:
    """`MessageContent` flattened to one string; None when it does not parse as one."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not all(_chunk_text(c) is not None for c in content):
        return None
    rewrites.append("content parts joined into one string (images as ![](url))")
    return "".join(_chunk_text(chunk) or "" for chunk in content)


def _chunk_text(chunk: Any) -> str | None:
    """A `MessageChunk` as TGI flattens it: text as is, an image as markdown."""
    if not isinstance(chunk, dict):
        return None
    if chunk.get("type") == "text" and isinstance(chunk.get("text"), str):
        return chunk["text"]
    image = chunk.get("image_url")
    if chunk.get("type") == "image_url" and isinstance(image, dict) and _is_str(image, "url"):
        return f"![]({image['url']})"
    return None


def _is_str(mapping: dict[str, Any], key: str) -> bool:
    return isinstance(mapping.get(key), str)


def _tool_calls_text(message: dict[str, Any], where: str) -> str:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        raise RequestRefused(
            f"{where}: data did not match any variant of untagged enum MessageBody "
            "(content must be a string or a list of text/image_url parts, or tool_calls a list)"
        )
    parsed = [_tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)]
    return serde_json([{**call, "function": _serialised(call["function"])} for call in parsed])


def _tool_call(call: Any, where: str) -> dict[str, Any]:
    """A `ToolCall` in its serialised field order: id, type, function."""
    if not isinstance(call, dict):
        raise RequestRefused(f"{where}: invalid type, expected a tool call object")
    for name in ("id", "type"):
        if not isinstance(call.get(name), str):
            raise RequestRefused(f"{where}: missing field `{name}` (a string)")
    return {
        "id": call["id"],
        "type": call["type"],
        "function": _function(call.get("function"), where),
    }


def _tool(tool: dict[str, Any], where: str) -> dict[str, Any]:
    """A `Tool`: its type and its `FunctionDefinition`."""
    if not isinstance(tool.get("type"), str):
        raise RequestRefused(f"{where}: missing field `type` (a string)")
    return {"type": tool["type"], "function": _function(tool.get("function"), where)}


def _function(function: Any, where: str) -> dict[str, Any]:
    """A `FunctionDefinition`: description, name, arguments (alias parameters)."""
    if not isinstance(function, dict):
        raise RequestRefused(f"{where}: missing field `function` (an object)")
    if not isinstance(function.get("name"), str):
        raise RequestRefused(f"{where}.function: missing field `name` (a string)")
    description = function.get("description")
    if description is not None and not isinstance(description, str):
        raise RequestRefused(f"{where}.function.description: invalid type, expected a string")
    given = [key for key in ("arguments", "parameters") if key in function]
    if len(given) != 1:
        problem = "duplicate field `arguments`" if given else "missing field `arguments`"
        raise RequestRefused(f"{where}.function: {problem}")
    return {"description": description, "name": function["name"], "arguments": function[given[0]]}


def _tools_to_use(
    tools: list[dict[str, Any]] | None, choice: Any, rewrites: list[str]
) -> list[dict[str, Any]] | None:
    """TGI's `ToolGrammar::apply`: the tools `tool_choice` leaves, None for no tools."""
    if tools is None:
        return None
    if choice is None or choice == "auto":
        rewrites.append('tool "no_tool" added (tool_choice "auto", TGI\'s default)')
        chosen = [*tools, NO_TOOL]
    elif choice == "none":
        chosen = []
    elif choice == "required":
        chosen = tools
    else:
        name = _chosen_name(choice)
        chosen = [tool for tool in tools if tool["function"]["name"] == name][:1]
        if not chosen:
            raise RequestRefused(f"Tool with name {name} not found")
    if not chosen:
        rewrites.append("no tools reach the template (none left after tool_choice)")
        return None
    return chosen


def _chosen_name(choice: Any) -> str:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        if isinstance(function, dict) and _is_str(function, "name"):
            return function["name"]
    raise RequestRefused(
        'tool_choice: expected "auto", "none", "required", a tool name or '
        '{"type": "function", "function": {"name": ...}}'
    )


def _append_tool_prompt(
    messages: list[dict[str, Any]],
    texts: list[dict[str, str]],
    tools: list[dict[str, Any]],
    prompt: str,
    template_reads_tools: bool,
    rewrites: list[str],
) -> None:
    """Add the tool prompt (and the tools' JSON, when the template ignores `tools`) to the
    last message, unless that message carries tool calls instead of content."""
    if not texts or _content(messages[-1].get("content"), []) is None:
        return
    if template_reads_tools:
        texts[-1]["content"] += f"\n---\n{prompt}"
        rewrites.append("the tool prompt appended to the last message")
        return
    listed = serde_json([{**tool, "function": _serialised(tool["function"])} for tool in tools])
    texts[-1]["content"] += f"\n---\n{listed}\n{prompt}"
    rewrites.append("the tools' JSON and the tool prompt appended to the last message")


def _serialised(function: dict[str, Any]) -> dict[str, Any]:
    """A `FunctionDefinition` as serde writes it: `arguments` becomes a JSON string."""
    return {**function, "arguments": serde_json(function["arguments"])}


def _template_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool as the template sees it: MiniJinja's maps (without `preserve_order`, as TGI
    builds it) sort their keys."""
    function = _serialised(tool["function"])
    return {"function": dict(sorted(function.items())), "type": tool["type"]}


def serde_json(value: Any) -> str:
    """`serde_json::to_string`: compact, non-ASCII kept, key order kept (TGI enables
    `preserve_order`), and numbers written as Rust writes them. Written by hand because
    Python's encoder cannot be told how to write floats."""
    if isinstance(value, dict):
        items = (f"{serde_json(str(key))}:{serde_json(item)}" for key, item in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(serde_json(item) for item in value) + "]"
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _ryu(float(value))  # serde_json reads integers past u64 as floats
    return json.dumps(value, ensure_ascii=False)


def _ryu(number: float) -> str:
    """A float as Rust's `ryu` writes it: `1e21` and `1e-7` where Python writes `1e+21`
    and `1e-07`, and `0.00001` (fixed down to 1e-5) where Python writes `1e-05`; the
    digits (shortest round trip) are the same."""
    text = repr(number)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    if int(exponent) == -5:
        sign = "-" if mantissa.startswith("-") else ""
        return f"{sign}0.0000{mantissa.lstrip('-').replace('.', '')}"
    return f"{mantissa}e{int(exponent)}"
