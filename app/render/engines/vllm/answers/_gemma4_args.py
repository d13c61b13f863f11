"""Gemma 4's tool-call arguments as vLLM 0.33.0 reads them (`_gemma4_arg_converter` and
`_parse_gemma4_args` in `vllm/parser/gemma4.py`)::

    city:<|"|>Paris<|"|>,days:3,opts:{deep:true},tags:[<|"|>a<|"|>,1]}

Keys run to the next `:`; a value is a string between `<|"|>` delimiters, an object in
braces, a list in brackets, or bare text up to `,`, `}` or `]`, kept as a string (the tool
schema may retype it later). vLLM finds where a nested object or list ends by counting
its kind of bracket (skipping strings) and reads the inside again; this reader gets the
same ends from tables made in one pass, so nesting costs no second reading.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left

from app.render.engines.vllm.answers.base import FailsInVllm

DELIM = '<|"|>'
_DL = len(DELIM)
_SEPARATORS = frozenset(" ,\n\t")
_BLANKS = frozenset(" \n\t")
_NONBLANK = re.compile(r"\S")
_FIELD_STOP = re.compile(r"[,}\]]")
_ITEM_STOP = re.compile(r"[,\]]")
_TOKENS = re.compile(r'<\|"\|>|[{}\[\]]')
#: How deep this reader follows nesting; vLLM's recursive reader raises RecursionError
#: somewhat deeper (past about 450 objects, by Python's stack), and its request fails.
MAX_DEPTH = 400
_CLOSERS = {"{": "}", "[": "]"}
_TOO_DEEP = (
    "The arguments nest deeper than vLLM's recursive Gemma 4 reader goes: it raises "
    "RecursionError and the request fails."
)


class _TooDeep(Exception):
    pass


def _strip_partial_delim(value: str) -> str:
    """`value` without a trailing piece of a cut-off `<|"|>`."""
    for size in range(_DL, 0, -1):
        if value.endswith(DELIM[:size]):
            return value[:-size]
    return value


class _Reader:
    """One argument text, with where each `{` and `[` closes under both ways the string
    delimiters can pair (a scan pairs them from where it starts)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.delims = [m.start() for m in re.finditer(re.escape(DELIM), text)]
        self.closes = {parity: self._pair(parity) for parity in (0, 1)}

    def _pair(self, parity: int) -> dict[int, int]:
        """Opener -> its closer, outside strings whose opening delimiter has this parity."""
        pairs: dict[int, int] = {}
        stacks: dict[str, list[int]] = {"{": [], "[": []}
        in_string, index = False, -1
        for token in _TOKENS.finditer(self.text):
            char = token.group()
            if char == DELIM:
                index += 1
                in_string = not in_string if in_string or index % 2 == parity else False
            elif in_string:
                continue
            elif char in stacks:
                stacks[char].append(token.start())
            else:
                stack = stacks["{" if char == "}" else "["]
                if stack:
                    pairs[stack.pop()] = token.start()
        return pairs

    def _span(self, at: int, end: int) -> tuple[int, int, bool]:
        """Where the value opening at `at` ends within `end`: (inside end, next position,
        whether it closed)."""
        parity = bisect_left(self.delims, at + 1) % 2
        close = self.closes[parity].get(at)
        if close is not None and close < end:
            return close, close + 1, True
        return end, end, False

    def _nested(self, at: int, end: int, depth: int) -> tuple[object, int]:
        """The object or list opening at `at`, and where reading goes on."""
        if depth >= MAX_DEPTH:
            raise _TooDeep
        inner_end, after, closed = self._span(at, end)
        if self.text[at] == "{":
            return self.fields(at + 1, inner_end, not closed, depth + 1)[0], after
        return self.items(at + 1, inner_end, not closed, depth + 1), after

    def _skip(self, i: int, end: int, chars: frozenset[str]) -> int:
        while i < end and self.text[i] in chars:
            i += 1
        return i

    def _bare(self, i: int, end: int, stop: re.Pattern[str]) -> int:
        found = stop.search(self.text, i, end)
        return found.start() if found else end

    def fields(
        self, start: int, end: int, partial: bool, depth: int = 0
    ) -> tuple[dict, str | None]:
        """`_parse_gemma4_fields` on text[start:end]: the fields, and the key of a string
        left open at the end."""
        text = self.text
        result: dict[str, object] = {}
        if start >= end or not _NONBLANK.search(text, start, end):
            return result, None
        i = start
        while i < end:
            i = self._skip(i, end, _SEPARATORS)
            colon = text.find(":", i, end)
            if i >= end or colon == -1:
                break
            key = text[i:colon].strip()
            if key.startswith(DELIM) and key.endswith(DELIM):
                key = key[_DL:-_DL]
            i = self._skip(colon + 1, end, _BLANKS)
            if i >= end:
                if not partial:
                    result[key] = ""
                break
            if text.startswith(DELIM, i, end):
                close = text.find(DELIM, i + _DL, end)
                if close == -1:
                    value = text[i + _DL : end]
                    result[key] = _strip_partial_delim(value) if partial else value
                    return result, key
                result[key], i = text[i + _DL : close], close + _DL
            elif text[i] in _CLOSERS:
                result[key], i = self._nested(i, end, depth)
            else:
                value_start, i = i, self._bare(i, end, _FIELD_STOP)
                raw = text[value_start:i].strip()
                if (partial and i >= end) or i == value_start or (partial and raw.endswith(".")):
                    break
                result[key] = raw
        return result, None

    def items(self, start: int, end: int, partial: bool, depth: int) -> list:
        """`_parse_gemma4_array` on text[start:end]."""
        text = self.text
        found: list[object] = []
        i = start
        while i < end:
            i = self._skip(i, end, _SEPARATORS)
            if i >= end:
                break
            if text.startswith(DELIM, i, end):
                close = text.find(DELIM, i + _DL, end)
                if close == -1:
                    found.append(text[i + _DL : end])
                    break
                found.append(text[i + _DL : close])
                i = close + _DL
            elif text[i] in _CLOSERS:
                value, i = self._nested(i, end, depth)
                found.append(value)
            else:
                value_start, i = i, self._bare(i, end, _ITEM_STOP)
                raw = text[value_start:i].strip()
                if (partial and i >= end) or i == value_start or (partial and raw.endswith(".")):
                    break
                found.append(raw)
        return found


def convert_args(raw: str) -> str:
    """vLLM's `_gemma4_arg_converter` for a finished call: the text between the call's
    `{` (or `(`) and its end marker, as a JSON object."""
    text = raw.strip()
    if text.endswith("}") or (text.endswith(")") and text.count("(") < text.count(")")):
        text = text[:-1]  # the call's own closer
    try:
        fields = _Reader(text).fields(0, len(text), False)[0]
    except (_TooDeep, RecursionError):
        raise FailsInVllm(_TOO_DEEP, "{}") from None
    return json.dumps(fields, ensure_ascii=False)
