"""Ollama's `glm-4.7` renderer (model/renderers/glm47.go at ollama/ollama fb30760).

`[gMASK]<sop>`, the tools as Go JSON with a space after each `:` and `,` outside
strings, `<|user|>` / `<|assistant|>` / `<|observation|>` turns; past thinking is kept
in `<think>...</think>`; the answer opens `<think>` unless `think` is false.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson

TOOLS_HEAD = (
    "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user "
    "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:"
    "\n<tools>\n"
)
TOOLS_TAIL = (
    "</tools>\n\nFor each function call, output the function name and arguments within "
    "the following XML format:\n<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key>"
    "<arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>"
    "{arg-value-2}</arg_value>...</tool_call>"
)


def _arguments(arguments: dict[str, Any]) -> str:
    """`<arg_key>K</arg_key><arg_value>V</arg_value>` pairs: strings bare, others JSON."""
    out = []
    for key, value in arguments.items():
        text = value if isinstance(value, str) else gojson.marshal(value)
        out.append(f"<arg_key>{key}</arg_key><arg_value>{text}</arg_value>")
    return "".join(out)


def _assistant(message: dict[str, Any]) -> str:
    """An assistant turn: its thinking (or an empty close), content and tool calls."""
    thinking = message.get("thinking", "")
    out = "<|assistant|>" + (f"<think>{thinking}</think>" if thinking else "</think>")
    out += message.get("content", "")
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        out += "<tool_call>" + function.get("name", "")
        out += _arguments(function.get("arguments") or {}) + "</tool_call>"
    return out


def render(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, think: Any = None
) -> str:
    """The prompt Ollama's glm-4.7 renderer makes."""
    out = ["[gMASK]<sop>"]
    if tools:
        out.append(TOOLS_HEAD)
        out.extend(gojson.spaced(gojson.tool(tool)) + "\n" for tool in tools)
        out.append(TOOLS_TAIL)
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content", "")
        if role == "user":
            out.append("<|user|>" + content)
        elif role == "assistant":
            out.append(_assistant(message))
        elif role == "tool":
            if i == 0 or messages[i - 1].get("role") != "tool":
                out.append("<|observation|>")
            out.append("<tool_response>" + content + "</tool_response>")
        elif role == "system":
            out.append("<|system|>" + content)
    thinking = not (think is not None and not gojson.think_bool(think))
    out.append("<|assistant|>" + ("<think>" if thinking else "</think>"))
    return "".join(out)
