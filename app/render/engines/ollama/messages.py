"""The request's conversation as Ollama's api.Message and api.Tool values.

The playground's messages follow the chat-completions shape; Ollama's /api/chat takes its
own (`api/types.go` at fb30760). This reads either as Ollama's OpenAI-compatible layer
(`openai/openai.go`, FromChatRequest) does: text parts of a content list become one
message each (collated again by the template package), tool-call arguments given as JSON
text are decoded, a tool message's `name` is its `tool_name`, and `reasoning` (or
`reasoning_content`, `thinking`) is the message's thinking.
"""

from __future__ import annotations

import json
from typing import Any

from app.problems import TemplateProblem

#: The keys a message's thinking may come under, the first present winning.
THINKING_KEYS = ("thinking", "reasoning", "reasoning_content")


def _text(value: Any) -> str:
    """A string field as Ollama reads it: anything else is empty."""
    return value if isinstance(value, str) else ""


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments as an object, decoded when given as JSON text (Ollama refuses
    text that is not a JSON object)."""
    arguments = (call.get("function") or {}).get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise TemplateProblem(
            "RequestError", "Ollama takes tool-call arguments as a JSON object only."
        )
    return arguments


def tool_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message's tool calls as api.ToolCall values."""
    calls = []
    for index, call in enumerate(message.get("tool_calls") or []):
        if not isinstance(call, dict):
            continue
        function = call.get("function") or {}
        entry: dict[str, Any] = {
            "function": {
                "index": function.get("index", index) if isinstance(function, dict) else index,
                "name": _text(function.get("name")) if isinstance(function, dict) else "",
                "arguments": _arguments(call),
            }
        }
        if isinstance(call.get("id"), str):
            entry["id"] = call["id"]
        calls.append(entry)
    return calls


def _thinking(message: dict[str, Any]) -> str:
    """The message's thinking, under the first of `THINKING_KEYS` it has."""
    return next((_text(message[k]) for k in THINKING_KEYS if k in message), "")


def api_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as api.Message dicts (role, content, thinking, tool_calls,
    tool_name, tool_call_id)."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        role = _text(message.get("role"))
        tool_name = _text(message.get("tool_name") or message.get("name"))
        last = {
            "role": role,
            "thinking": _thinking(message),
            "tool_calls": tool_calls(message),
            "tool_name": tool_name if role.lower() == "tool" else _text(message.get("tool_name")),
            "tool_call_id": _text(message.get("tool_call_id")),
        }
        content = message.get("content")
        if isinstance(content, list):
            # One message per text part; the calls and names go with the last of them.
            texts = [part.get("text") for part in content if isinstance(part, dict)]
            parts = [{"role": role, "content": _text(text)} for text in texts if text is not None]
            converted.extend(parts[:-1])
            last["content"] = parts[-1]["content"] if parts else ""
        else:
            last["content"] = _text(content)
        converted.append(last)
    return converted


def think_value(kwargs: dict[str, Any]) -> bool | str | None:
    """Ollama's `think` from the request's kwargs: `enable_thinking` (a bool), or a level
    given as `reasoning_effort` ("low", "medium", "high"); None when neither is set."""
    effort = kwargs.get("reasoning_effort")
    enabled = kwargs.get("enable_thinking")
    if isinstance(effort, str) and effort and enabled is not False:
        return effort
    return enabled if isinstance(enabled, bool) else None
