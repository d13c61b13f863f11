"""The JSON context TensorRT Edge-LLM hands to Inja for a request, and what it changed.

The request goes through Edge-LLM's OpenAI server first (`server.py`: its refusals, and
the runtime request it makes), then `ChatTemplate::apply` (`cpp/chatTemplate/
chatTemplate.cpp` of guswns531/TensorRT-Edge-LLM at 83f5f768) builds one JSON object per
render: the messages (`messages.py`), the tools, and a fixed set of request fields, in
this order: `messages, tools, add_generation_prompt, bos_token, eos_token, strftime_now,
enable_thinking, reasoning_effort (only when set), parallel_tool_calls, tool_choice,
continue_final_message`. Its loader takes only the BOS and EOS tokens; what Edge-LLM
changed or left out is reported as a sentence. The context is checked key for key, order
included, against the real code's recordings (`oracles/edge_llm/recorded.json`).
"""

from __future__ import annotations

from typing import Any

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.edge_llm.inja.render import RenderError
from app.render.engines.edge_llm.messages import (
    MESSAGE_FIELDS,
    TOOL_FIELDS,
    MediaRefused,
    Message,
    developer_normalised,
    expects_content_blocks,
    message_json,
    supports_developer_role,
    tool_json,
)
from app.render.engines.edge_llm.server import (
    check_request,
    check_tools,
    runtime_messages,
    runtime_tools,
    tool_choice_json,
)

#: The special tokens Edge-LLM's loader takes (ChatTemplate::load's bosToken, eosToken).
SPECIAL_TOKENS = ("bos_token", "eos_token")


