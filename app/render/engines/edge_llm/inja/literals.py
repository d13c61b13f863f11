"""Literal values and load errors of Edge-LLM's patched Inja.

Inja turns a literal's source text into "normalised JSON" and hands it to nlohmann's JSON
parser: Python quotes and keywords become JSON ones, a known escape (`\\n`, `\\u00e9`, ...)
keeps its JSON meaning, an unknown one (`\\s`) keeps its backslash, and `\\'` is a quote only
inside single quotes. A text that is not valid JSON then (a number like `1.` or `01`, a bad
`\\u`) fails with nlohmann's exception, not Inja's; an unterminated string fails with a bare
"unterminated string literal". This module decodes the same way, directly into Python.
"""

from __future__ import annotations

from app.render.engines.edge_llm.inja.nodes import source_location

_DIGITS = frozenset("0123456789")
_JSON_ESCAPES = frozenset('"\\/bfnrtu')
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r"}
_SIMPLE_ESCAPES["t"] = "\t"
_HEX = frozenset("0123456789abcdefABCDEF")
_KEYWORDS = {"true": True, "True": True, "false": False, "False": False}
_KEYWORDS.update({"null": None, "none": None, "None": None})


class LoadError(Exception):
    """The template does not load in Edge-LLM.

    `reason` is the message Inja (or nlohmann) gives, `line`/`column` where it points
    (1-based, column in UTF-8 bytes), `kind` "parser_error" for Inja's ParserError, "json"
    for an nlohmann literal error, "runtime" for "unterminated string literal", "crash" where
    the real parser crashes (undefined behaviour), "limit" for a nesting bound of ours.
    `str()` is the exception text Edge-LLM would show.
    """

    def __init__(self, reason: str, line: int, column: int, kind: str = "parser_error"):
        self.reason = reason
        self.line = line
        self.column = column
        self.kind = kind
        if kind == "parser_error":
            text = f"[inja.exception.parser_error] (at {line}:{column}) {reason}"
        else:
            text = reason
        super().__init__(text)

    @property
    def message(self) -> str:
        """The full exception text (`what()` in C++)."""
        return str(self)


_SYNTAX = "[json.exception.parse_error.101] parse error at line 1, column {}: syntax error while "
_SYNTAX += "parsing value - {}"


_SYNTAX = _SYNTAX.replace("line 1", "line {}")
# nlohmann's names for U+0000..U+001F.
_CONTROL_NAMES = (
    "NUL",
    "SOH",
    "STX",
    "ETX",
    "EOT",
    "ENQ",
    "ACK",
    "BEL",
    "BS",
    "HT",
    "LF",
    "VT",
    "FF",
    "CR",
    "SO",
    "SI",
    "DLE",
    "DC1",
    "DC2",
    "DC3",
    "DC4",
    "NAK",
    "SYN",
    "ETB",
    "CAN",
    "EM",
    "SUB",
    "ESC",
    "FS",
    "GS",
    "RS",
    "US",
)
_SHORT_ESCAPES = {8: "b", 9: "t", 10: "n", 12: "f", 13: "r"}


def _json_error(source: str, pos: int, column: int, detail: str, json_line: int = 1) -> LoadError:
    """nlohmann's parse_error.101 for a literal at `pos`; `column` counts bytes of its JSON."""
    line, col = source_location(source, pos)
    return LoadError(_SYNTAX.format(json_line, column, detail), line, col, kind="json")


def _token_string(read: str) -> str:
    """How nlohmann shows the characters it read: control characters as <U+XXXX>."""
    return "".join(f"<U+{ord(c):04X}>" if c < " " else c for c in read)


def _scan_number(text: str, i: int) -> tuple[int, str]:
    """nlohmann's number scanner from `i`: (end, "") or (index of the failing char, why)."""
    j = i
    if text[j : j + 1] == "-":
        j += 1
        if text[j : j + 1] not in _DIGITS:
            return j, "invalid number; expected digit after '-'"
    if text[j : j + 1] == "0":
        j += 1
    else:
        while text[j : j + 1] in _DIGITS:
            j += 1
    if text[j : j + 1] == ".":
        j += 1
        if text[j : j + 1] not in _DIGITS:
            return j, "invalid number; expected digit after '.'"
        while text[j : j + 1] in _DIGITS:
            j += 1
    if text[j : j + 1] in ("e", "E"):
        j += 1
        if text[j : j + 1] in ("+", "-"):
            j += 1
            if text[j : j + 1] not in _DIGITS:
                return j, "invalid number; expected digit after exponent sign"
        elif text[j : j + 1] not in _DIGITS:
            return j, "invalid number; expected '+', '-', or digit after exponent"
        while text[j : j + 1] in _DIGITS:
            j += 1
    return j, ""


