"""The JSON context TensorRT Edge-LLM hands to Inja for a request, and what it changed.

Edge-LLM's `ChatTemplate::apply` (`cpp/chatTemplate/chatTemplate.cpp` of
guswns531/TensorRT-Edge-LLM at 83f5f768) builds one JSON object per render: the messages
(`messages.py`), the tools, and a fixed set of request fields, in this order:
`messages, tools, add_generation_prompt, bos_token, eos_token, strftime_now,
enable_thinking, reasoning_effort (only when set), parallel_tool_calls, tool_choice,
continue_final_message`. Its request has no chat_template_kwargs, documents or
continue_final_message, and its loader takes only the BOS and EOS tokens; every request
field of ours that Edge-LLM has no room for is reported as a sentence. The context is
checked key for key, order included, against the real code's recordings
(`tests/support/edge_llm/recorded.json`).
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
    developer_normalised,
    expects_content_blocks,
    message_json,
    runtime_message,
    supports_developer_role,
    tool_json,
)

#: The kwargs Edge-LLM's request has a field for (ChatTemplate::Options).
REQUEST_FIELDS = ("enable_thinking", "reasoning_effort", "parallel_tool_calls", "tool_choice")
#: The special tokens Edge-LLM's loader takes (ChatTemplate::load's bosToken, eosToken).
SPECIAL_TOKENS = ("bos_token", "eos_token")
#: The tool_choice strings Edge-LLM knows; any other string is "auto".
TOOL_CHOICES = ("auto", "none", "required")


def edge_context(
    request: RenderRequest, *, parse_string_arguments: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The context Edge-LLM's ChatTemplate::apply renders `request` with, and sentences
    saying what Edge-LLM changed or dropped. `parse_string_arguments`: whether a string
    tool-call `arguments` reaches Edge-LLM flagged as JSON (parsed) rather than as text
    (the default, the oracle's assumption A1). Raises TemplateProblem("InvalidRequest")
    where Edge-LLM refuses the request, and RenderError where its apply fails before Inja
    runs (a media part in a message the template renders as a string)."""
    if not request.messages:
        raise TemplateProblem("InvalidRequest", "Request must contain at least one message")
    rewrites = _request_rewrites(request)
    options = _options(request.kwargs, rewrites)
    messages = [runtime_message(item, parse_string_arguments) for item in request.messages]
    rewrites += _message_rewrites(request.messages, parse_string_arguments)
    if not supports_developer_role(request.template) and any(
        message.role == "developer" for message in messages
    ):
        messages, merged = developer_normalised(messages)
        rewrites.append(
            "developer message merged into the system message: the template does not name "
            "the developer role, so Edge-LLM joins every system and developer message into "
            "one first system message (separated by a blank line)"
            if merged
            else "developer message renamed system: the template does not name the developer role"
        )
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
    context: dict[str, Any] = {"messages": shaped, "tools": _tools(request.tools, rewrites)}
    context["add_generation_prompt"] = bool(request.add_generation_prompt)
    for name in SPECIAL_TOKENS:
        value = request.special_tokens.get(name, "")
        context[name] = value if isinstance(value, str) else ""
    # Edge-LLM registers strftime_now as a callback and also sets the variable to true.
    context["strftime_now"] = True
    context.update(options)
    context["continue_final_message"] = False
    return context, rewrites


def _is_list_content(message: Any, role: str | None = None) -> bool:
    if not isinstance(message, dict) or role not in (None, message.get("role")):
        return False
    return isinstance(message.get("content"), list)


def _request_rewrites(request: RenderRequest) -> list[str]:
    """Sentences for the request fields Edge-LLM's request and loader have no room for."""
    rewrites = []
    for key in request.kwargs:
        if key in SPECIAL_TOKENS:
            rewrites.append(
                f"kwargs {key} ignored: Edge-LLM takes {key} from the model's tokenizer, "
                "not from the request"
            )
        elif key not in REQUEST_FIELDS:
            rewrites.append(f"kwargs {key} dropped: Edge-LLM's request has no chat_template_kwargs")
    others = [key for key in request.special_tokens if key not in SPECIAL_TOKENS]
    if others:
        rewrites.append(
            f"special tokens {', '.join(others)} dropped: Edge-LLM passes only bos_token and "
            "eos_token"
        )
    if request.documents is not None:
        rewrites.append("documents dropped: Edge-LLM's request has no documents")
    if request.continue_final_message:
        rewrites.append(
            "continue_final_message ignored: Edge-LLM has none (the template sees "
            "continue_final_message false and the request's add_generation_prompt)"
        )
    return rewrites


