"""Ollama's `qwen3-coder` renderer (model/renderers/qwen3coder.go at ollama/ollama fb30760).

ChatML turns; the first system message wins (a default one when there are tools and
none); tools as `<tools><function>...` XML; an assistant's tool calls as
`<tool_call><function=NAME><parameter=KEY>` blocks; consecutive tool results share
one user turn. A last assistant message without tool calls is a prefill (left open).
The `think` value is ignored.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson

START, END = "<|im_start|>", "<|im_end|>"
DEFAULT_SYSTEM = (
    "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks."
)
#: The format reminder after the tool list (Ollama's text; the model was trained on it).
TOOL_FORMAT = (
    "\n\nIf you choose to call a function ONLY reply in the following format with NO "
    "suffix:\n\n<tool_call>\n<function=example_function_name>\n"
    "<parameter=example_parameter_1>\nvalue_1\n</parameter>\n"
    "<parameter=example_parameter_2>\nThis is the value for the second parameter\n"
    "that can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n"
    "<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner "
    "<function=...></function> block must be nested within <tool_call></tool_call> XML "
    "tags\n- Required parameters MUST be specified\n- You may provide optional reasoning "
    "for your function call in natural language BEFORE the function call, but NOT after\n"
    "- If there is no function call available, answer the question like normal with your "
    "current knowledge and do not tell the user about function calls\n</IMPORTANT>"
)
#: A tool property's keys in the order Go marshals api.ToolProperty.
_PROPERTY_KEYS = ("anyOf", "type", "items", "description", "enum", "properties", "required")
_PARAMETER_KEYS = ("type", "$defs", "items", "required", "properties")


def format_argument(value: Any) -> str:
    """A tool-call argument as the prompt shows it: strings bare, maps and lists as JSON."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return gojson.marshal(value)
    return gojson.sprint(value)


def format_type(types: list[str] | str | None) -> str:
    """A property's type: the one name, or the list as JSON."""
    if isinstance(types, str):
        return types
    if not types:
        return "[]"
    return types[0] if len(types) == 1 else gojson.marshal(types)


def _additional(obj: dict[str, Any], order: tuple[str, ...], handled: set[str]) -> str:
    """`<key>value</key>` lines for the keys not already written, empty ones left out."""
    out = []
    for key in order:
        value = obj.get(key)
        if key in handled or value in (None, "", []):
            continue
        if isinstance(value, (dict, list)):
            out.append(f"\n<{key}>{gojson.marshal(value)}</{key}>")
        else:
            out.append(f"\n<{key}>{gojson.sprint(value)}</{key}>")
    return "".join(out)


def _tool(tool: dict[str, Any]) -> str:
    """One `<function>` block of the tool list."""
    function = tool.get("function", {})
    out = ["\n<function>\n<name>" + function.get("name", "") + "</name>"]
    if function.get("description"):
        out.append("\n<description>" + function["description"] + "</description>")
    out.append("\n<parameters>")
    params = function.get("parameters") or {}
    for name, prop in (params.get("properties") or {}).items():
        out.append("\n<parameter>\n<name>" + name + "</name>")
        if prop.get("type"):
            out.append("\n<type>" + format_type(prop["type"]) + "</type>")
        if prop.get("description"):
            out.append("\n<description>" + prop["description"] + "</description>")
        out.append(_additional(prop, _PROPERTY_KEYS, {"type", "description"}))
        out.append("\n</parameter>")
    out.append(_additional(params, _PARAMETER_KEYS, {"type", "properties"}))
    out.append("\n</parameters>\n</function>")
    return "".join(out)


def _system(system: str, tools: list[dict[str, Any]]) -> str:
    """The system turn (only when there is a system message or tools)."""
    if not system and not tools:
        return ""
    out = START + "system\n" + (system or DEFAULT_SYSTEM)
    if tools:
        out += "\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>"
        out += "".join(_tool(t) for t in tools) + "\n</tools>" + TOOL_FORMAT
    return out + END + "\n"


def _tool_calls(message: dict[str, Any]) -> str:
    """An assistant turn with tool calls."""
    out = START + "assistant\n"
    if message.get("content"):
        out += message["content"] + "\n"
    for call in message["tool_calls"]:
        function = call.get("function", {})
        out += "\n<tool_call>\n<function=" + function.get("name", "") + ">"
        for key, value in (function.get("arguments") or {}).items():
            out += f"\n<parameter={key}>\n{format_argument(value)}\n</parameter>"
        out += "\n</function>\n</tool_call>"
    return out + END + "\n"


def render(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, think: Any = None
) -> str:
    """The prompt Ollama's qwen3-coder renderer makes."""
    tools = tools or []
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    rest = [m for m in messages if m.get("role") != "system"]
    out = [_system(system, tools)]
    for i, message in enumerate(rest):
        role, content = message.get("role", ""), message.get("content", "")
        last = i == len(rest) - 1
        prefill = last and role == "assistant"
        if role == "assistant" and message.get("tool_calls"):
            out.append(_tool_calls(message))
        elif role == "assistant":
            out.append(START + "assistant\n" + content + ("" if prefill else END + "\n"))
        elif role == "tool":
            if i == 0 or rest[i - 1].get("role") != "tool":
                out.append(START + "user")
            out.append("\n<tool_response>\n" + content + "\n</tool_response>")
            if last or rest[i + 1].get("role") != "tool":
                out.append(END + "\n")
        else:
            out.append(START + role + "\n" + content + END + "\n")
        if last and not prefill:
            out.append(START + "assistant\n")
    return "".join(out)
