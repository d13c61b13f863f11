"""Ollama's `deepseek3.1` renderer (model/renderers/deepseek3.go at ollama/ollama fb30760).

System messages joined by a blank line after the BOS; tools listed with their
parameters as Go JSON; `<｜User｜>` / `<｜Assistant｜>` turns; `</think>` closes the
thinking of past turns, `<think>` opens it for the answer when `think` is on.
"""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson

BOS, EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
USER, ASSISTANT = "<｜User｜>", "<｜Assistant｜>"
CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
OUTPUT_BEGIN, OUTPUT_END = "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"
TOOL_USAGE = (
    "\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n"
    f"{CALLS_BEGIN}{CALL_BEGIN}tool_call_name{SEP}tool_call_arguments{CALL_END}"
    "{{additional_tool_calls}}" + CALLS_END + "\n\nWhere:\n\n"
    "- `tool_call_name` must be an exact match to one of the available tools\n"
    "- `tool_call_arguments` must be valid JSON that strictly follows the tool's "
    "Parameters Schema\n"
    "- For multiple tool calls, chain them directly without separators or spaces\n"
)


def _tools(tools: list[dict[str, Any]]) -> str:
    """The tool list and its usage instructions."""
    out = "\n\n## Tools\nYou have access to the following tools:\n"
    for tool in tools:
        function = tool.get("function", {})
        out += "\n### " + function.get("name", "")
        out += "\nDescription: " + function.get("description", "")
        out += "\n\nParameters: " + gojson.parameters(function.get("parameters")) + "\n"
    return out + TOOL_USAGE


def _calls(message: dict[str, Any]) -> str:
    """An assistant's content and tool calls, closed by the EOS."""
    out = message.get("content", "") + CALLS_BEGIN
    for call in message["tool_calls"]:
        function = call.get("function", {})
        arguments = gojson.marshal(function.get("arguments") or {}, keep_order=True)
        out += CALL_BEGIN + function.get("name", "") + SEP + arguments + CALL_END
    return out + CALLS_END + EOS


def render(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, think: Any = None
) -> str:
    """The prompt Ollama's deepseek3.1 renderer makes."""
    thinking = gojson.think_bool(think)
    systems = [m.get("content", "") for m in messages if m.get("role") == "system"]
    out = [BOS, "\n\n".join(systems), _tools(tools) if tools else ""]
    is_tool = is_last_user = False
    roles = [m.get("role") for m in messages]
    last_user = len(roles) - 1 - roles[::-1].index("user") if "user" in roles else -1
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content", "")
        if role == "user":
            is_tool, is_last_user = False, True
            out.append(USER + content)
        elif role == "assistant" and message.get("tool_calls"):
            out.append((ASSISTANT + "</think>" if is_last_user else "") + _calls(message))
            is_tool = is_last_user = False
        elif role == "assistant":
            if is_last_user:
                current = bool(message.get("thinking")) and thinking and i > last_user
                out.append(ASSISTANT + ("<think>" if current else "</think>"))
            is_last_user = False
            if not is_tool and "</think>" in content:
                content = content.split("</think>", 1)[1]
            is_tool = False
            out.append(content + EOS)
        elif role == "tool":
            is_last_user, is_tool = False, True
            out.append(OUTPUT_BEGIN + content + OUTPUT_END)
    if is_last_user and not is_tool:
        out.append(ASSISTANT + ("<think>" if thinking else "</think>"))
    return "".join(out)