def number_value(source: str, start: int, end: int) -> int | float:
    """The value of the number token source[start:end], or LoadError as nlohmann fails."""
    text = source[start:end]
    stop, why = _scan_number(text, 0)
    if why:
        raise _json_error(source, start, stop + 1, f"{why}; last read: '{text[: stop + 1]}'")
    if stop < len(text):
        # A valid number followed by more: nlohmann scans the next token and refuses it.
        rest = text[stop]
        if rest in _DIGITS or rest == "-":
            stop2, why = _scan_number(text, stop)
            if why:
                detail = f"{why}; last read: '{text[stop : stop2 + 1]}'"
                raise _json_error(source, start, stop2 + 1, detail)
            detail = "unexpected number literal; expected end of input"
            raise _json_error(source, start, stop2, detail)
        detail = f"invalid literal; last read: '{text[: stop + 1]}'; expected end of input"
        raise _json_error(source, start, stop + 1, detail)
    if "." in text or "e" in text or "E" in text:
        return float(text)
    value = int(text)
    # nlohmann keeps integers that fit 64 bits (signed, or unsigned if positive).
    return value if -(2**63) <= value < 2**64 else float(value)


def keyword_value(text: str) -> bool | None:
    """The value of true/false/null/none/True/False/None."""
    return _KEYWORDS[text]


def is_keyword(text: str) -> bool:
    """Whether an identifier token is one of Inja's literal keywords."""
    return text in _KEYWORDS


def _normalise(source: str, start: int, end: int) -> str:
    """Inja's `parse_literal` for a string token: the JSON text it hands to nlohmann."""
    quote = source[start]
    out = ['"']
    escaped = False
    for i in range(start + 1, end):
        ch = source[i]
        if escaped:
            if quote == "'" and ch == "'":
                out.append("'")
            elif ch in _JSON_ESCAPES:
                out.append("\\" + ch)
            else:
                # Unknown escapes such as \s keep their backslash (a patch for Python parity).
                out.append("\\\\" + ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == quote:
            out.append('"')
            return "".join(out)
        elif ch == '"':
            out.append('\\"')
        elif ch < " ":
            out.append(_CONTROL.get(ch) or f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    line, column = source_location(source, start)
    raise LoadError("unterminated string literal", line, column, kind="runtime")


def string_value(source: str, start: int, end: int) -> str:
    """Decode the string token source[start:end] as Inja's `parse_literal` + nlohmann do."""
    norm = _normalise(source, start, end)
    out: list[str] = []
    i = 1
    last = len(norm) - 1
    while i < last:
        ch = norm[i]
        if ch < " ":
            raise _control_error(source, start, norm, i)
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        esc = norm[i + 1]
        i += 2
        if esc != "u":
            out.append(_SIMPLE_ESCAPES[esc])
            continue
        char, i = _unicode_escape(source, start, norm, i)
        out.append(char)
    return "".join(out)


def _control_error(source: str, start: int, norm: str, at: int) -> LoadError:
    """A raw control character (after a backslash Inja left alone) that JSON refuses."""
    code = ord(norm[at])
    read = norm[: at + 1]
    json_line = read.count("\n") + 1
    column = len(read[read.rfind("\n") + 1 :].encode("utf-8", "surrogatepass"))
    how = f"\\u{code:04X}" + (f" or \\{_SHORT_ESCAPES[code]}" if code in _SHORT_ESCAPES else "")
    why = f"control character U+{code:04X} ({_CONTROL_NAMES[code]}) must be escaped to {how}"
    detail = f"invalid string: {why}; last read: '{_token_string(read)}'"
    return _json_error(source, start, column, detail, json_line)


def _unicode_escape(source: str, start: int, norm: str, i: int) -> tuple[str, int]:
    """A JSON `\\uXXXX` escape (with surrogate pairs) whose hex digits start at norm[i]."""

    def fail(at: int, why: str) -> LoadError:
        # nlohmann reads bytes: a non-ASCII character where a hex digit belongs is one byte
        # read (shown as U+FFFD), not the whole character.
        bad = norm[at] if norm[at] < "\x80" else "\ufffd"
        column = len(norm[:at].encode("utf-8", "surrogatepass")) + 1
        detail = f"invalid string: {why}; last read: '{norm[:at]}{bad}'"
        return _json_error(source, start, column, detail)

    hex_needed = "'\\u' must be followed by 4 hex digits"
    code, bad = _hex4(norm, i)
    if bad >= 0:
        raise fail(bad, hex_needed)
    i += 4
    if 0xDC00 <= code <= 0xDFFF:
        raise fail(i - 1, "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF")
    if not 0xD800 <= code <= 0xDBFF:
        return chr(code), i
    pair = "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF"
    if norm[i : i + 1] != "\\":
        raise fail(i, pair)
    if norm[i + 1 : i + 2] != "u":
        raise fail(i + 1, pair)
    low, bad = _hex4(norm, i + 2)
    if bad >= 0:
        raise fail(bad, hex_needed)
    if not 0xDC00 <= low <= 0xDFFF:
        raise fail(i + 5, pair)
    return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), i + 6


def _hex4(text: str, i: int) -> tuple[int, int]:
    """Four hex digits at text[i:]: (value, -1), or (0, index of the first bad char)."""
    for k in range(i, i + 4):
        if text[k : k + 1] not in _HEX:
            return 0, k
    return int(text[i : i + 4], 16), -1
