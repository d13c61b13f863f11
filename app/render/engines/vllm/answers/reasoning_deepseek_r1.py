"""vLLM's `deepseek_r1` reasoning parser (0.33.0: `DeepSeekR1ReasoningParser`).

Everything before `</think>` is reasoning (a `<think>` before it is dropped, the first
one only); the rest is content, null when empty. With no `</think>` the whole answer is
reasoning: DeepSeek R1's template opens `<think>` in the prompt, so vLLM takes an
answer that never closes it as unfinished thinking.
"""

from __future__ import annotations

from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "deepseek_r1"
START, END = "<think>", "</think>"
#: vLLM refuses to start this parser when the tokenizer lacks these tokens.
NEEDS_TOKENS = (START, END)


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser deepseek_r1`."""
    before, start, after = text.partition(START)
    rest = after if start else before
    if END not in rest:
        note = (
            "The answer has no `</think>`, so vLLM's deepseek_r1 parser returns all of it "
            "as reasoning and the content is empty."
        )
        return ReasoningExtraction(reasoning=rest, content=None, notes=(note,) if rest else ())
    reasoning, _, content = rest.partition(END)
    return ReasoningExtraction(reasoning=reasoning, content=content or None)
