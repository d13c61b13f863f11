"""What an Ollama parser reads from an answer, and the text helpers its parsers share.

Ollama's parsers (model/parsers/parsers.go at ollama/ollama fb30760) stream: each
chunk adds to a buffer, and text that might be the start of a tag or trailing space is
held back until more comes. Ours read the whole answer as one chunk, as Ollama does
when the answer arrives at once; what is held back at the end is dropped, as Ollama's
final chunk drops it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OllamaMessage:
    """The assistant message a parser makes: content, thinking, tool calls."""

    content: str = ""
    thinking: str = ""
    #: Each call as (function name, arguments in order).
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()


def is_space(ch: str) -> bool:
    """Go's unicode.IsSpace (Python's isspace also counts \\x1c-\\x1f)."""
    if ch in "\t\n\v\f\r \x85\xa0":
        return True
    return ord(ch) > 0xFF and unicodedata.category(ch) in ("Zs", "Zl", "Zp")


def trim_left(text: str) -> str:
    """strings.TrimLeftFunc(text, unicode.IsSpace)."""
    i = 0
    while i < len(text) and is_space(text[i]):
        i += 1
    return text[i:]


def trim_right(text: str) -> str:
    """strings.TrimRightFunc(text, unicode.IsSpace)."""
    i = len(text)
    while i > 0 and is_space(text[i - 1]):
        i -= 1
    return text[:i]


def trailing_space(text: str) -> int:
    """How many characters of trailing space `text` has."""
    return len(text) - len(trim_right(text))


def trailing_whitespace_len(text: str) -> int:
    """Ollama's trailingWhitespaceLen: the trailing space's length in UTF-8 bytes."""
    return len(text[len(trim_right(text)) :].encode())


def overlap_chars(text: str, delim: str) -> int:
    """The longest suffix of `text` that starts `delim`, in characters."""
    for i in range(min(len(delim), len(text)), 0, -1):
        if text.endswith(delim[:i]):
            return i
    return 0


def overlap(text: str, delim: str) -> int:
    """Ollama's overlap: the same, in UTF-8 bytes (as Go measures strings)."""
    return len(delim[: overlap_chars(text, delim)].encode())


def hold_back(text: str, *tags: str) -> tuple[str, str]:
    """Split `text` into what is sure and what may yet start a tag or be trailing space."""
    partial = max((overlap_chars(text, tag) for tag in tags), default=0)
    before = text[: len(text) - partial]
    start = len(before) - trailing_space(before)
    return text[:start], text[start:]


def split_at_tag(buffer: str, tag: str, trim_after: bool) -> tuple[str, str]:
    """Ollama's splitAtTag: (before, trimmed of trailing space; after), after kept."""
    if tag not in buffer:
        return buffer, ""
    before, after = buffer.split(tag, 1)
    return trim_right(before), trim_left(after) if trim_after else after


def read_stream(stream: Any, chunks: list[str], last_done: bool = True) -> OllamaMessage:
    """`stream.add(chunk, done)` for each chunk in turn (the last with `last_done`), as
    Ollama's ChatHandler feeds a parser; their outputs joined into one message."""
    content, thinking, calls = "", "", []
    for i, chunk in enumerate(chunks):
        c, t, found = stream.add(chunk, last_done and i == len(chunks) - 1)
        content, thinking, calls = content + c, thinking + t, calls + found
    return OllamaMessage(content=content, thinking=thinking, tool_calls=tuple(calls))
