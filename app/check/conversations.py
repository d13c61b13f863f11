"""The check's standard conversations: the page's examples and a few more, so each part
of a chat template a runtime exercises is rendered once (plain, system, multi-turn,
tools offered, a tool round with each argument form, parallel calls, reasoning in
history, generation prompt on and off)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.analysis.examples import EXAMPLES
from app.analysis.portability_cases import Conversation
from app.answers.menu import EXAMPLE_TOOLS
from app.render.core import RenderRequest

_BY_NAME = {example["name"]: example for example in EXAMPLES}
_QUESTION = {"role": "user", "content": "What's the weather in Lisbon?"}
_CALL = {
    "id": "call00001",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
}
_TOOL_ROUND = [
    _QUESTION,
    {"role": "assistant", "content": "", "tool_calls": [_CALL]},
    {"role": "tool", "tool_call_id": "call00001", "content": '{"temperature": 21}'},
    {"role": "assistant", "content": "It is 21 °C in Lisbon."},
    {"role": "user", "content": "And in Oslo?"},
]

#: Each one's name, messages, tools, generation prompt and `tool_arguments` (how the
#: caller sends a call's arguments: `RenderRequest.tool_arguments`).
STANDARD: tuple[dict[str, Any], ...] = (
    _BY_NAME["plain"],
    {"name": "system", "messages": [{"role": "system", "content": "Answer briefly."}, _QUESTION]},
    _BY_NAME["multi-turn"],
    {"name": "tools-offered", "tools": EXAMPLE_TOOLS, "messages": [_QUESTION]},
    {
        "name": "tool-round-json-text",
        "tools": EXAMPLE_TOOLS,
        "messages": _TOOL_ROUND,
        "tool_arguments": "json_text",
    },
    {
        "name": "tool-round-objects",
        "tools": EXAMPLE_TOOLS,
        "messages": _TOOL_ROUND,
        "tool_arguments": "objects",
    },
    _BY_NAME["parallel-tools"],
    _BY_NAME["reasoning"],
    {**_BY_NAME["multi-turn"], "name": "no-generation-prompt", "add_generation_prompt": False},
    _BY_NAME["continue"],
)

#: The conversations whose calls' arguments go as objects, as library callers pass them.
OBJECT_ARGUMENTS = frozenset(c["name"] for c in STANDARD if c.get("tool_arguments") == "objects")
#: The names, in order (the JSON report's conversations).
NAMES = tuple(case["name"] for case in STANDARD)


def standard_cases(base: RenderRequest) -> list[Conversation]:
    """The standard conversations as render requests with `base`'s template and tokens."""
    return [
        Conversation(
            case["name"],
            replace(
                base,
                messages=case["messages"],
                tools=case.get("tools"),
                add_generation_prompt=case.get("add_generation_prompt", True),
                continue_final_message=case.get("continue_final_message", False),
                tool_arguments=case.get("tool_arguments", "as_written"),
            ),
        )
        for case in STANDARD
    ]
