"""vLLM's `gemma4` reasoning parser (0.33.0: the Gemma 4 parser engine).

The answer starts in content: a `<|channel>...<channel|>` block is reasoning (without
the `thought` line Gemma writes first), trailing whitespace trimmed; a `<|tool_call>`
also ends it and stays in the content for the tool parser. An answer that closes a
channel it never opened, or starts with `thought`, is read as if it opened one.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._gemma4 import GRAMMAR, THOUGHT, with_channel
from app.render.engines.vllm.answers._reasoning_pass import read_reasoning
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "gemma4"


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser gemma4` (its thinking switch,
    `enable_thinking`, changes only how a stream waits, not this reading)."""
    fed = with_channel(text)
    reasoning, content = read_reasoning(GRAMMAR, fed, frozenset(given.special_tokens))
    if reasoning and reasoning.startswith(THOUGHT + "\n"):
        reasoning = reasoning[len(THOUGHT) + 1 :]
    elif reasoning == THOUGHT:
        reasoning = None
    notes: tuple[str, ...] = ()
    if fed is not text:
        notes = (
            "The answer has no `<|channel>` but closes a channel or starts with "
            "`thought`, so vLLM's gemma4 parser reads it as if it opened one.",
        )
    return ReasoningExtraction(reasoning=reasoning or None, content=content, notes=notes)
