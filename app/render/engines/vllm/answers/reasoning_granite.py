"""vLLM's `granite` reasoning parser (0.33.0: `GraniteReasoningParser`).

Granite 3.2/3.3 write their reasoning in plain words: "Here is my thought process:"
... "Here is my response:" ... ("Here's" is accepted for either). The text between is
reasoning, the text after the response header is content; an answer without both
headers, in that order, is all content.
"""

from __future__ import annotations

from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "granite"
THINK_HEADERS = ("Here is my thought process:", "Here's my thought process:")
RESPONSE_HEADERS = ("Here is my response:", "Here's my response:")


def _first(text: str, needles: tuple[str, ...], start: int = 0) -> tuple[int, int]:
    """Where the first of `needles` starts and ends in `text` from `start` ((-1, -1)
    when none is there)."""
    best = (-1, -1)
    for needle in needles:
        at = text.find(needle, start)
        if at != -1 and (best[0] == -1 or at < best[0]):
            best = (at, at + len(needle))
    return best


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """vLLM's `extract_reasoning` for `--reasoning-parser granite`."""
    _, think_end = _first(text, THINK_HEADERS)
    if think_end != -1:
        response_at, response_end = _first(text, RESPONSE_HEADERS, think_end)
        if response_at != -1:
            content = text[response_end:]
            return ReasoningExtraction(
                reasoning=text[think_end:response_at], content=content or None
            )
    note = (
        'The answer lacks "Here is my thought process:" followed by "Here is my response:", '
        "so vLLM's granite parser returns it all as content."
    )
    return ReasoningExtraction(reasoning=None, content=text, notes=(note,))
