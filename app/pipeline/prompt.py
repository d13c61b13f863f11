"""Find a rendered prompt's special tokens and markers.

`prompt_marks` finds, in one pass of one compiled regex, the given special tokens and
strings that look like a template's control markers: what the page highlights (the
browser finds whitespace itself, on screen only).
(Tokens are lined up with their text in `app.pipeline.token_data`.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from app.text import template_markers

# Control markers written by common templates, recognised even when no template is given.
# Each shape is narrow on purpose: a name of word-like characters with no spaces and a bounded
# length, so prose, JSON, code and HTML in message content (`<b>`, `<div class="x">`,
# `a < b > c`, `[1]`, `[link](url)`) stay plain text.
_BUILTIN_MARKERS = (
    # <|im_start|>, <|start_header_id|>, <|eot_id|>, <|channel|>, <|START_OF_TURN_TOKEN|>:
    # "<|" ... "|>" hardly occurs in prose or code.
    r"<\|[^\s|<>]{1,48}\|>",
    # DeepSeek's full-width bars: <｜User｜>, <｜begin▁of▁sentence｜>.
    r"<｜[^\s｜<>]{1,48}｜>",
    # <start_of_turn>, <tool_call>, </tool_call>: HTML tag names never contain "_".
    r"</?[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+>",
    # Bare names that are control tokens in practice, not HTML elements.
    r"</?(?:s|think|tools|unk|pad|bos|eos|eot|mask|sep|cls)>",
    # Mistral's [INST], [/INST], [SYSTEM_PROMPT], [TOOL_CALLS], [AVAILABLE_TOOLS]; BERT's [CLS]:
    # upper case with "_", or a known name, so "[A]" or "[NOTE]" in content stay text.
    r"\[/?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\]",
    r"\[/?(?:INST|IMG|THINK|CLS|SEP|MASK|PAD|UNK)\]",
    # Llama 2's system block.
    r"<</?SYS>>",
)


def _alternation(words: Iterable[str]) -> str:
    # Longest first, because the regex engine takes the first alternative that matches.
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


@lru_cache(maxsize=64)
def _pattern(specials: tuple[str, ...], markers: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation; specials come first so they win over markers (a special token
    that is also a marker is shown as special)."""
    alts = [_alternation(specials)] if specials else []
    if markers:
        alts.append(_alternation(markers))
    return re.compile("|".join([*alts, *_BUILTIN_MARKERS]))


def prompt_marks(
    prompt: str, special_tokens: Iterable[object] = (), template: str | None = None
) -> list[tuple[int, int, str]]:
    """The special tokens and markers of `prompt`, as `(start, end, kind)` in order: what
    the page highlights. Whitespace the browser finds itself, on screen only, so a long
    prompt costs one regex pass here.

    `special_tokens`: strings marked "special" wherever they occur exactly (BOS/EOS values;
    non-strings and "" are ignored, since the page passes user JSON). `template`: its
    marker-looking literal strings are marked "marker" too.
    """
    specials = frozenset(s for s in special_tokens if isinstance(s, str) and s)
    markers = template_markers(template) if template else []
    others = tuple(m for m in markers if m not in specials)
    pattern = _pattern(tuple(sorted(specials)), others)
    return [
        (m.start(), m.end(), "special" if m.group() in specials else "marker")
        for m in pattern.finditer(prompt)
    ]