def _options(kwargs: dict[str, Any], rewrites: list[str]) -> dict[str, Any]:
    """enable_thinking, reasoning_effort, parallel_tool_calls and tool_choice, in the
    context's order, from the kwargs of the same names (Edge-LLM's request fields)."""
    options: dict[str, Any] = {"enable_thinking": _flag(kwargs, "enable_thinking", False)}
    effort = kwargs.get("reasoning_effort")
    if isinstance(effort, str) and effort:
        options["reasoning_effort"] = effort
    elif effort not in (None, ""):
        rewrites.append("kwargs reasoning_effort dropped: Edge-LLM's field takes a string")
    options["parallel_tool_calls"] = _flag(kwargs, "parallel_tool_calls", True)
    options["tool_choice"] = _tool_choice(kwargs.get("tool_choice"), rewrites)
    return options


def _flag(kwargs: dict[str, Any], name: str, default: bool) -> bool:
    value = kwargs.get(name, default)
    if not isinstance(value, bool):
        # The recorder's request reader fails on a non-boolean (nlohmann's type_error.302).
        raise TemplateProblem(
            "InvalidRequest", f"{name} must be true or false: Edge-LLM's request field is boolean"
        )
    return value


def _tool_choice(value: Any, rewrites: list[str]) -> Any:
    """Edge-LLM's ToolChoice as JSON: a mode string, or a function by name."""
    if value is None:
        return "auto"
    if isinstance(value, str):
        if value in TOOL_CHOICES:
            return value
        rewrites.append(f"tool_choice {value!r} read as 'auto': Edge-LLM knows none, required")
        return "auto"
    if isinstance(value, dict):
        function = value.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        name = name if isinstance(name, str) else ""
        return {"type": "function", "function": {"name": name}}
    rewrites.append("tool_choice read as 'auto': Edge-LLM takes a string or an object")
    return "auto"


def _tools(tools: list[Any] | None, rewrites: list[str]) -> list[dict[str, Any]] | None:
    """The tool definitions, or null when there are none (an empty list too)."""
    if not tools:
        if tools is not None:
            rewrites.append("tools [] passed as null: Edge-LLM gives null when there are none")
        return None
    for index, tool in enumerate(tools, 1):
        body = tool.get("function") if isinstance(tool, dict) else None
        extra = [key for key in tool if key not in ("type", "function")] if body else []
        if isinstance(body, dict):
            extra += [f"function.{key}" for key in body if key not in TOOL_FIELDS]
        if extra:
            rewrites.append(
                f"tool {index}'s {', '.join(extra)} dropped: Edge-LLM's tool definition has "
                "only name, description, parameters and strict"
            )
    return [tool_json(tool) for tool in tools]


def _message_rewrites(messages: list[Any], parse_string_arguments: bool) -> list[str]:
    """Sentences for message fields Edge-LLM's runtime message has no room for."""
    rewrites = []
    for index, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            continue
        extra = [key for key in message if key not in (*MESSAGE_FIELDS, "tool_calls")]
        if extra:
            rewrites.append(
                f"message {index}'s {', '.join(extra)} dropped: Edge-LLM's message has no "
                "such field"
            )
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and message.get("reasoning", reasoning) != reasoning:
            rewrites.append(
                f"message {index}'s reasoning replaced by its reasoning_content: Edge-LLM "
                "keeps one and passes it under both names"
            )
        calls = message.get("tool_calls")
        if (
            not parse_string_arguments
            and isinstance(calls, list)
            and any(_text_args(call) for call in calls)
        ):
            rewrites.append(
                f"message {index}'s tool-call arguments passed as text: Edge-LLM hands string "
                "arguments to the template unparsed"
            )
    return rewrites


def _text_args(call: Any) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return isinstance(function, dict) and isinstance(function.get("arguments"), str)
