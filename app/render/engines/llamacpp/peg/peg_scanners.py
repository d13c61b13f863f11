"""The parsers of llama.cpp's PEG arena that scan text (common/peg-parser.cpp).

Literals, any code point, spaces, character classes, quoted-string content and `until`.
In LENIENT mode a text that ends inside one of them is NEED_MORE_INPUT; `until` finds its
delimiters with `str.find`, so it scans a text once whatever its delimiters.
"""

from __future__ import annotations

import re

from app.render.engines.llamacpp.peg.peg import (
    FAIL,
    NEED_MORE_INPUT,
    SUCCESS,
    Arena,
    Context,
    Parser,
    QuickFail,
    Result,
)
from app.render.engines.llamacpp.peg.peg_parsers import SPACE

#: A run of SPACE characters (one class, one quantifier: nothing to backtrack).
_SPACES = re.compile(f"[{re.escape(SPACE)}]*")


class Any(Parser):
    """One code point."""

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        if pos < len(ctx.input):
            return Result(SUCCESS, pos, pos + 1)
        return Result(NEED_MORE_INPUT if ctx.is_lenient() else FAIL, pos, pos)


class Space(Parser):
    """Zero or more isspace() characters; never fails."""

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        return Result(SUCCESS, pos, _SPACES.match(ctx.input, pos).end())


class Literal(Parser):
    def __init__(self, literal: str) -> None:
        super().__init__()
        self.literal = literal

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        text, literal = ctx.input, self.literal
        if text.startswith(literal, pos):
            return Result(SUCCESS, pos, pos + len(literal))
        rest = len(text) - pos
        # The text ends inside the literal: more input could complete it.
        cut_short = 0 <= rest < len(literal) and literal.startswith(text[pos:])
        if cut_short and ctx.is_lenient():
            return Result(NEED_MORE_INPUT, pos, len(text))
        return Result(FAIL, pos, pos)

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        """Another first character fails it: the text neither starts with the literal nor
        ends inside it."""
        return (frozenset(self.literal[0]), 1) if self.literal else None

    def dump(self, arena: Arena, seen: set[int]) -> str:
        return f"Literal({self.literal})"


class Chars(Parser):
    """Between `min_count` and `max_count` code points of a character class."""

    def __init__(self, pattern: str, ranges: list[tuple[int, int]], negated: bool,
                 min_count: int, max_count: int) -> None:  # fmt: skip
        super().__init__()
        self.pattern, self.ranges, self.negated = pattern, ranges, negated
        self.min_count, self.max_count = min_count, max_count

    def matches(self, char: str) -> bool:
        code = ord(char)
        return any(low <= code <= high for low, high in self.ranges) != self.negated

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        text, start, count = ctx.input, pos, 0
        while self.max_count == -1 or count < self.max_count:
            if pos >= len(text):
                if count >= self.min_count:
                    return Result(SUCCESS, start, pos)
                return Result(NEED_MORE_INPUT if ctx.is_lenient() else FAIL, start, pos)
            if not self.matches(text[pos]):
                break
            pos, count = pos + 1, count + 1
        if count < self.min_count:
            lenient_end = pos >= len(text) and ctx.is_lenient()
            return Result(NEED_MORE_INPUT if lenient_end else FAIL, start, pos)
        return Result(SUCCESS, start, pos)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        top = "unbounded" if self.max_count == -1 else str(self.max_count)
        return f"CharRepeat({self.pattern}, {self.min_count}, {top})"


class _Next:
    """The next position of a character from a moving start; each search starts where the
    last hit was passed, so a text is scanned once however many times it is asked."""

    def __init__(self, text: str, char: str) -> None:
        self.text, self.char, self.at = text, char, -1

    def after(self, pos: int) -> int:
        if self.at < pos:
            found = self.text.find(self.char, pos)
            self.at = len(self.text) if found == -1 else found
        return self.at


_SIMPLE_ESCAPES = frozenset("\\/bfnrt")
_HEX = frozenset("0123456789abcdefABCDEF")


class StringContent(Parser):
    """A quoted string's content up to its closing `delimiter` (not consumed), checking
    JSON escapes."""

    def __init__(self, delimiter: str) -> None:
        super().__init__()
        self.delimiter = delimiter

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        text, start, lenient = ctx.input, pos, ctx.is_lenient()
        size = len(text)
        quotes, backslashes = _Next(text, self.delimiter), _Next(text, "\\")
        while pos < size:
            # Jump to the next quote or backslash (C speed: a long string is one step).
            pos = min(quotes.after(pos), backslashes.after(pos))
            if pos >= size:
                break
            if text[pos] == self.delimiter:
                return Result(SUCCESS, start, pos)
            if pos + 1 >= size:  # a lone backslash at the end is held back
                return Result(
                    NEED_MORE_INPUT if lenient else FAIL, start, pos if lenient else start
                )
            escaped = text[pos + 1]
            if escaped == self.delimiter or escaped in _SIMPLE_ESCAPES:
                pos += 2
            elif escaped == "u":
                digits = text[pos + 2 : pos + 6]
                if not all(d in _HEX for d in digits):
                    return Result(FAIL, start, start)
                if len(digits) < 4:  # an unfinished \u escape is held back too
                    return Result(
                        NEED_MORE_INPUT if lenient else FAIL, start, pos if lenient else start
                    )
                pos += 6
            else:
                return Result(FAIL, start, start)
        return Result(NEED_MORE_INPUT if lenient else FAIL, start, pos)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        return f"String({self.delimiter})"


class Until(Parser):
    """Everything up to the first delimiter (not consumed), or up to a delimiter's start
    that the text ends inside; no delimiters: the rest of the text."""

    def __init__(self, delimiters: list[str]) -> None:
        super().__init__()
        self.delimiters = list(delimiters)
        # An empty delimiter never matches in llama.cpp's trie walk.
        self._search = [d for d in delimiters if d]
        self._longest = max((len(d) for d in self._search), default=0)

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        text, size = ctx.input, len(ctx.input)
        stop = size
        for delimiter in self._search:
            found = text.find(delimiter, pos, stop + len(delimiter) - 1)
            if found != -1:
                stop = found
        # A delimiter cut off by the end of the text stops the scan as well.
        for cut in range(max(pos, size - self._longest + 1), stop):
            tail = text[cut:]
            if any(len(d) > len(tail) and d.startswith(tail) for d in self._search):
                stop = cut
                break
        if stop < size:
            return Result(SUCCESS, pos, stop)
        return Result(NEED_MORE_INPUT if ctx.is_lenient() else SUCCESS, pos, size)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        return f"Until({' | '.join(self.delimiters)})"
