"""Writing a Modelfile value that Ollama's parser reads back exactly.

Facts (ollama/ollama `parser/parser.go` at fb30760996871fa9460115c753afd2c60d4ab0f7): after
a command's name and one space, the value's runes are gathered; at every newline the
buffer, trimmed of white space, is unquoted (triple double quotes, double quotes, or bare), and the
command ends there when that succeeds; otherwise the newline is kept and gathering goes
on. Spaces and tabs are always kept; any other rune only when Go calls it printable
(`strconv.IsPrint`, which Python's `str.isprintable` matches): a template with control
or format characters (ESC, a zero-width space, a no-break space) loses them. So rather
than reason about each case, `value` writes the candidate quoting and reads it back the
parser's way, and gives None when no quoting survives.
"""

from __future__ import annotations

_TRIPLE, _SINGLE = '"""', '"'


def value(text: str, quotes: tuple[str, ...] = (_SINGLE, _TRIPLE)) -> str | None:
    """`text` quoted so that Ollama's Modelfile parser reads exactly `text` back, trying
    `quotes` in order; None when none does."""
    for quote in quotes:
        written = f"{quote}{text}{quote}"
        if read_back(written) == text:
            return written
    return None


def read_back(written: str) -> str | None:
    """What Ollama's parser reads for the value `written` (then a newline), or None when
    the command ends before `written` does or never ends."""
    buffer = ""
    for index, char in enumerate(written + "\n"):
        if char in "\r\n":
            read, ok = _unquote(buffer.strip())
            if ok:
                return read if index == len(written) else None
            buffer += char
        elif char in " \t" or char.isprintable():
            buffer += char
    return None


def _unquote(text: str) -> tuple[str, bool]:
    """Ollama's `unquote`: triple or double quotes stripped, or the text as it is."""
    for quote in (_TRIPLE, _SINGLE):
        if text.startswith(quote):
            closed = len(text) >= 2 * len(quote) and text.endswith(quote)
            return (text[len(quote) : -len(quote)], True) if closed else ("", False)
    return text, True
