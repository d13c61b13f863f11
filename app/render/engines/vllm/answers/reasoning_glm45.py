"""vLLM's `glm45` reasoning parser (0.33.0: the GLM-4.7 parser engine, as `glm47`).

GLM starts in reasoning (its template opens `<think>` in the prompt): everything up to
`</think>`, or up to a `<tool_call>`, is reasoning (trailing whitespace trimmed); with no
end at all the whole answer is reasoning. `thinking`/`enable_thinking` false in the
request's chat_template_kwargs turns the parser off (all content).
"""

from __future__ import annotations

from app.render.engines.vllm.answers._glm_grammar import GRAMMARS, thinking_on
from app.render.engines.vllm.answers._reasoning_pass import read_reasoning
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "glm45"


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser glm45`; `prompt` is the rendered
    prompt (one that already closed the think block starts the answer in content), and
    `special_tokens` the tokenizer's (those the format does not use are dropped)."""
    if not thinking_on(given.kwargs):
        return ReasoningExtraction(reasoning=None, content=text)
    reasoning, content = read_reasoning(
        GRAMMARS[True], text, frozenset(given.special_tokens), given.prompt
    )
    notes: tuple[str, ...] = ()
    if content is None and reasoning and "</think>" not in text:
        notes = (
            "The answer has no `</think>`, so vLLM's glm45 parser returns all of it as "
            "reasoning (it takes the answer for unfinished thinking).",
        )
    return ReasoningExtraction(reasoning=reasoning, content=content, notes=notes)
