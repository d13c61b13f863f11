"""Edge-LLM's Inja lexer: template text and tag bodies into tokens, as Inja 3.5.0 cuts them.

Edge-LLM configures Inja with trim_blocks and lstrip_blocks on and line statements off
(`injaRenderer.cpp`), so the only opening character is `{`. The quirks below are Inja's and
are kept on purpose, because they decide what loads and where an error is reported:

- a name runs over letters, digits, `_` and `.`, so `message.content` is ONE token;
- `-` is a minus operator only right after a name, number, `)`, `]` or `}`; anywhere else it
  starts a number. That state is not reset between tags, so `{{ x }}{{ -1 }}` lexes `-` as
  the operator;
- lstrip_blocks strips blanks before `{%`/`{#` even when the text before them on that line is
  only blanks from the end of the previous tag;
- `-#}` only removes the first newline after a comment, not all whitespace.

Each scan is a forward walk over the source, so the lexer is linear in its input.
"""

from __future__ import annotations

from dataclasses import dataclass

# Token kinds (Inja's Token::Kind).
TEXT = "text"
EXPR_OPEN = "{{"
EXPR_CLOSE = "}}"
STMT_OPEN = "{%"
STMT_CLOSE = "%}"
COMMENT_OPEN = "{#"
COMMENT_CLOSE = "#}"
ID = "id"
NUMBER = "number"
STRING = "string"
UNKNOWN = "unknown"
EOF = "eof"

# Single-character punctuation (kind is the character itself).
_PUNCT = {
    "+": "+",
    "*": "*",
    "/": "/",
    "^": "^",
    "%": "%",
    ".": ".",
    ",": ",",
    ":": ":",
    "|": "|",
    "~": "~",
    "(": "(",
    ")": ")",
    "[": "[",
    "]": "]",
    "{": "{",
    "}": "}",
}
# After these, a `-` is the subtraction operator (Inja's MinusState::Operator).
_ENDS_OPERAND = {")", "]", "}"}

_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_ID_CHARS = _ASCII_LETTERS | _DIGITS | {".", "_"}
_NUMBER_CHARS = _DIGITS | {".", "e", "E"}
# Pending opening tag -> (body state, token kind).
_OPENS = {
    "expr_open": ("expr", EXPR_OPEN),
    "stmt_open": ("stmt", STMT_OPEN),
    "comment_open": ("comment", COMMENT_OPEN),
}
# C's isspace in the "C" locale, used by the parser's "adjacent bracket" rule.
C_SPACE = frozenset(" \t\n\v\f\r")


@dataclass(slots=True)
class Token:
    """A token: its kind and its [start, end) span in the source."""

    kind: str
    start: int
    end: int
    text: str

    def describe(self) -> str:
        """How Inja names the token in an error message."""
        if self.kind == TEXT:
            return "<text>"
        if self.kind == EOF:
            return "<eof>"
        if self.kind == UNKNOWN and self.text > "\x7f":
            # Inja's token is the first byte of a UTF-8 sequence; shown as U+FFFD.
            return "\ufffd"
        return self.text


