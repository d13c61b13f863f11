"""vLLM's `kimi_k3` reasoning parser (0.33.0: `KimiK3ReasoningParser`).

Kimi K3's thinking is an XTML `think` channel, which its template may open in the prompt:
the text up to `<|close|>think<|sep|>` (after `<|open|>think<|sep|>` when the answer has
one) is reasoning, the rest content; an answer that opens a `response` channel without
any think marker is all content, and one that never closes its thinking all reasoning.
When the request has tools (and tool_choice is not "none") the content keeps its XTML
channels for the tool parser; otherwise the response channel is unwrapped. `thinking`
(or `enable_thinking`) false in chat_template_kwargs turns the reasoning off.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._xtml import RESPONSE_OPEN, closer, opener, strip_response
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "kimi_k3"
THINK_OPEN, THINK_CLOSE = opener("think"), closer("think")


def thinking_on(kwargs: dict | None) -> bool:
    """K3's switch: `thinking`, else `enable_thinking`, on by default."""
    kwargs = kwargs or {}
    thinking = kwargs.get("thinking")
    return bool(kwargs.get("enable_thinking", True) if thinking is None else thinking)


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser kimi_k3`; `given.tools` are the
    request's, `tool_choice_none` whether its tool_choice is "none"."""
    keep_channels = bool(given.tools) and not given.tool_choice_none

    def content(rest: str) -> str | None:
        return (rest if keep_channels else strip_response(rest)) or None

    if not thinking_on(given.kwargs):
        return ReasoningExtraction(reasoning=None, content=content(text))
    start = THINK_OPEN.search(text)
    reasoning_at = start.end() if start else 0
    end = THINK_CLOSE.search(text, reasoning_at)
    if start is None and end is None and RESPONSE_OPEN.search(text):
        return ReasoningExtraction(reasoning=None, content=content(text))
    if end is not None:
        said = text[reasoning_at : end.start()] or None
        return ReasoningExtraction(reasoning=said, content=content(text[end.end() :]))
    note = (
        "The answer never closes its think channel, so vLLM's kimi_k3 parser returns all "
        "of it as reasoning."
    )
    said = text[reasoning_at:] or None
    return ReasoningExtraction(reasoning=said, content=None, notes=(note,) if said else ())
