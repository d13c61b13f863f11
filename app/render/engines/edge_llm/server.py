"""What Edge-LLM's OpenAI server does with a chat request before its chat template code.

`tensorrt-edgellm-serve` (experimental/server at 83f5f76 of guswns531/TensorRT-Edge-LLM)
reads the body into its request model (`api/protocol.py`: unknown fields are refused,
`chat_template_kwargs` may hold only `enable_thinking` and `reasoning_effort`), checks
the tools, the tool choice and the tool messages (`parsing/tool_calling.py`,
`validate_tool_request`), then turns the messages and tools into the runtime's request
(`runtime/engine.py`: `_convert_messages_to_cpp`, `_convert_tools_to_cpp`,
`_convert_tool_choice_to_cpp`), which `ChatTemplate::apply` renders (`messages.py`).
Each refusal here is one of the server's, in its words (its HTTP status 400 or 422).

The playground's request carries what a client sends that server: its kwargs are the
request's fields `tool_choice` and `parallel_tool_calls`, and `chat_template_kwargs`.
Assumed: the server runs with `--enable-auto-tool-choice` (the Command view's line does),
without which it refuses every request that offers tools with the default tool choice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.edge_llm.messages import Call, Message, ToolDefinition

#: The request's own fields among the playground's kwargs (ChatCompletionRequest).
REQUEST_FIELDS = ("tool_choice", "parallel_tool_calls")
#: What `chat_template_kwargs` may hold (ChatCompletionRequest._validate_request).
TEMPLATE_KWARGS = ("enable_thinking", "reasoning_effort")
#: The content part types `_convert_messages_to_cpp` takes, and what each becomes.
PART_TYPES = {
    "text": "text", "input_text": "text", "image": "image", "image_url": "image",
    "video": "video", "video_url": "video", "audio": "audio", "input_audio": "audio",
    "audio_url": "audio",
}  # fmt: skip
#: The function fields a tool may leave out, and what each must be when given.
FUNCTION_FIELDS = (("description", str, "a string"), ("parameters", dict, "an object"),
                   ("strict", bool, "a bool"))  # fmt: skip
#: How the server writes object arguments and parameters as JSON text for the runtime.
SEPARATORS = (",", ":")


def refused(message: str) -> TemplateProblem:
    return TemplateProblem("InvalidRequest", f"Edge-LLM's server refuses the request: {message}")


def check_request(request: RenderRequest) -> None:
    """The request model's refusals, for the fields the playground sends."""
    if not request.messages:
        raise refused("messages must not be empty")
    given = {
        "documents": request.documents is not None,
        "continue_final_message": bool(request.continue_final_message),
    }
    for name in (name for name, sent in given.items() if sent):
        raise refused(f"{name}: Extra inputs are not permitted (not a field of its request)")
    extra = sorted(set(request.kwargs) - {*REQUEST_FIELDS, *TEMPLATE_KWARGS})
    if extra:
        raise refused("unsupported chat_template_kwargs: " + ", ".join(extra))
    thinking, effort = (request.kwargs.get(key) for key in TEMPLATE_KWARGS)
    if thinking is not None and not isinstance(thinking, bool):
        raise refused("chat_template_kwargs.enable_thinking must be a bool")
    if effort is not None and not isinstance(effort, str):
        raise refused("chat_template_kwargs.reasoning_effort must be a string")


def check_tools(request: RenderRequest) -> tuple[str, str | None]:
    """`validate_tool_request`: the tool choice as the server resolves it (a mode, and
    the forced tool's name), or its refusal."""
    tools = [] if request.tools is None else request.tools
    try:
        names = _tool_names(tools)
        choice = _tool_choice(request.kwargs.get("tool_choice"), names, tools)
        _check_tool_messages(request.messages)
    except ValueError as error:
        raise refused(str(error)) from None
    if not isinstance(request.kwargs.get("parallel_tool_calls", True), bool):
        raise refused("'parallel_tool_calls' must be a boolean")
    return choice


def _tool_names(tools: Sequence[Any]) -> set[str]:
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise ValueError(f"{where} must be an object")
        if tool.get("type") != "function":
            raise ValueError(f"{where}.type must be 'function'")
        name, function = _function_name(tool, where), tool["function"]
        if name in names:
            raise ValueError(f"Duplicate tool name: {name}")
        names.add(name)
        for key, kind, noun in FUNCTION_FIELDS:
            if function.get(key) is not None and not isinstance(function[key], kind):
                raise ValueError(f"{where}.function.{key} must be {noun}")
    return names


def _tool_choice(choice: Any, names: set[str], tools: Sequence[Any]) -> tuple[str, str | None]:
    if choice is None:
        return ("auto" if tools else "none"), None
    if isinstance(choice, str):
        if choice in ("auto", "none", "required"):
            if choice != "none" and not tools:
                raise ValueError("'tool_choice' requires at least one tool")
            return choice, None
        if choice not in names:
            raise ValueError(f"Unknown forced tool name: {choice}")
        return "function", choice
    if isinstance(choice, dict):
        if choice.get("type") != "function":
            raise ValueError("tool_choice.type must be 'function'")
        function = choice.get("function")
        if not isinstance(function, dict):
            raise ValueError("tool_choice.function must be an object")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("tool_choice.function.name must be a string")
        if name not in names:
            raise ValueError(f"Unknown forced tool name: {name}")
        return "function", name
    raise ValueError("'tool_choice' must be 'auto', 'none', 'required', or a function choice")


