"""vLLM's `qwen3` reasoning parser (0.33.0: the Qwen3 parser engine).

With thinking on (the default) the answer starts in reasoning, since Qwen3's templates
open `<think>` in the prompt: text up to `</think>` is reasoning and the rest content; a
`<tool_call>` also ends the reasoning (it stays in the content for the tool parser); a
`<think>` inside the reasoning is dropped, and so is a second `</think>`. With no end
at all, the whole answer is reasoning. `enable_thinking: false` in the request's
chat_template_kwargs turns the parser off (all content).
"""

from __future__ import annotations

from app.render.engines.vllm.answers._reasoning_pass import read_reasoning
from app.render.engines.vllm.answers._state_machine import (
    CALL_ARGS,
    CALL_END,
    CALL_START,
    Grammar,
    Move,
)
from app.render.engines.vllm.answers._state_machine import REASONING_END as R_END
from app.render.engines.vllm.answers._state_machine import State as S
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "qwen3"

#: Qwen3's table (`qwen3_config` in vLLM): the tool part matters here only in how its
#: markers end the reasoning and stay text for the tool parser.
GRAMMAR = Grammar(
    name=NAME,
    markers={
        "THINK_START": ("<think>",),
        "THINK_END": ("</think>",),
        "TOOL_START": ("<tool_call>",),
        "TOOL_END": ("</tool_call>",),
        "FUNC_PREFIX": ("<function=",),
        "FUNC_END": ("</function>",),
        "PARAM_START": ("<parameter=",),
        "PARAM_END": ("</parameter>",),
        "CLOSE_ANGLE": (">",),
    },
    moves={
        (S.REASONING, "THINK_START"): Move(S.REASONING),
        (S.REASONING, "THINK_END"): Move(S.CONTENT, (R_END,)),
        (S.CONTENT, "THINK_END"): Move(S.CONTENT),
        (S.REASONING, "TOOL_START"): Move(S.TOOL_PREAMBLE, (R_END, CALL_START)),
        (S.CONTENT, "TOOL_START"): Move(S.TOOL_PREAMBLE, (R_END, CALL_START)),
        (S.CONTENT, "FUNC_PREFIX"): Move(S.TOOL_NAME, (CALL_START,)),
        (S.TOOL_PREAMBLE, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        (S.TOOL_PREAMBLE, "FUNC_PREFIX"): Move(S.TOOL_NAME),
        (S.TOOL_NAME, "CLOSE_ANGLE"): Move(S.TOOL_ARGS),
        (S.TOOL_NAME, "FUNC_END"): Move(S.TOOL_BETWEEN, (CALL_END,)),
        (S.TOOL_NAME, "TOOL_END"): Move(S.CONTENT, (CALL_END,)),
        (S.TOOL_NAME, "TOOL_START"): Move(S.TOOL_PREAMBLE, (CALL_END, CALL_START)),
        (S.TOOL_NAME, "FUNC_PREFIX"): Move(S.TOOL_NAME, (CALL_END, CALL_START)),
        (S.TOOL_ARGS, "FUNC_END"): Move(S.TOOL_BETWEEN, (CALL_END,)),
        (S.TOOL_ARGS, "FUNC_PREFIX"): Move(S.TOOL_NAME, (CALL_END, CALL_START)),
        (S.TOOL_ARGS, "PARAM_START"): Move(S.TOOL_ARGS, (CALL_ARGS,)),
        (S.TOOL_ARGS, "PARAM_END"): Move(S.TOOL_ARGS, (CALL_ARGS,)),
        (S.TOOL_BETWEEN, "TOOL_END"): Move(S.CONTENT),
        (S.TOOL_BETWEEN, "TOOL_START"): Move(S.TOOL_PREAMBLE, (CALL_START,)),
        (S.TOOL_BETWEEN, "FUNC_PREFIX"): Move(S.TOOL_NAME, (CALL_START,)),
    },
    start=S.REASONING,
    strip_trailing_reasoning=False,
    boundaries=frozenset(("<|im_start|>", "<|im_end|>")),
)


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser qwen3`; `prompt` is the rendered
    prompt (one that already closed the think block starts the answer in content), and
    `special_tokens` the tokenizer's (those the format does not use are dropped)."""
    if not given.kwargs.get("enable_thinking", True):
        return ReasoningExtraction(reasoning=None, content=text)
    reasoning, content = read_reasoning(
        GRAMMAR, text, frozenset(given.special_tokens), given.prompt
    )
    notes: tuple[str, ...] = ()
    if content is None and reasoning and "</think>" not in text:
        notes = (
            "The answer has no `</think>`, so vLLM's qwen3 parser returns all of it as "
            "reasoning (it takes the answer for unfinished thinking).",
        )
    return ReasoningExtraction(reasoning=reasoning, content=content, notes=notes)
