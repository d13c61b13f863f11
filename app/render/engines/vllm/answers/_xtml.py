"""Kimi K3's XTML channels as vLLM 0.33.0's Kimi K3 parsers find them: an element opens
with `<|open|>NAME attrs<|sep|>` and closes with `<|close|>NAME<|sep|>` (spaces allowed
inside a marker, as vLLM allows them)::

    <|open|>think<|sep|>...<|close|>think<|sep|><|open|>response<|sep|>Hi.<|close|>response<|sep|>
    <|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>
    <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>
"""

from __future__ import annotations

import re

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"


def opener(name: str) -> re.Pattern[str]:
    """`<|open|>NAME<|sep|>`, spaces allowed around the name."""
    return re.compile(re.escape(OPEN) + r"\s*" + name + r"\s*" + re.escape(SEP))


def closer(name: str) -> re.Pattern[str]:
    """`<|close|>NAME<|sep|>`, spaces allowed around the name."""
    return re.compile(re.escape(CLOSE) + r"\s*" + name + r"\s*" + re.escape(SEP))


RESPONSE_OPEN, RESPONSE_CLOSE = opener("response"), closer("response")
MESSAGE_CLOSE = closer("message")
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def attributes(text: str) -> dict[str, str]:
    """`key="value"` pairs, with the template's `&quot;` and `&amp;` undone."""
    return {
        m.group(1): m.group(2).replace("&quot;", '"').replace("&amp;", "&")
        for m in _ATTRIBUTE.finditer(text)
    }


class _Next:
    """The next match of a pattern at or after a position that only grows."""

    def __init__(self, pattern: re.Pattern[str], text: str) -> None:
        self.pattern, self.text, self.found = pattern, text, None
        self.searched = -1

    def at_or_after(self, position: int) -> re.Match[str] | None:
        if self.searched >= 0 and (self.found is None or self.found.start() >= position):
            return self.found
        self.found, self.searched = self.pattern.search(self.text, position), position
        return self.found


def elements(name: str, text: str) -> list[tuple[str, str]]:
    """(attributes, body) of each `<|open|>NAME attrs<|sep|>body<|close|>NAME<|sep|>` in
    `text`, left to right, as vLLM's lazy expression finds them: the attributes run to
    the first `<|sep|>`, the body to the first closer after it."""
    head = re.compile(re.escape(OPEN) + r"\s*" + name + r"\s+")
    closes = _Next(closer(name), text)
    found = []
    match = head.search(text)
    while match is not None:
        sep = text.find(SEP, match.end())
        close = closes.at_or_after(sep + len(SEP)) if sep != -1 else None
        if close is None:
            break  # no later element can end either
        found.append((text[match.end() : sep], text[sep + len(SEP) : close.start()]))
        match = head.search(text, close.end())
    return found


def strip_response(text: str) -> str:
    """The text inside a response channel (to its end when it is not closed), or the
    text without stray response markers; message closers removed."""
    start = RESPONSE_OPEN.search(text)
    if start is not None:
        end = RESPONSE_CLOSE.search(text, start.end())
        text = text[start.end() : end.start() if end else len(text)]
    else:
        text = RESPONSE_CLOSE.sub("", text)
    return MESSAGE_CLOSE.sub("", text)
