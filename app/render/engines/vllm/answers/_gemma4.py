"""Gemma 4's answer format as vLLM 0.33.0 reads it (`vllm/parser/gemma4.py`): one table
for the `gemma4` tool parser and the `gemma4` reasoning parser::

    <|channel>thought
    ...reasoning...<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>

A call is `call:` (or a bare `:`), the name, then its arguments in `{...}` or `(...)`
(see `_gemma4_args`). A tool call also ends the reasoning. The answer starts in content;
vLLM puts a `<|channel>` in front of an answer that lacks one but closes a channel or
starts with `thought` (the template may have opened it in the prompt).
"""

from __future__ import annotations

from app.render.engines.vllm.answers._gemma4_args import DELIM, convert_args
from app.render.engines.vllm.answers._state_machine import CALL_END, CALL_START, Grammar, Move
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import REASONING_START as R_START
from app.render.engines.vllm.answers._state_machine import State as S

CHANNEL_START, CHANNEL_END = "<|channel>", "<channel|>"
CALL_OPEN, CALL_CLOSE = "<|tool_call>", "<tool_call|>"
THOUGHT = "thought"

GRAMMAR = Grammar(
    name="gemma4",
    markers={
        "THINK_START": (CHANNEL_START,),
        "THINK_END": (CHANNEL_END,),
        "TOOL_START": (CALL_OPEN,),
        "TOOL_END": (CALL_CLOSE,),
        "CALL_PREFIX": ("call:",),
        "COLON": (":",),
        "OPEN_BRACE": ("{",),
        "OPEN_PAREN": ("(",),
    },
    moves={
        (S.CONTENT, "THINK_START"): Move(S.REASONING, (R_START,)),
        (S.REASONING, "THINK_START"): Move(S.REASONING),
        (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
        (S.REASONING, "TOOL_START"): Move(S.TOOL_PREAMBLE, (R_END, CALL_START)),
        (S.CONTENT, "TOOL_START"): Move(S.TOOL_PREAMBLE, (R_END, CALL_START)),
        (S.TOOL_PREAMBLE, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        (S.TOOL_PREAMBLE, "CALL_PREFIX"): Move(S.TOOL_NAME),
        (S.TOOL_PREAMBLE, "COLON"): Move(S.TOOL_NAME),
        (S.TOOL_NAME, "OPEN_BRACE"): Move(S.TOOL_ARGS),
        (S.TOOL_NAME, "OPEN_PAREN"): Move(S.TOOL_ARGS),
        (S.TOOL_NAME, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        (S.TOOL_ARGS, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        # A stray end marker in the content is dropped.
        (S.CONTENT, "TOOL_END"): Move(S.CONTENT),
        (S.CONTENT, "THINK_END"): Move(S.CONTENT),
    },
    convert_args=convert_args,
    preserve=frozenset({DELIM}),
)


def with_channel(text: str) -> str:
    """The answer as vLLM's Gemma 4 parser feeds it (`_preprocess_feed`): with a
    `<|channel>` in front when it has none but closes one, or starts with `thought`."""
    if not text or CHANNEL_START in text:
        return text
    if CHANNEL_END in text or text.startswith(THOUGHT + "\n") or text == THOUGHT:
        return CHANNEL_START + text
    return text
