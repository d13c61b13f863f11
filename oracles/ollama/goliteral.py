"""Read the data in Go test files: the composite literals of table-driven tests as JSON.

A small reader for the part of Go that Ollama's renderer and parser tests write their
tables in: string (interpreted and raw), number and boolean literals, `+` of strings,
composite literals (structs become dicts keyed by "." and the field name, slices lists,
maps dicts), `&x`, and calls of the tests' helper functions (kept as `{"$call": name, "args":
[...]}` for the recorder to resolve). Anything else (a closure, a variable) is kept as
`{"$expr": source}`, so a case that needs it is skipped with that reason, never guessed.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
    |(?P<raw>`[^`]*`)
    |(?P<str>"(?:\\.|[^"\\\n])*")
    |(?P<rune>'(?:\\.|[^'\\\n])+')
    |(?P<num>\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|0[xX][0-9a-fA-F]+|\d+)
    |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>:=|\.\.\.|[{}\[\]().,:;&*+\-=!<>|/%])
    """,
    re.VERBOSE | re.DOTALL,
)


class GoSyntaxError(ValueError):
    """The text is outside the part of Go this reader knows."""


def tokenize(text: str) -> list[tuple[str, str]]:
    """The tokens of `text` as (kind, text), comments and spaces dropped."""
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise GoSyntaxError(f"unknown character {text[pos]!r} at {pos}")
        kind = match.lastgroup or ""
        if kind != "ws":
            tokens.append((kind, match.group()))
        pos = match.end()
    return tokens


def go_string(token: str) -> str:
    """The value of a Go string literal (interpreted or raw)."""
    if token.startswith("`"):
        return token[1:-1].replace("\r", "")
    body = token[1:-1]
    out, i = bytearray(), 0
    simple = {"n": 10, "t": 9, "r": 13, "\\": 92, '"': 34, "'": 39, "a": 7, "b": 8, "f": 12}
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode()
            i += 1
            continue
        esc = body[i + 1]
        if esc in simple:
            out.append(simple[esc])
            i += 2
        elif esc == "x":
            out.append(int(body[i + 2 : i + 4], 16))
            i += 4
        elif esc in "uU":
            width = 4 if esc == "u" else 8
            out += chr(int(body[i + 2 : i + 2 + width], 16)).encode()
            i += 2 + width
        else:  # octal
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
    return out.decode("utf-8", errors="surrogateescape")