def edge_context(
    request: RenderRequest, *, checked: bool = True, parse_string_arguments: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The context Edge-LLM's ChatTemplate::apply renders `request` with, and sentences
    saying what Edge-LLM changed or dropped. Raises TemplateProblem("InvalidRequest")
    where its server refuses the request, and RenderError where apply fails before Inja
    runs (a media part in a message the template renders as a string).

    `checked=False` leaves the server's refusals out, and `parse_string_arguments` marks
    string tool-call arguments as JSON (the server never does): the runtime's request as
    an application that calls Edge-LLM's C++ API directly can make it, as the recording
    did (`oracles/edge_llm/recorded.json`)."""
    if checked:
        check_request(request)
        mode, forced = check_tools(request)
    else:
        mode, forced = _unchecked_choice(request)
    if not request.messages:
        raise TemplateProblem("InvalidRequest", "Request must contain at least one message")
    messages = runtime_messages(request.messages)
    if parse_string_arguments:
        for call in (call for message in messages for call in message.tool_calls or []):
            call.as_string = False
    rewrites = _request_rewrites(request) + _message_rewrites(request.messages, messages)
    messages = _developer_shaped(request.template, messages, rewrites)
    context: dict[str, Any] = {
        "messages": _shaped(request, messages, rewrites),
        "tools": _tools(request.tools, mode, rewrites),
        "add_generation_prompt": bool(request.add_generation_prompt),
    }
    for name in SPECIAL_TOKENS:
        value = request.special_tokens.get(name, "")
        context[name] = value if isinstance(value, str) else ""
    # Edge-LLM registers strftime_now as a callback and also sets the variable to true.
    context["strftime_now"] = True
    context["enable_thinking"] = request.kwargs.get("enable_thinking") is True
    if effort := request.kwargs.get("reasoning_effort"):
        context["reasoning_effort"] = effort
    context["parallel_tool_calls"] = request.kwargs.get("parallel_tool_calls", True)
    context["tool_choice"] = tool_choice_json(mode, forced)
    context["continue_final_message"] = False
    return context, rewrites


def _is_list_content(message: Any, role: str | None = None) -> bool:
    if not isinstance(message, dict) or role not in (None, message.get("role")):
        return False
    return isinstance(message.get("content"), list)


def _request_rewrites(request: RenderRequest) -> list[str]:
    """Sentences for the model's special tokens Edge-LLM's loader has no room for."""
    others = [key for key in request.special_tokens if key not in SPECIAL_TOKENS]
    if not others:
        return []
    return [
        f"special tokens {', '.join(others)} dropped: Edge-LLM passes only bos_token and eos_token"
    ]


def _message_rewrites(sources: list[Any], messages: list[Message]) -> list[str]:
    """Sentences for message fields Edge-LLM's runtime message has no room for, and
    string tool-call arguments it passes as they are."""
    rewrites = []
    for index, (source, message) in enumerate(zip(sources, messages, strict=True), 1):
        extra = [key for key in source if key not in MESSAGE_FIELDS]
        if extra:
            rewrites.append(
                f"message {index}'s {', '.join(extra)} dropped: Edge-LLM's message has no "
                "such field"
            )
        both = "reasoning_content" in source and "reasoning" in source
        if both and source["reasoning"] != source["reasoning_content"]:
            rewrites.append(
                f"message {index}'s reasoning replaced by its reasoning_content: Edge-LLM "
                "keeps one and passes it under both names"
            )
        if any(call.as_string for call in message.tool_calls or []):
            rewrites.append(
                f"message {index}'s tool-call arguments passed as text: Edge-LLM's server "
                "hands string arguments to the template unparsed"
            )
        if source.get("tool_calls") == []:
            rewrites.append(
                f"message {index}'s empty tool_calls left out: Edge-LLM's server passes none"
            )
    return rewrites


def _developer_shaped(template: str, messages: list[Message], rewrites: list[str]) -> list[Message]:
    """normalizeDeveloperMessages, when the template does not name the developer role."""
    if supports_developer_role(template) or not any(m.role == "developer" for m in messages):
        return messages
    messages, merged = developer_normalised(messages)
    rewrites.append(
        "developer message merged into the system message: the template does not name the "
        "developer role, so Edge-LLM joins every system and developer message into one first "
        "system message (separated by a blank line)"
        if merged
        else "developer message renamed system: the template does not name the developer role"
    )
    return messages


def _shaped(request: RenderRequest, messages: list[Message], rewrites: list[str]) -> list[Any]:
    """messageToJson of each message: blocks or strings, as the template's text asks."""
    blocks = expects_content_blocks(request.template)
    try:
        shaped = [message_json(message, blocks) for message in messages]
    except MediaRefused as error:
        raise RenderError(str(error), None) from None
    if blocks and any(isinstance(message.get("content"), list) for message in shaped):
        rewrites.append(
            "content shaped as blocks: the template loops over .content, so Edge-LLM gives "
            "each message's content (tool results excepted) as a list of "
            '{"type": "text", "text": ...} blocks'
        )
    if blocks and any(_is_list_content(item, "tool") for item in request.messages):
        rewrites.append(
            "tool message content joined into one string: Edge-LLM passes tool results as strings"
        )
    if not blocks and any(_is_list_content(item) for item in request.messages):
        rewrites.append(
            "content parts joined into one string (by newlines): the template does not loop "
            "over .content"
        )
    return shaped


def _unchecked_choice(request: RenderRequest) -> tuple[str, str | None]:
    """The tool choice an application calling the C++ API gives as it is: a mode, or a
    function by name (any other value is "auto")."""
    choice = request.kwargs.get("tool_choice")
    if choice in ("none", "required"):
        return choice, None
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        return "function", name if isinstance(name, str) else ""
    return "auto", None


def _tools(tools: list[Any] | None, mode: str, rewrites: list[str]) -> list[dict[str, Any]] | None:
    """The tool definitions, or null when there are none (an empty list, or none left by
    tool_choice "none")."""
    if tools and mode == "none":
        rewrites.append('tools left out: Edge-LLM\'s server passes none with tool_choice "none"')
    if tools == []:
        rewrites.append("tools [] passed as null: Edge-LLM gives null when there are none")
    for index, tool in enumerate(tools or [], 1):
        body = tool.get("function") if isinstance(tool, dict) else None
        extra = [key for key in tool if key not in ("type", "function")] if body else []
        if isinstance(body, dict):
            extra += [f"function.{key}" for key in body if key not in TOOL_FIELDS]
        if extra:
            rewrites.append(
                f"tool {index}'s {', '.join(extra)} dropped: Edge-LLM's tool definition has "
                "only name, description, parameters and strict"
            )
    return [tool_json(tool) for tool in runtime_tools(tools, mode)] or None
