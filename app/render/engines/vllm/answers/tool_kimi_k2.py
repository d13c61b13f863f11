"""vLLM's `kimi_k2` tool parser (0.33.0: `KimiK2Parser` on the parser engine).

Kimi K2 writes calls in a section, each with its own id as header::

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
    <|tool_call_argument_begin|>{"city": "Tokyo"}<|tool_call_end|><|tool_calls_section_end|>

vLLM keeps that header as the call's id and takes the name from it (`get_weather`); the
arguments are passed on as written (stripped), retyped only where the tool schema says
a value is not a string. Text after the section is dropped; `</think>` in the content is
dropped too (unless no reasoning parser is configured, or thinking is off).
"""

from __future__ import annotations

import re

from app.render.engines.vllm.answers._engine_reading import read_given
from app.render.engines.vllm.answers._state_machine import CALL_END, CALL_START, Grammar, Move
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import State as S
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "kimi_k2"

SECTION_START = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
CALL_FINISH = "<|tool_call_end|>"
ARGS_BEGIN = "<|tool_call_argument_begin|>"

#: A header vLLM reads as an id: anything, a colon, digits (the last such on the line).
HEADER = re.compile(r"(.+):(\d+)")


def read_header(header: str) -> tuple[str, str] | None:
    """`functions.get_weather:0` -> (that id, "get_weather"); None when not an id."""
    line = header.strip().split("\n", 1)[0]
    match = HEADER.match(line)
    if match is None:
        return None
    call_id = match.group(0).strip()
    return call_id, call_id.split(":")[0].removeprefix("functions.")


def grammar(thinking: bool) -> Grammar:
    """Kimi K2's table; the think markers exist only while thinking is on."""
    markers = {
        "SECTION_START": (SECTION_START,),
        "SECTION_END": (SECTION_END,),
        "CALL_BEGIN": (CALL_BEGIN,),
        "CALL_FINISH": (CALL_FINISH,),
        "ARGS_BEGIN": (ARGS_BEGIN,),
    }
    moves = {
        (S.REASONING, "SECTION_START"): Move(S.TOOL_PREAMBLE, (R_END,)),
        (S.CONTENT, "SECTION_START"): Move(S.TOOL_PREAMBLE),
        (S.TOOL_PREAMBLE, "CALL_BEGIN"): Move(S.TOOL_NAME, (CALL_START,)),
        (S.TOOL_NAME, "ARGS_BEGIN"): Move(S.TOOL_ARGS),
        (S.TOOL_ARGS, "CALL_FINISH"): Move(S.TOOL_BETWEEN, (CALL_END,)),
        (S.TOOL_ARGS, "SECTION_END"): Move(S.TOOL_PREAMBLE, (CALL_END,)),
        (S.TOOL_BETWEEN, "CALL_BEGIN"): Move(S.TOOL_NAME, (CALL_START,)),
        # After the section the engine stays in tool markup: trailing text is dropped.
        (S.TOOL_PREAMBLE, "SECTION_END"): Move(S.TOOL_PREAMBLE),
        (S.TOOL_BETWEEN, "SECTION_END"): Move(S.TOOL_PREAMBLE),
    }
    if thinking:
        markers |= {"THINK_START": ("<think>",), "THINK_END": ("</think>",)}
        moves |= {
            (S.REASONING, "THINK_START"): Move(S.REASONING),
            (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
            (S.CONTENT, "THINK_END"): Move(S.CONTENT),
        }
    return Grammar(
        name=NAME,
        markers=markers,
        moves=moves,
        start=S.REASONING if thinking else S.CONTENT,
        strip_content_with_tools=False,
        read_header=read_header,
    )


GRAMMARS = {True: grammar(True), False: grammar(False)}


def thinking_on(kwargs: dict | None) -> bool:
    """Kimi's switch: on unless `thinking` or `enable_thinking` says otherwise."""
    kwargs = kwargs or {}
    thinking, enable = kwargs.get("thinking"), kwargs.get("enable_thinking")
    return (thinking is None and enable is None) or bool(thinking) or bool(enable)


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser kimi_k2` (the content after
    the reasoning parser; `given.kwargs` are the request's chat_template_kwargs)."""
    return read_given(GRAMMARS[thinking_on(given.kwargs)], text, given)