class Reader:
    """A cursor over tokens that reads Go expressions into JSON-like values."""

    def __init__(
        self, tokens: list[tuple[str, str]], pos: int = 0, env: dict[str, Any] | None = None
    ) -> None:
        """Start reading `tokens` at `pos`; `env` holds the constants and helpers known."""
        self.tokens, self.pos, self.env = tokens, pos, env or {}

    def peek(self, ahead: int = 0) -> str:
        """The text of the token `ahead` of the cursor ("" past the end)."""
        i = self.pos + ahead
        return self.tokens[i][1] if i < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        """Move past one token (which must be `expected` when given)."""
        text = self.peek()
        if expected is not None and text != expected:
            raise GoSyntaxError(f"expected {expected!r}, found {text!r} at token {self.pos}")
        self.pos += 1
        return text

    def skip_balanced(self) -> None:
        """Move past a bracketed group that starts at the cursor."""
        pairs = {"{": "}", "(": ")", "[": "]"}
        depth = []
        while True:
            text = self.take()
            if text in pairs:
                depth.append(pairs[text])
            elif depth and text == depth[-1]:
                depth.pop()
                if not depth:
                    return
            elif not text:
                raise GoSyntaxError("unbalanced brackets")

    def skip_type(self) -> None:
        """Move past a type (`[]T`, `map[K]V`, `*T`, `pkg.T`, `struct{...}`, `func(...)`)."""
        text = self.peek()
        if text == "[":
            self.take()
            while self.peek() != "]":
                self.take()
            self.take()
            self.skip_type()
        elif text == "map":
            self.take()
            self.skip_balanced()
            self.skip_type()
        elif text == "*":
            self.take()
            self.skip_type()
        elif text in ("struct", "interface"):
            self.take()
            self.skip_balanced()
        elif text == "func":
            self.take()
            self.skip_balanced()
            if self.peek() == "(":
                self.skip_balanced()
            elif self.peek() not in ("{", ",", ")", "}"):
                self.skip_type()
        else:
            self.take()
            while self.peek() == ".":
                self.take()
                self.take()

    def expr(self) -> Any:
        """Read one expression (strings joined by `+`)."""
        start = self.pos
        value = self.unary()
        while self.peek() == "+":
            self.take()
            right = self.unary()
            if isinstance(value, str) and isinstance(right, str):
                value += right
            else:
                value = {"$expr": self.source(start)}
        return value

    def source(self, start: int) -> str:
        """The tokens from `start` to the cursor, joined."""
        return " ".join(text for _, text in self.tokens[start : self.pos])

    def unary(self) -> Any:
        """Read `&x`, `-x` or a primary expression."""
        if self.peek() == "&":
            self.take()
            return self.unary()
        if self.peek() == "-":
            self.take()
            return -self.unary()
        return self.primary()

    def primary(self) -> Any:
        """Read a literal, a composite literal, a call or a name."""
        kind, text = self.tokens[self.pos]
        if kind in ("str", "raw"):
            self.take()
            return go_string(text)
        if kind == "num":
            self.take()
            return float(text) if "." in text or "e" in text.lower() else int(text, 0)
        if text == "{":
            return self.elements()
        if text in ("[", "map", "struct", "*"):
            self.skip_type()
            value = self.elements()
            # An empty literal is a map or struct unless its type is a slice.
            return {} if value == [] and text != "[" else value
        if text == "func":
            start = self.pos
            self.skip_type()
            self.skip_balanced()
            return {"$expr": self.source(start)}
        if kind == "ident":
            return self.named()
        raise GoSyntaxError(f"unexpected {text!r} at token {self.pos}")

    def named(self) -> Any:
        """Read what starts with a name: a constant, a call, a typed composite literal."""
        start = self.pos
        name = self.take()
        while self.peek() == ".":
            self.take()
            name += "." + self.take()
        if name in ("true", "false"):
            return name == "true"
        if name == "nil":
            return None
        if self.peek() == "(":
            args = self.arguments()
            value: Any = {"$call": name, "args": args}
            if not args and f"{name}()" in self.env:
                value = self.env[f"{name}()"]
        elif self.peek() == "{":
            value = self.elements()
            if value == [] and name not in ("api.PropertyType",):
                value = {}  # an empty struct literal
            typed = name in TYPED or "Event" in name  # an event's type is its meaning
            value = {"$type": name, "value": value} if typed else value
        elif name in self.env:
            value = self.env[name]
        else:
            value = {"$expr": self.source(start)}
        while self.peek() in (".", "["):
            if self.indexes_list(value):  # `helper()[0]`: an element of a literal list
                value = value[int(self.tokens[self.pos + 1][1])]
                self.pos += 3
                continue
            self.skip_suffix()  # any other selector or index: not data
            value = {"$expr": self.source(start)}
        return value

    def indexes_list(self, value: Any) -> bool:
        """Whether `[N]` follows the cursor and `value` is a list to take element N of."""
        bracket = self.peek() == "[" and self.peek(2) == "]"
        return bracket and self.tokens[self.pos + 1][0] == "num" and isinstance(value, list)

    def skip_suffix(self) -> None:
        """Move past `.name`, `.name(...)` or `[...]`."""
        if self.take() == ".":
            self.take()
            if self.peek() == "(":
                self.skip_balanced()
        else:
            self.pos -= 1
            self.skip_balanced()

    def arguments(self) -> list[Any]:
        """Read `(a, b, ...)`."""
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.expr())
            if self.peek() == "...":
                self.take()
            if self.peek() == ",":
                self.take()
        self.take(")")
        return args

    def elements(self) -> Any:
        """Read `{...}`: keyed by names (a struct), by values (a map), or a list."""
        self.take("{")
        keyed: dict[str, Any] = {}
        listed: list[Any] = []
        while self.peek() != "}":
            is_field = self.tokens[self.pos][0] == "ident" and self.peek(1) == ":"
            first = self.take() if is_field else self.expr()
            if self.peek() == ":":
                self.take()
                # A struct's field name is marked with a leading "." (a map key is not).
                key = f".{first}" if is_field else first
                keyed[key if isinstance(key, str) else repr(key)] = self.expr()
            else:
                listed.append(first)
            if self.peek() == ",":
                self.take()
        self.take("}")
        return keyed if keyed else listed


#: Types whose literal the recorder must see by name (a think value, a property type).
TYPED = frozenset({"api.ThinkValue", "api.PropertyType", "orderedArg", "orderedProp"})
