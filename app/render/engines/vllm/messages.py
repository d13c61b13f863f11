"""The conversation vLLM hands to `apply_chat_template`, built from the request's messages.

Each message is rebuilt from a few keys (vllm/renderers/chat_utils): `role`, the shaped
`content`, `name` and `task` when they are strings; an assistant's `tool_calls` and its
reasoning (written as both `reasoning` and `reasoning_content`); a tool message's
`tool_call_id`; a developer message's `tools`. Every other key is dropped. Then tool-call
arguments given as JSON text become objects, and an empty `tool_calls` list is removed.
"""

from __future__ import annotations

import json
from typing import Any

from app.render.engines.vllm.contract import Contract, Refused
from app.render.engines.vllm.parts import content_parts, shape_content


def parse_messages(
    messages: list[dict[str, Any]], blocks: bool, contract: Contract, rewrites: list[str]
) -> list[dict[str, Any]]:
    """vLLM's conversation for `messages`; `blocks`: the template reads content blocks."""
    parsed = [
        _parse_message(message, blocks, contract, f"messages[{index}]")
        for index, message in enumerate(messages)
    ]
    # A key set to None is dropped by transformers anyway: only the others are news.
    dropped = sorted(
        {
            key
            for original, kept in zip(messages, parsed, strict=True)
            for key, value in original.items()
            if key not in kept and value is not None
        }
    )
    if dropped:
        rewrites.append(
            f"message keys {contract.server} does not read are dropped: {', '.join(dropped)}"
        )
    for index, message in enumerate(parsed):
        parse_tool_arguments(message, f"messages[{index}]", rewrites)
    return parsed


def _parse_message(
    message: dict[str, Any], blocks: bool, contract: Contract, where: str
) -> dict[str, Any]:
    role = message.get("role")
    if not isinstance(role, str):
        raise Refused(f"{where}.role is required and must be a string.")
    parts = content_parts(role, message.get("content"), where)
    content = shape_content(parts, blocks, contract, where)
    parsed: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        if message.get("tool_calls") is not None:
            parsed["tool_calls"] = _checked_tool_calls(message["tool_calls"], where)
        reasoning = next(
            (message[key] for key in contract.reasoning_keys if message.get(key) is not None),
            None,
        )
        if reasoning is not None:
            parsed["reasoning"] = parsed["reasoning_content"] = reasoning
    elif role == "tool":
        if "tool_call_id" in message:
            parsed["tool_call_id"] = message["tool_call_id"]
        parsed["content"] = _tool_result(parsed["content"], contract)
    for key in ("name", "task"):
        if isinstance(message.get(key), str):
            parsed[key] = message[key]
    if role == "developer":
        parsed["tools"] = message.get("tools")
    return parsed


def _tool_result(content: Any, contract: Contract) -> Any:
    """A tool result as vLLM passes it: text parts joined into one string, unless a part is
    not text (vLLM keeps such a list; Edge-LLM makes every tool result a string)."""
    if not isinstance(content, list):
        return content
    if not contract.tool_results_as_strings and any(
        isinstance(item, dict) and item.get("type") != "text" for item in content
    ):
        return content
    texts = [
        item.get("text", "")
        for item in content
        if isinstance(item, dict) and item.get("type") == "text"
    ]
    return "\n".join(texts)


def _checked_tool_calls(tool_calls: Any, where: str) -> list[Any]:
    """The request's tool calls, refused where vLLM's request model refuses them: the
    OpenAI types want `function.arguments` as a JSON string, not an object."""
    if not isinstance(tool_calls, list):
        raise Refused(f"{where}.tool_calls must be a list.")
    for index, call in enumerate(tool_calls):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), dict | list):
            raise Refused(
                f"{where}.tool_calls[{index}].function.arguments: Input should be a valid "
                "string (the JSON text of the arguments)."
            )
    return list(tool_calls)


def parse_tool_arguments(message: dict[str, Any], where: str, rewrites: list[str]) -> None:
    """Tool-call arguments as objects, as vLLM's `_postprocess_messages` makes them (the
    message's `tool_calls` list is replaced; the calls in it are not changed)."""
    if message["role"] != "assistant" or not isinstance(message.get("tool_calls"), list):
        return
    calls = message["tool_calls"] = list(message["tool_calls"])
    if not calls:
        del message["tool_calls"]  # the template takes the plain assistant path
        rewrites.append(f"{where}: the empty tool_calls list is removed")
        return
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict):
            raise Refused(f"{where}: assistant tool_calls entries must be objects.")
        if call.get("type", "function") != "function" or not isinstance(function, dict):
            raise Refused(
                f"{where}: chat completions only support assistant tool_calls of type 'function'."
            )
        parsed = arguments_object(function.get("arguments"))
        if parsed != function.get("arguments"):
            rewrites.append(
                f"{where}.tool_calls[{index}]: arguments {_described(function.get('arguments'))} "
                "become the object " + json.dumps(parsed, ensure_ascii=False)
            )
        calls[index] = {**call, "function": {**function, "arguments": parsed}}


def arguments_object(arguments: Any) -> dict[str, Any]:
    """Tool-call arguments as an object: JSON text is parsed; text that is not valid JSON,
    JSON that is not an object, "" and null all become {} (vLLM logs and goes on)."""
    if not arguments:
        return {}
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def _described(arguments: Any) -> str:
    if isinstance(arguments, str):
        return "given as JSON text" if arguments else 'given as ""'
    return "absent" if arguments is None else f"given as {type(arguments).__name__}"
