"""vLLM's `minimax_m2` tool parser (0.33.0: `MinimaxM2Parser` on the parser engine).

vLLM 0.33.0 registers no parser named `minimax` (MiniMax-Text-01's JSON format); MiniMax
M2's templates write::

    <minimax:tool_call><invoke name="get_weather">
    <parameter name="city">Seattle</parameter>
    </invoke></minimax:tool_call>

Each `<invoke>` is one call, kept only when the request declares a tool of that name;
parameter values are strings unless the tool schema types them. The content is the text
before the first call, stripped; text after the calls is dropped.
"""

from __future__ import annotations

import json
import re

from app.render.engines.vllm.answers._engine_reading import read_given
from app.render.engines.vllm.answers._state_machine import (
    CALL_ARGS,
    CALL_END,
    CALL_START,
    Grammar,
    Move,
)
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import State as S
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "minimax_m2"

#: One parameter: its name (quoted either way, or bare) and its value up to the close
#: or the next parameter. Every repeat is bounded by a character class that the next
#: literal excludes, so a failed attempt never rescans.
PARAMETER = re.compile(
    r"<\s*parameter\s+name\s*=\s*"
    r"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^>\s]+))"
    r"\s*>"
    r"(?P<value>.*?)"
    r"(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s+name\s*=))",
    re.DOTALL,
)


def read_args(raw: str) -> str:
    """The `<parameter name="k">v</parameter>` tags as a JSON object of strings."""
    params: dict[str, object] = {}
    for match in PARAMETER.finditer(raw):
        name = (match.group("dq") or match.group("sq") or match.group("bare") or "").strip()
        if name:
            params[name] = match.group("value")
    return json.dumps(params, ensure_ascii=False)


_INVOKES = ("INVOKE_DQ", "INVOKE_SQ", "INVOKE_BARE")

GRAMMAR = Grammar(
    name=NAME,
    markers={
        "THINK_START": ("<think>",),
        "THINK_END": ("</think>",),
        "TOOL_START": ("<minimax:tool_call>",),
        "PARAM_START": ("<parameter name=",),
        "PARAM_END": ("</parameter>",),
        "TOOL_END": ("</minimax:tool_call>",),
        "INVOKE_DQ": ('<invoke name="',),
        "INVOKE_SQ": ("<invoke name='",),
        "INVOKE_BARE": ("<invoke name=",),
        "INVOKE_END": ("</invoke>",),
        "NAME_END_DQ": ('">',),
        "NAME_END_SQ": ("'>",),
        "NAME_END_BARE": (">",),
    },
    moves={
        (S.REASONING, "THINK_START"): Move(S.REASONING),
        (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
        (S.CONTENT, "THINK_END"): Move(S.CONTENT),
        (S.REASONING, "TOOL_START"): Move(S.TOOL_PREAMBLE, (R_END,)),
        (S.CONTENT, "TOOL_START"): Move(S.TOOL_PREAMBLE),
        (S.TOOL_ARGS, "PARAM_START"): Move(S.TOOL_ARGS, (CALL_ARGS,)),
        (S.TOOL_ARGS, "PARAM_END"): Move(S.TOOL_ARGS, (CALL_ARGS,)),
        (S.TOOL_PREAMBLE, "TOOL_END"): Move(S.CONTENT),
        (S.TOOL_BETWEEN, "TOOL_END"): Move(S.CONTENT),
        (S.CONTENT, "TOOL_END"): Move(S.CONTENT),
        (S.TOOL_ARGS, "INVOKE_END"): Move(S.TOOL_BETWEEN, (CALL_END,)),
        **{
            (state, invoke): Move(S.TOOL_NAME, (CALL_START,))
            for state in (S.CONTENT, S.TOOL_PREAMBLE, S.TOOL_BETWEEN)
            for invoke in _INVOKES
        },
        **{
            (S.TOOL_NAME, end): Move(S.TOOL_ARGS)
            for end in ("NAME_END_DQ", "NAME_END_SQ", "NAME_END_BARE")
        },
    },
    start=S.REASONING,
    convert_args=read_args,
    check_tool_names=True,
)


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser minimax_m2` (on the content
    after the reasoning parser)."""
    return read_given(GRAMMAR, text, given)
