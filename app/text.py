"""Small pure text helpers that several layers share (analysis, the pipeline, diff).

They live here, below all of them, so that `analysis` never imports `pipeline` and no
layer keeps a copy of its own.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

# Marker-looking strings in a template's own literal text. Looser than the shapes the
# prompt view recognises in any text (app/pipeline/prompt.py), because a string the template
# itself writes is structure, not content; still no spaces or attributes, and bracketed
# names need an upper-case letter, so that template prose such as "[optional]" is not
# taken for a marker.
_TEMPLATE_MARKER = re.compile(
    r"<\|[^\s|<>]{1,48}\|>"
    r"|<｜[^\s｜<>]{1,48}｜>"
    r"|<</?[A-Za-z]{1,16}>>"
    r"|</?[A-Za-z][\w.:-]{0,47}>"
    r"|\[/?(?=[\w-]{0,47}[A-Z])[A-Za-z][\w-]{0,47}\]"
)
# Jinja tags; the text between them is the template's literal output.
_JINJA_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
# String literals inside tags: markers are often written as `{{ '<|im_start|>' + role }}`.
_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", re.DOTALL)


def template_markers(template: str) -> list[str]:
    """Marker-looking strings the template writes: in its literal text or string literals."""
    found: set[str] = set()
    pos = 0
    for tag in _JINJA_TAG.finditer(template):
        found.update(_TEMPLATE_MARKER.findall(template, pos, tag.start()))
        for literal in _STRING_LITERAL.finditer(tag.group()):
            found.update(_TEMPLATE_MARKER.findall(literal.group()[1:-1]))
        pos = tag.end()
    found.update(_TEMPLATE_MARKER.findall(template, pos))
    return sorted(found)


#: How far either side of a position `marker_around` looks for a marker-shaped string.
_MARKER_REACH = 52


def marker_around(text: str, position: int, markers: Iterable[str] = ()) -> int | None:
    """The start of a marker of `text` that `position` falls strictly inside, if any: one
    of `markers` (special tokens, whatever their shape) or any marker-shaped string (a
    role marker a template writes as `'<|' + role + '|>'` is in no list)."""
    for marker in markers:
        found = text.find(marker, max(0, position - len(marker) + 1), position + len(marker) - 1)
        while found != -1 and found < position:
            if found + len(marker) > position:
                return found
            found = text.find(marker, found + 1, position + len(marker) - 1)
    low = max(0, position - _MARKER_REACH)
    for shaped in _TEMPLATE_MARKER.finditer(text, low, position + _MARKER_REACH):
        if shaped.start() < position < shaped.end():
            return shaped.start()
    return None


def common_prefix_length(left: Sequence[Any], right: Sequence[Any]) -> int:
    """Length of the common prefix of two strings or lists (token ids, say).

    A binary search over slice comparisons: each comparison runs in C, so two 2 MB
    prompts cost milliseconds instead of a Python loop over every character.
    """
    low, high = 0, min(len(left), len(right))
    while low < high:
        middle = (low + high + 1) // 2
        if left[low:middle] == right[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off the cyclic GC while building many small objects (also a decorator).

    Each collection would walk the growing result again, which costs ~40% of the time for
    a long prompt (~60% for the diff views of a long one); what the prompt view and
    `app.analysis.diff` build forms no reference cycle.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


#: How long a note may be before the page folds it to its first sentence.
FOLD_CHARS = 160


def first_sentence(text: str, limit: int = FOLD_CHARS) -> tuple[str, str]:
    """`text` as (its first sentence, the rest): the line a long note folds to. A text of
    at most `limit` characters is not split (rest ""); a first sentence longer than that
    is cut at the last space before it."""
    if len(text) <= limit:
        return text, ""
    end = text.find(". ", 0, limit)
    if end >= 0:
        return text[: end + 1], text[end + 2 :]
    cut = text.rfind(" ", 0, limit)
    cut = cut if cut > 0 else limit
    return text[:cut] + "…", text[cut:].lstrip()
