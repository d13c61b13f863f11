"""Find a rendered prompt's special tokens and markers.

`prompt_marks` finds, in one pass of one compiled regex, the given special tokens and
strings that look like a template's control markers: what the page highlights (the
browser finds whitespace itself, on screen only). `segment_prompt` cuts the whole prompt
into segments the same way, whitespace included; the tests hold `prompt_marks` to it.
(Tokens are lined up with their text in `app.display.token_data`.)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache, partial
from itertools import accumulate, compress
from typing import NamedTuple

from app.text import gc_paused, template_markers

#: Segment kinds besides "text" and "special", by the whitespace character they repeat.
_WHITESPACE_KINDS = {"\n": "newline", " ": "space", "\t": "tab", "\r": "return"}

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


class Segment(NamedTuple):
    """A piece of the prompt: `kind` is "text", "special", "marker", "space", "tab",
    "newline" or "return" (the last four: a run of one whitespace character).

    A named tuple rather than a frozen dataclass: a 1 MB prompt has ~400k segments, and a
    frozen dataclass's `__init__` alone would take longer than the whole pass should.
    """

    kind: str
    text: str
    start: int


def _alternation(words: Iterable[str]) -> str:
    # Longest first, because the regex engine takes the first alternative that matches.
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


@lru_cache(maxsize=64)
def _pattern(
    specials: tuple[str, ...], markers: tuple[str, ...], whitespace: bool = True
) -> re.Pattern[str]:
    """One capturing alternation for `re.split`; specials come first so they win over markers
    (and over whitespace, for special tokens made of newlines)."""
    alts = [_alternation(specials)] if specials else []
    if markers:
        alts.append(_alternation(markers))
    alts += [*_BUILTIN_MARKERS, r"\n+| +|\t+|\r+"] if whitespace else _BUILTIN_MARKERS
    return re.compile(f"({'|'.join(alts)})")


def prompt_marks(
    prompt: str, special_tokens: Iterable[object] = (), template: str | None = None
) -> list[tuple[int, int, str]]:
    """The special tokens and markers of `prompt`, as `segment_prompt` finds them, as
    `(start, end, kind)`: what the page highlights. Whitespace the browser finds itself,
    on screen only, so a long prompt costs one regex pass here."""
    specials = frozenset(s for s in special_tokens if isinstance(s, str) and s)
    markers = template_markers(template) if template else []
    others = tuple(m for m in markers if m not in specials)
    pattern = _pattern(tuple(sorted(specials)), others, whitespace=False)
    return [
        (m.start(), m.end(), "special" if m.group() in specials else "marker")
        for m in pattern.finditer(prompt)
    ]


# `Segment._make` is a Python function; `tuple.__new__` builds the named tuple in C.
_new_segment = partial(tuple.__new__, Segment)


def segment_prompt(
    prompt: str, special_tokens: Iterable[object] = (), template: str | None = None
) -> list[Segment]:
    """Cut `prompt` into segments; joined in order, their texts are `prompt`.

    `special_tokens`: strings shown as "special" wherever they occur exactly (BOS/EOS values;
    non-strings and "" are ignored, since the page passes user JSON). `template`: its
    marker-looking literal strings are shown as "marker" too.
    """
    specials = frozenset(s for s in special_tokens if isinstance(s, str) and s)
    markers = template_markers(template) if template else []
    pattern = _pattern(tuple(sorted(specials)), tuple(m for m in markers if m not in specials))
    with gc_paused():
        # [text, match, text, match, ..., text]; then everything but the kinds of the matches
        # is computed by C loops (accumulate, zip, compress, map): a 1 MB prompt has ~400k
        # segments and a Python loop per segment would dominate.
        pieces = pattern.split(prompt)
        kinds = ["text"] * len(pieces)
        # A match equal to a special token is one (the specials alternative comes first), and
        # markers never start with whitespace, so the first character tells the rest apart.
        kinds[1::2] = [
            "special" if m in specials else _WHITESPACE_KINDS.get(m[0], "marker")
            for m in pieces[1::2]
        ]
        starts = accumulate(map(len, pieces), initial=0)  # one longer than `pieces`
        # `compress` drops the empty texts between adjacent matches.
        return list(map(_new_segment, compress(zip(kinds, pieces, starts, strict=False), pieces)))
