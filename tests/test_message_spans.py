"""Tokens per message over the library's real templates: each message's part of the
prompt holds what the template wrote for it, a tool-call turn's markup included."""

from __future__ import annotations

import json
from datetime import datetime
from itertools import pairwise

import pytest

from app.analysis.spans import end_in, message_ends
from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from app.render.limits import RenderLimits
from app.sources.library import Library

LIBRARY = Library()
#: Words that occur in exactly one message, so each can be looked for in the parts.
CITY, RESULT, ANSWER = "Reykjavik", "minus-three-sleet", "Sleet at minus three."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CALL = {
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": json.dumps({"city": CITY})},
}
MESSAGES = [
    {"role": "user", "content": "What is the weather there?"},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call00001", "content": RESULT},
    {"role": "assistant", "content": ANSWER},
    {"role": "user", "content": "Thanks."},
]
#: The library entries whose template writes a tool call's arguments into the prompt.
WITH_TOOL_CALLS = {
    "qwen2.5", "qwen3", "qwq", "llama3.1", "llama3.2", "llama3.3", "hermes3-tool-use",
    "mistral-nemo", "mistral-small-3.2", "deepseek-r1-distill", "gpt-oss",
}  # fmt: skip


def split(name: str, messages: list[dict] = MESSAGES) -> tuple[str, list[str]] | None:
    """The library template's prompt for `messages` with the tools, and each message's
    part of it; None when the template writes no tool-call arguments."""
    request = RenderRequest(
        template=LIBRARY.template(name) or "",
        messages=messages,
        tools=TOOLS,
        add_generation_prompt=True,
        special_tokens={"bos_token": "<BOS>", "eos_token": "<EOS>"},
        now=datetime(2026, 1, 2),
    )
    limits = RenderLimits()
    try:
        prompt = engines.render(request, limits).prompt
    except TemplateProblem:
        return None
    if CITY not in prompt:
        return None
    ends = message_ends(request, prompt, limits)
    assert None not in ends
    return prompt, [prompt[a:b] for a, b in pairwise([0, *ends])]


def test_the_templates_with_tool_calls_are_the_expected_ones() -> None:
    rendered = {entry.name for entry in LIBRARY.entries if split(entry.name)}
    assert rendered == WITH_TOOL_CALLS


@pytest.mark.parametrize("name", sorted(WITH_TOOL_CALLS))
def test_a_tool_call_counts_under_the_assistant_message_that_made_it(name: str) -> None:
    found = split(name)
    assert found is not None
    parts = found[1]
    holding = [index for index, part in enumerate(parts) if CITY in part]
    assert holding == [1], f"the call's arguments are in the parts of messages {holding}"
    assert [index for index, part in enumerate(parts) if RESULT in part] == [2]
    assert [index for index, part in enumerate(parts) if ANSWER in part] == [3]


@pytest.mark.parametrize(
    ("name", "call_part"),
    [
        (
            "qwen3",
            '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": '
            '{"city": "Reykjavik"}}\n</tool_call><|im_end|>\n',
        ),
        (
            "hermes3-tool-use",
            '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": '
            '{"city": "Reykjavik"}}\n</tool_call><|im_end|>\n',
        ),
        (
            "llama3.1",
            '<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "get_weather", '
            '"parameters": "{\\"city\\": \\"Reykjavik\\"}"}<|eot_id|>',
        ),
    ],
)
def test_the_tool_call_turn_is_the_assistant_part_whole(name: str, call_part: str) -> None:
    found = split(name)
    assert found is not None
    assert found[1][1] == call_part


def test_consecutive_tool_results_each_keep_their_own() -> None:
    # Qwen3 writes both results in one user turn: the first result's part ends where
    # the second begins, not after it.
    second = {"role": "tool", "tool_call_id": "call00002", "content": "second-result"}
    found = split("qwen3", [*MESSAGES[:3], second, *MESSAGES[3:]])
    assert found is not None
    parts = found[1]
    assert parts[2] == "<|im_start|>user\n<tool_response>\nminus-three-sleet\n</tool_response>"
    assert parts[3] == "\n<tool_response>\nsecond-result\n</tool_response><|im_end|>\n"


def test_mistral_tools_before_the_last_user_turn_move_no_message() -> None:
    # The tool list comes before the last user turn, so a conversation that ends early
    # has it before its first: that first turn still ends after its own [/INST].
    found = split("mistral-nemo")
    assert found is not None
    parts = found[1]
    assert parts[0] == "<BOS>[INST]What is the weather there?[/INST]"
    assert parts[4].startswith("[AVAILABLE_TOOLS]") and parts[4].endswith("[INST]Thanks.[/INST]")


def test_a_message_never_ends_inside_a_marker() -> None:
    # Phi-3.5 writes EOS after a last message, and the whole prompt has <|user|> there:
    # the two agree up to "<|", but the message ends before the marker.
    prompt = "<|user|>\nhi<|end|>\n<|assistant|>\nhello<|end|>\n<|user|>\nbye<|end|>\n"
    alone = "<|user|>\nhi<|end|>\n<|assistant|>\nhello<|end|>\n<|endoftext|>"
    assert end_in(prompt, alone) == prompt.index("<|user|>\nbye")