def _check_tool_messages(messages: Sequence[Any]) -> None:
    """Assistant tool calls need an id and a function name; a tool result answers one."""
    seen: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise ValueError(f"{where} must be an object")
        if message.get("role") == "assistant":
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                raise ValueError(f"{where}.tool_calls must be an array")
            for call in calls:
                seen.add(_checked_call_id(call, where))
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise ValueError(f"{where}.tool_call_id must be a string")
            if call_id not in seen:
                raise ValueError(f"Dangling tool_call_id: {call_id}")
            content = message.get("content", "")
            if content is not None and not isinstance(content, str | dict | list):
                raise ValueError(f"{where}.content must be text or JSON")


def _checked_call_id(call: Any, where: str) -> str:
    if not isinstance(call, dict):
        raise ValueError(f"{where}.tool_calls entries must be objects")
    call_id = call.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"{where}.tool_calls[].id must be a string")
    _function_name(call, f"{where}.tool_calls[]")
    return call_id


def _function_name(holder: dict[str, Any], where: str) -> str:
    """The name of a tool's or a tool call's function, checked as the server checks it."""
    function = holder.get("function")
    if not isinstance(function, dict):
        raise ValueError(f"{where}.function must be an object")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.function.name must be a string")
    return name


def runtime_messages(messages: Sequence[Any]) -> list[Message]:
    """`_convert_messages_to_cpp`: the runtime's message for each request message."""
    try:
        return [_runtime_message(message) for message in messages]
    except (KeyError, ValueError) as error:  # the server answers these as 400
        raise refused(str(error)) from None


def _runtime_message(source: Any) -> Message:
    if not isinstance(source, dict):
        raise ValueError("a message must be an object")  # `validate_tool_request` says so
    role = source["role"]
    if not isinstance(role, str):
        # The runtime's Message (pybind11) takes text only: a TypeError the server
        # answers as 400 in pybind11's words, which are not the server's.
        raise ValueError("a message's role must be a string")
    message = Message(role=role, has_content="content" in source)
    key = next((k for k in ("reasoning_content", "reasoning") if k in source), None)
    if key is not None:
        message.reasoning = str(source[key] or "")  # Python's str(), as the server has it
    message.tool_call_id = str(source.get("tool_call_id") or "")
    message.name = str(source.get("name") or "")
    message.content_is_null = message.has_content and source["content"] is None
    message.content_is_array = isinstance(source.get("content"), list)
    message.items = _items(source.get("content"))
    calls = source.get("tool_calls") or []
    if source.get("function_call") and not calls:
        calls = [{"type": "function", "function": source["function_call"]}]
    # An empty list is no tool calls: the template takes the plain assistant path.
    message.tool_calls = [_call(call) for call in calls] if calls else None
    return message


def _items(content: Any) -> list[tuple[str, str]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [("text", content)]
    if not isinstance(content, list):
        raise ValueError("Message content must be a string, an array, or null")
    items = []
    for part in content:
        if isinstance(part, str):
            items.append(("text", part))
            continue
        if not isinstance(part, dict):
            raise ValueError("Message content array items must be strings or objects")
        kind = PART_TYPES.get(part.get("type", "text")) if _hashable(part.get("type")) else None
        if kind is None:
            raise ValueError(f"Unsupported content type: {part.get('type', 'text')}")
        text = part.get("text", "") if kind == "text" else ""
        if not isinstance(text, str):
            raise ValueError("a text part's text must be a string")  # pybind11's TypeError
        items.append((kind, text))
    return items


def _hashable(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _call(source: Any) -> Call:
    if not isinstance(source, dict) or not isinstance(source.get("function", source), dict):
        raise ValueError("a tool call and its function must be objects")  # an AttributeError
    function = source.get("function", source)
    arguments = function.get("arguments", {})
    text = isinstance(arguments, str)
    if text and arguments:
        try:
            json.loads(arguments)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"Invalid JSON in assistant tool-call arguments: {error.msg}"
            ) from None
    return Call(
        id=str(source.get("id") or ""),
        type=str(source.get("type") or "function"),
        name=str(function.get("name") or ""),
        arguments=arguments
        if text
        else json.dumps(arguments, ensure_ascii=False, separators=SEPARATORS),
        as_string=text,
    )


def runtime_tools(tools: Sequence[Any] | None, mode: str) -> list[ToolDefinition]:
    """`_convert_tools_to_cpp`: none when the tool choice is "none"."""
    if mode == "none" or not tools:
        return []
    definitions = []
    for tool in tools:
        function = tool["function"]
        description = function.get("description")
        if "description" in function and not isinstance(description, str):
            raise refused("a tool's description must be a string")  # pybind11's TypeError
        parameters = json.dumps(
            function.get("parameters", {}), ensure_ascii=False, separators=SEPARATORS
        )
        definitions.append(
            ToolDefinition(
                name=function["name"],
                description=description if "description" in function else None,
                parameters=parameters if "parameters" in function else None,
                strict=bool(function.get("strict", False)) if "strict" in function else None,
            )
        )
    return definitions


def tool_choice_json(mode: str, forced: str | None) -> Any:
    """`toolChoiceToJson` of the runtime's tool choice."""
    if mode == "function":
        return {"type": "function", "function": {"name": forced or ""}}
    return mode
