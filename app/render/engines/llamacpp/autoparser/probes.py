"""The autoparser's probe conversations and how it renders them.

common/chat-diff-analyzer.cpp renders the template with made-up messages whose texts
and names are easy to find again ("FFF_FIRST_FUN_F", "AA_ARG_FST_AA", ...), two at a
time differing in one respect, and reads the template's markup off the difference
(`compare_variants`). A probe render gets only the messages, the tools,
`add_generation_prompt`, `enable_thinking` and the special tokens: no dates, no kwargs
(autoparser::apply_template). A render that fails makes that comparison fail.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from app.render.engines.llamacpp.apply.types import ChatTemplate, ParseInputs
from app.render.engines.llamacpp.autoparser.diffing import DiffSplit, diff_split
from app.render.engines.llamacpp.messages import normalise_content

FUN_FIRST = "FFF_FIRST_FUN_F"
FUN_SECOND = "SSS_SECOND_FUN_S"
ARG_FIRST = "AA_ARG_FST_AA"
ARG_SECOND = "BB_ARG_SND_BB"
USER_MSG = "U_USER_MSG Hello END_U"
ASSISTANT_MSG = "A_ASST_MSG I can help END_A"
THINKING_CONTENT = "REASON_PART I am thinking END_R"
CALL_ID_001 = "call00001"
CALL_ID_002 = "call00002"
CALL_ID_999 = "call99999"

_SCHEMA = {
    "type": "object",
    "properties": {
        ARG_FIRST: {"type": "string", "description": "First argument"},
        ARG_SECOND: {"type": "string", "description": "Second argument"},
    },
    "required": [],
}

#: The two tools every tool probe declares.
TOOLS = [
    {
        "type": "function",
        "function": {"name": FUN_FIRST, "description": "Test function foo", "parameters": _SCHEMA},
    },
    {
        "type": "function",
        "function": {"name": FUN_SECOND, "description": "Test function bar", "parameters": _SCHEMA},
    },
]

USER = {"role": "user", "content": USER_MSG}
ANSWER = {"role": "assistant", "content": ASSISTANT_MSG}


def call(name: str, arguments: dict[str, Any], call_id: str = CALL_ID_001) -> dict[str, Any]:
    """build_tool_call: arguments as an object, as the probes pass them."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def calls_message(*calls: dict[str, Any]) -> dict[str, Any]:
    """An assistant turn with empty content and the given calls."""
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


BOTH_ARGS = {ARG_FIRST: "XXXX", ARG_SECOND: "YYYY"}
FIRST_CALL = call(FUN_FIRST, BOTH_ARGS)
SECOND_CALL = call(FUN_SECOND, BOTH_ARGS, CALL_ID_002)


class Comparison:
    """compare_variants_result: the two renders and their diff split."""

    def __init__(self, output_a: str, output_b: str) -> None:
        self.output_a = output_a
        self.output_b = output_b
        self.diff: DiffSplit = diff_split(output_a, output_b)


class Prober:
    """Renders probe conversations of one template (apply_template, compare_variants)."""

    def __init__(self, template: ChatTemplate) -> None:
        self.template = template

    def render(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        enable_thinking: bool = True,
    ) -> str | None:
        """One probe render, or None when the template fails on it."""
        prepared = normalise_content(copy.deepcopy(messages), self.template.caps, [])
        inputs = ParseInputs(
            template=self.template,
            messages=prepared,
            tools=copy.deepcopy(tools) if tools else None,
            add_generation_prompt=add_generation_prompt,
            enable_thinking=enable_thinking,
            extra_context={"enable_thinking": enable_thinking},
        )
        try:
            return self.template.apply(inputs)
        except Exception:  # any failure of the template: the C++ catches them all
            return None

    def compare(
        self,
        messages: list[dict[str, Any]],
        change: Callable[[dict[str, Any]], None],
        tools: list[dict[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        enable_thinking: bool = True,
    ) -> Comparison | None:
        """compare_variants: render A, apply `change` to a copy of its params, render B."""
        params_a: dict[str, Any] = {
            "messages": messages,
            "tools": tools,
            "add_generation_prompt": add_generation_prompt,
            "enable_thinking": enable_thinking,
        }
        params_b = dict(params_a)
        change(params_b)
        output_a = self.render(**params_a)
        output_b = self.render(**params_b)
        if output_a is None or output_b is None:
            return None
        return Comparison(output_a, output_b)

    def compare_messages(
        self, first: list[dict[str, Any]], second: list[dict[str, Any]], with_tools: bool = True
    ) -> Comparison | None:
        """The common case: the same tools, two message lists."""
        return self.compare(
            first, lambda p: p.update(messages=second), TOOLS if with_tools else None
        )
