"""Edge-LLM's OpenAI server in front of its chat template code (`edge_llm/server.py`).

Every expectation is what experimental/server at 83f5f76 of guswns531/TensorRT-Edge-LLM
says: api/protocol.py (the request model), parsing/tool_calling.py
(`validate_tool_request`) and runtime/engine.py (`_convert_messages_to_cpp`,
`_convert_tools_to_cpp`), then chatTemplate.cpp's messageToJson and toolToJson.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.edge_llm.context import edge_context

USER = {"role": "user", "content": "Hi"}
TOOLS = [{"type": "function", "function": {"name": "f"}}]
REFUSES = "Edge-LLM's server refuses the request: "


def context(messages: list[Any], **fields: Any) -> dict[str, Any]:
    request = RenderRequest(template="{{ messages }}", messages=messages, **fields)
    return edge_context(request)[0]


def refusal(messages: list[Any], **fields: Any) -> str:
    with pytest.raises(TemplateProblem) as refused:
        context(messages, **fields)
    assert refused.value.type == "InvalidRequest"
    assert refused.value.message.startswith(REFUSES), refused.value.message
    return refused.value.message[len(REFUSES) :]


def assistant_call(**function: Any) -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", **function}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_fields_its_request_model_does_not_have_are_refused():
    """extra="forbid": documents and continue_final_message are no fields of it."""
    assert refusal([USER], documents=[{"text": "d"}]).startswith("documents: Extra inputs")
    assert refusal([USER], continue_final_message=True).startswith("continue_final_message:")


def test_chat_template_kwargs_hold_only_enable_thinking_and_reasoning_effort():
    assert refusal([USER], kwargs={"b": 1, "a": 2}) == "unsupported chat_template_kwargs: a, b"
    assert refusal([USER], kwargs={"bos_token": "x"}).endswith(": bos_token")
    assert refusal([USER], kwargs={"reasoning_effort": 1}) == (
        "chat_template_kwargs.reasoning_effort must be a string"
    )
    taken = context([USER], kwargs={"enable_thinking": True, "reasoning_effort": "high"})
    assert (taken["enable_thinking"], taken["reasoning_effort"]) == (True, "high")
    # An empty effort is the runtime's "unset": the key is left out.
    assert "reasoning_effort" not in context([USER], kwargs={"reasoning_effort": ""})


def test_tools_are_checked_in_its_words():
    assert refusal([USER], tools=[5]) == "tools[0] must be an object"
    assert refusal([USER], tools=[{"type": "x"}]) == "tools[0].type must be 'function'"
    assert refusal([USER], tools=[{"type": "function", "function": {}}]) == (
        "tools[0].function.name must be a string"
    )
    assert refusal([USER], tools=TOOLS * 2) == "Duplicate tool name: f"
    odd = [{"type": "function", "function": {"name": "f", "parameters": []}}]
    assert refusal([USER], tools=odd) == "tools[0].function.parameters must be an object"


def test_tool_choice_is_resolved_as_the_server_resolves_it():
    assert context([USER])["tool_choice"] == "none"  # no tools, none named
    assert context([USER], tools=TOOLS)["tool_choice"] == "auto"
    assert refusal([USER], kwargs={"tool_choice": "required"}) == (
        "'tool_choice' requires at least one tool"
    )
    assert refusal([USER], tools=TOOLS, kwargs={"tool_choice": "g"}) == (
        "Unknown forced tool name: g"
    )
    forced = context([USER], tools=TOOLS, kwargs={"tool_choice": "f"})["tool_choice"]
    assert forced == {"type": "function", "function": {"name": "f"}}
    # "none" keeps the tools from the runtime: the template sees null.
    none = context([USER], tools=TOOLS, kwargs={"tool_choice": "none"})
    assert (none["tools"], none["tool_choice"]) == (None, "none")
    assert refusal([USER], kwargs={"parallel_tool_calls": "no"}) == (
        "'parallel_tool_calls' must be a boolean"
    )


def test_tool_definitions_keep_what_the_request_gave():
    """has_description/has_parameters/has_strict: a key given is passed, null included
    (parameters None is JSON null; strict None is bool(None))."""
    tools = [
        {"type": "function", "function": {"name": "f", "parameters": None, "strict": None}},
        {"type": "function", "function": {"name": "g", "description": "d"}},
    ]
    assert context([USER], tools=tools)["tools"] == [
        {"type": "function", "function": {"name": "f", "parameters": None, "strict": False}},
        {"type": "function", "function": {"name": "g", "description": "d"}},
    ]


def test_tool_messages_must_answer_a_call():
    result = {"role": "tool", "tool_call_id": "c9", "content": "x"}
    assert refusal([USER, assistant_call(arguments="{}"), result]) == "Dangling tool_call_id: c9"
    assert refusal([USER, {"role": "tool", "content": "x"}]) == (
        "messages[1].tool_call_id must be a string"
    )
    no_id = {"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}
    assert refusal([USER, no_id]) == "messages[1].tool_calls[].id must be a string"


def test_tool_call_arguments_as_the_server_passes_them():
    """A string stays a string (arguments_is_string), once checked as JSON; an object is
    written as JSON and parsed back by the C++ code, key order kept; none is `{}`."""

    def arguments(message: dict[str, Any]) -> Any:
        return context([USER, message])["messages"][1]["tool_calls"][0]["function"]["arguments"]

    assert arguments(assistant_call(arguments='{"b": 1}')) == '{"b": 1}'
    assert list(arguments(assistant_call(arguments={"b": 1, "a": 2}))) == ["b", "a"]
    assert arguments(assistant_call()) == {}
    assert refusal([USER, assistant_call(arguments="{oops")]) == (
        "Invalid JSON in assistant tool-call arguments: Expecting property name enclosed in "
        "double quotes"
    )


def test_legacy_function_call_becomes_a_tool_call():
    message = {"role": "assistant", "content": None, "function_call": {"name": "f"}}
    calls = context([USER, message])["messages"][1]["tool_calls"]
    assert calls == [{"id": "", "type": "function", "function": {"name": "f", "arguments": {}}}]


def test_content_parts_as_the_server_reads_them():
    """Strings and input_text are text; image_url, video_url and input_audio are media
    (which a string-content template refuses); anything else is refused."""
    parts = ["a", {"type": "input_text", "text": "b"}, {"text": "c"}]
    assert context([{"role": "user", "content": parts}])["messages"][0]["content"] == "a\nb\nc"
    assert refusal([{"role": "user", "content": [{"type": "file"}]}]) == (
        "Unsupported content type: file"
    )
    assert refusal([{"role": "user", "content": [5]}]) == (
        "Message content array items must be strings or objects"
    )
    assert refusal([{"role": "user", "content": 5}]) == (
        "Message content must be a string, an array, or null"
    )
    assert refusal([{"content": "x"}]) == "'role'"  # its KeyError, as the server says it


def test_reasoning_is_taken_by_key_as_the_server_does():
    """reasoning_content first, else reasoning; null is an empty reasoning; other values
    are written by Python's str()."""
    first = {"role": "assistant", "content": "x", "reasoning_content": None, "reasoning": "r"}
    number = {"role": "assistant", "content": "x", "reasoning": 7}
    shaped = context([USER, first, number])["messages"]
    assert (shaped[1]["reasoning_content"], shaped[1]["reasoning"]) == ("", "")
    assert shaped[2]["reasoning_content"] == "7"
