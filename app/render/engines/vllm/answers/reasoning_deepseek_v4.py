"""vLLM's `deepseek_v4` reasoning parser (0.33.0: the DeepSeek V4 parser engine).

With thinking on (the default; `thinking`/`enable_thinking` false or `reasoning_effort:
none` turn it off) the answer starts in reasoning, as V4's template opens `<think>` in
the prompt: text up to `</think>` is reasoning (trailing whitespace trimmed) and the
rest content; a DSML tool-call block also ends the reasoning and stays in the content for
the tool parser. With no end at all the whole answer is reasoning.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._dsml import V4, v4_thinking
from app.render.engines.vllm.answers._reasoning_pass import read_reasoning
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "deepseek_v4"


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser deepseek_v4`."""
    thinking = v4_thinking(given.kwargs)
    reasoning, content = read_reasoning(V4[thinking], text, frozenset(given.special_tokens))
    notes: tuple[str, ...] = ()
    if thinking and content is None and reasoning and "</think>" not in text:
        notes = (
            "The answer has no `</think>`, so vLLM's deepseek_v4 parser returns all of it "
            "as reasoning (it takes the answer for unfinished thinking).",
        )
    return ReasoningExtraction(reasoning=reasoning, content=content, notes=notes)
