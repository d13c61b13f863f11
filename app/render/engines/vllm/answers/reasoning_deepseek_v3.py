"""vLLM's `deepseek_v3` reasoning parser (0.33.0: `DeepSeekV3ReasoningParser`), the one
vLLM pairs with DeepSeek V3.1 and V3.2.

Thinking is off unless the request's chat_template_kwargs set `thinking` or
`enable_thinking`: then the answer is read as `deepseek_r1` reads it; otherwise it is all
content, `</think>` included (vLLM's identity parser).
"""

from __future__ import annotations

from app.render.engines.vllm.answers import reasoning_deepseek_r1
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "deepseek_v3"


def thinking_on(kwargs: dict | None) -> bool:
    """V3's switch: off unless `thinking` or `enable_thinking` is set."""
    kwargs = kwargs or {}
    return bool(kwargs.get("thinking", False)) or bool(kwargs.get("enable_thinking", False))


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser deepseek_v3`."""
    if thinking_on(given.kwargs):
        return reasoning_deepseek_r1.extract(text, given)
    notes: tuple[str, ...] = ()
    if "</think>" in text:
        notes = (
            "The request does not set `thinking` (or `enable_thinking`) in its "
            "chat_template_kwargs, so vLLM's deepseek_v3 parser reads no reasoning and "
            "leaves `</think>` in the content.",
        )
    return ReasoningExtraction(reasoning=None, content=text, notes=notes)
