"""The conversation vLLM hands to `apply_chat_template`, built from the request's messages.

Each message is rebuilt from a few keys (vllm/renderers/chat_utils): `role`, the shaped
`content`, `name` and `task` when they are strings; an assistant's `tool_calls` and its
reasoning (written as both `reasoning` and `reasoning_content`); a tool message's
`tool_call_id`; a developer message's `tools`. Every other key is dropped. Tool calls
are first checked as vLLM's request model checks them, which also puts their keys in the
order OpenAI's types declare them. Then tool-call arguments given as JSON text become
objects, and an empty `tool_calls` list is removed.
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
        _parse_message(message, blocks, contract, f"messages[{index}]", rewrites)
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
    message: dict[str, Any], blocks: bool, contract: Contract, where: str, rewrites: list[str]
) -> dict[str, Any]:
    role = message.get("role")
    if not isinstance(role, str):
        raise Refused(f"{where}.role is required and must be a string.")
    parts = content_parts(role, message.get("content"), where)
    content = shape_content(parts, blocks, contract, where)
    parsed: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        if message.get("tool_calls") is not None:
            parsed["tool_calls"] = _checked_tool_calls(message["tool_calls"], where, rewrites)
        reasoning = next(
            (message[key] for key in contract.reasoning_keys if message.get(key) is not None),
            None,
        )
        if reasoning is not None:
            parsed["reasoning"] = parsed["reasoning_content"] = reasoning
    elif role == "tool":
        if "tool_call_id" in message:
            parsed["tool_call_id"] = message["tool_call_id"]
        parsed["content"] = _tool_result(parsed["content"])
    for key in ("name", "task"):
        if isinstance(message.get(key), str):
            parsed[key] = message[key]
    if role == "developer":
        parsed["tools"] = message.get("tools")
    return parsed


def _tool_result(content: Any) -> Any:
    """A tool result as vLLM passes it: text parts joined into one string, unless a part is
    not text (such as `tool_reference`: vLLM keeps that list)."""
    if not isinstance(content, list):
        return content
    if any(isinstance(item, dict) and item.get("type") != "text" for item in content):
        return content
    texts = [
        item.get("text", "")
        for item in content
        if isinstance(item, dict) and item.get("type") == "text"
    ]
    return "\n".join(texts)


#: The keys of a function tool call and of its function, in the order vLLM's request
#: model writes them (OpenAI's TypedDicts, as pydantic validates them); others follow.
CALL_KEYS = ("id", "function", "type")
FUNCTION_KEYS = ("arguments", "name")


def _checked_tool_calls(tool_calls: Any, where: str, rewrites: list[str]) -> list[Any]:
    """The request's tool calls as vLLM's request model validates them (OpenAI's
    `ChatCompletionMessageToolCallParam`): a function call needs a string `id`, `type`
    "function" and a `function` whose `name` and `arguments` are strings (the JSON text,
    not an object), and comes back with its keys in the order the types declare them."""
    if not isinstance(tool_calls, list):
        raise Refused(f"{where}.tool_calls must be a list.")
    checked = [
        _checked_call(call, f"{where}.tool_calls[{index}]") for index, call in enumerate(tool_calls)
    ]
    if [list(_walk_keys(c)) for c in checked] != [list(_walk_keys(c)) for c in tool_calls]:
        rewrites.append(
            f"{where}.tool_calls: keys in the order vLLM's request model writes them "
            "(id, function, type; arguments, name; other keys after)"
        )
    return checked


def _checked_call(call: Any, where: str) -> Any:
    if not isinstance(call, dict):
        raise Refused(f"{where}: Input should be a valid dictionary (a tool call object).")
    if call.get("type") == "custom":
        return call  # the request model takes it; vLLM's parse refuses it (below)
    _field(call, "id", str, where)
    function = _field(call, "function", dict, where)
    _field(function, "arguments", str, f"{where}.function", "the JSON text of the arguments")
    _field(function, "name", str, f"{where}.function")
    if call.get("type") != "function":
        problem = "Input should be 'function'" if "type" in call else "Field required"
        raise Refused(f"{where}.type: {problem}")
    return {
        **_declared_first(call, CALL_KEYS),
        "function": _declared_first(function, FUNCTION_KEYS),
    }


def _field(mapping: dict[str, Any], key: str, kind: type, where: str, hint: str = "") -> Any:
    """`mapping[key]`, refused in pydantic's words when it is absent or not a `kind`."""
    if key not in mapping:
        raise Refused(f"{where}.{key}: Field required")
    if not isinstance(mapping[key], kind):
        expected = "string" if kind is str else "dictionary"
        raise Refused(
            f"{where}.{key}: Input should be a valid {expected}" + (hint and f" ({hint})")
        )
    return mapping[key]


def _declared_first(mapping: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    declared = {key: mapping[key] for key in keys if key in mapping}
    return declared | {key: value for key, value in mapping.items() if key not in keys}


def _walk_keys(value: Any) -> Any:
    """Every key, depth first, so that a reordering counts as a change."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _walk_keys(item)


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