class Lexer:
    """Inja's lexer state machine. `tok_start` is where the last scanned token began; Inja
    reports every parser error at that offset (which may be a token looked at ahead)."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.n = len(source)
        self.state = "text"
        self.minus_is_operator = False
        self.tok_start = 0
        self.pos = 0
        self.open_width = 0

    def _make(self, kind: str) -> Token:
        end = max(self.pos, self.tok_start)
        return Token(kind, self.tok_start, end, self.src[self.tok_start : end])

    def scan(self) -> Token:
        """Return the next token."""
        self.tok_start = self.pos
        if self.tok_start >= self.n:
            return self._make(EOF)
        state = self.state
        if state == "text":
            return self._scan_text()
        if state in _OPENS:
            self.state, kind = _OPENS[state]
            self.pos += self.open_width
            return self._make(kind)
        if state == "expr":
            return self._scan_body("}}", "-}}", EXPR_CLOSE, trim=False)
        if state == "stmt":
            return self._scan_body("%}", "-%}", STMT_CLOSE, trim=True)
        return self._scan_comment()

    def _scan_text(self) -> Token:
        src = self.src
        while True:
            brace = src.find("{", self.pos)
            if brace < 0:
                self.pos = self.n
                return self._make(TEXT)
            self.pos = brace
            nxt = src[brace + 1 : brace + 3]
            lstrip = force = False
            if nxt.startswith("{"):
                force = nxt == "{-"
                lstrip = force
                self.state, width = "expr_open", 3 if force else 2
            elif nxt.startswith("%"):
                if nxt == "%+":
                    self.state, width = "stmt_open", 3
                elif nxt == "%-":
                    self.state, width, lstrip, force = "stmt_open", 3, True, True
                else:
                    self.state, width, lstrip = "stmt_open", 2, True
            elif nxt.startswith("#"):
                force = nxt == "#-"
                self.state, width, lstrip = "comment_open", 3 if force else 2, True
            else:
                self.pos = brace + 1
                continue
            end = brace
            if lstrip:
                end = (
                    _strip_all(src, self.tok_start, end)
                    if force
                    else _strip_line(src, self.tok_start, end)
                )
            self.open_width = width
            if end > self.tok_start:
                return Token(TEXT, self.tok_start, end, src[self.tok_start : end])
            # Empty text: Inja goes straight on to the opening token, which then spans
            # from where the text began.
            self.state, kind = _OPENS[self.state]
            self.pos = brace + width
            return self._make(kind)

    def _scan_body(self, close: str, close_trim: str, close_kind: str, trim: bool) -> Token:
        src = self.src
        while True:
            if self.tok_start >= self.n:
                return self._make(EOF)
            ch = src[self.tok_start]
            if ch in " \t\r":
                self.tok_start += 1
                continue
            if src.startswith(close_trim, self.tok_start):
                self.state = "text"
                self.pos = self.tok_start + len(close_trim)
                tok = self._make(close_kind)
                while self.pos < self.n and src[self.pos] in " \t\n\r":
                    self.pos += 1
                return tok
            if src.startswith(close, self.tok_start):
                self.state = "text"
                self.pos = self.tok_start + len(close)
                tok = self._make(close_kind)
                if trim:
                    self._skip_first_newline()
                return tok
            if ch == "\n":
                self.tok_start += 1
                continue
            break
        self.pos = self.tok_start + 1
        if ch in _ASCII_LETTERS:
            self.minus_is_operator = True
            return self._scan_id()
        minus_was_operator = self.minus_is_operator
        self.minus_is_operator = False
        if ch in _PUNCT:
            if ch in _ENDS_OPERAND:
                self.minus_is_operator = True
            return self._make(_PUNCT[ch])
        if ch == "-":
            return self._make("-") if minus_was_operator else self._scan_number()
        if ch in "<>=!":
            if self.pos < self.n and src[self.pos] == "=":
                self.pos += 1
                return self._make(ch + "=")
            return self._make(ch if ch in "<>" else UNKNOWN)
        if ch in "\"'":
            return self._scan_string()
        if ch in _DIGITS:
            self.minus_is_operator = True
            return self._scan_number()
        if ch in "_@$":
            self.minus_is_operator = True
            return self._scan_id()
        return self._make(UNKNOWN)

    def _scan_id(self) -> Token:
        src, n = self.src, self.n
        while self.pos < n and src[self.pos] in _ID_CHARS:
            self.pos += 1
        return self._make(ID)

    def _scan_number(self) -> Token:
        # As permissive as Inja: the literal is checked when it is converted.
        src, n = self.src, self.n
        while self.pos < n:
            ch = src[self.pos]
            if ch in _NUMBER_CHARS or (ch in "+-" and src[self.pos - 1] in "eE"):
                self.pos += 1
            else:
                break
        return self._make(NUMBER)

    def _scan_string(self) -> Token:
        src, n = self.src, self.n
        quote = src[self.tok_start]
        escape = False
        while self.pos < n:
            ch = src[self.pos]
            self.pos += 1
            if ch == "\\":
                escape = not escape
            elif not escape and ch == quote:
                break
            else:
                escape = False
        return self._make(STRING)

    def _scan_comment(self) -> Token:
        src = self.src
        end = src.find("#}", self.pos)
        if end < 0:
            self.pos = self.n
            return self._make(EOF)
        # `end - 1` may point at the `#` of `{#`; Inja looks there too.
        self.state = "text"
        self.pos = end + 2
        tok = self._make(COMMENT_CLOSE)
        # trim_blocks is on, so the first newline always goes, `-#}` or not.
        self._skip_first_newline()
        return tok

    def _skip_first_newline(self) -> None:
        src = self.src
        if self.pos < self.n:
            if src[self.pos] == "\n":
                self.pos += 1
            elif src[self.pos] == "\r":
                self.pos += 1
                if self.pos < self.n and src[self.pos] == "\n":
                    self.pos += 1


def _strip_all(src: str, start: int, end: int) -> int:
    """End of the text after removing all trailing whitespace (`{%-`, `{{-`, `{#-`)."""
    while end > start and src[end - 1] in " \t\n\r":
        end -= 1
    return end


def _strip_line(src: str, start: int, end: int) -> int:
    """lstrip_blocks: drop trailing blanks if only blanks follow the last line break."""
    cut = end
    while cut > start:
        ch = src[cut - 1]
        if ch in " \t":
            cut -= 1
        elif ch in "\n\r":
            break
        else:
            return end
    return cut
