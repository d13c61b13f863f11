"""Building llama.cpp PEG grammars the way chat.cpp does (`common_peg_parser_builder`).

    p = Builder()
    p.set_root(p.literal("<think>") + p.until("</think>") + "</think>" + p.rest())
    arena = p.build()

Parsers are `P` handles on the builder's arena: `a + b` is a sequence, `a | b` a choice,
`a << b` a sequence with `space()` between, and a `str` on either side is a literal, as
the C++ operators have it. The method names are llama.cpp's; `rule(name, fn)` takes a
function for recursive rules (`json()` is built that way), `rule(name, parser)` a parser.
"""

from __future__ import annotations

from collections.abc import Callable

from app.render.engines.llamacpp.peg.peg import Arena
from app.render.engines.llamacpp.peg.peg_builder_base import BaseBuilder, P, parse_char_classes

__all__ = ["Builder", "P", "build_peg_parser", "parse_char_classes"]


class Builder(BaseBuilder):
    """common_peg_parser_builder: the primitives, and strings, JSON and Python values as
    peg-parser.cpp composes them."""

    def double_quoted_string(self) -> P:
        return self.rule("double-quoted-string", lambda: self._quoted('"'))

    def single_quoted_string(self) -> P:
        return self.rule("single-quoted-string", lambda: self._quoted("'"))

    def _quoted(self, quote: str) -> P:
        return self.sequence(self.literal(quote), self.string_content(quote), self.literal(quote))

    def json_number(self) -> P:
        def build() -> P:
            int_part = self.choice(
                "0", self.sequence(self.chars("[1-9]", 1, 1), self.chars("[0-9]", 0, -1))
            )
            frac = self.sequence(".", self.chars("[0-9]"))
            exp = self.sequence(
                self.choice("e", "E"), self.optional(self.chars("[+-]", 1, 1)), self.chars("[0-9]")
            )
            # A number is only taken when nothing could extend it (at the end of a lenient
            # parse that is undecided, so a trailing number needs more input).
            stop = self.negate(self.chars("[0-9.eE+-]", 1, 1))
            minus = self.optional(self.literal("-"))
            return self.sequence(minus, int_part, self.optional(frac), self.optional(exp), stop)

        return self.rule("json-number", build)

    def json_string(self) -> P:
        return self.rule("json-string", lambda: self._quoted('"'))

    def json_bool(self) -> P:
        return self.rule("json-bool", lambda: self.choice("true", "false"))

    def json_null(self) -> P:
        return self.rule("json-null", lambda: self.literal("null"))

    def _container(self, open_: str, close: str, element: P, comma_space: bool, tail: bool) -> P:
        ws = self.space()
        more = (ws, self.literal(","), ws, element) if comma_space else (",", ws, element)
        items = self.sequence(element, self.zero_or_more(self.sequence(*more)))
        body = self.choice(self.literal(close), self.sequence(items, ws, self.literal(close)))
        return self.sequence(open_, ws, body, *([ws] if tail else []))

    def _member(self, key: P, value: P) -> P:
        ws = self.space()
        return self.sequence(key, ws, ":", ws, value)

    def json_object(self) -> P:
        return self.rule(
            "json-object",
            lambda: self._container(
                "{", "}", self._member(self.json_string(), self.json()), True, False
            ),
        )

    def json_array(self) -> P:
        return self.rule("json-array", lambda: self._container("[", "]", self.json(), True, False))

    def json(self) -> P:
        """A JSON value: object, array, string, number, true/false or null."""

        def build() -> P:
            return self.choice(
                self.json_object(), self.json_array(), self.json_string(),
                self.json_number(), self.json_bool(), self.json_null(),
            )  # fmt: skip

        return self.rule("json-value", build)

    def json_member(self, key: str, p: P) -> P:
        return self._member(self.literal(f'"{key}"'), p)

    def python_string(self) -> P:
        return self.rule(
            "python-string",
            lambda: self.choice(self.double_quoted_string(), self.single_quoted_string()),
        )

    def python_number(self) -> P:
        return self.json_number()

    def python_bool(self) -> P:
        return self.rule("python-bool", lambda: self.choice("True", "False"))

    def python_null(self) -> P:
        return self.rule("python-none", lambda: self.literal("None"))

    def python_dict(self) -> P:
        return self.rule(
            "python-dict",
            lambda: self._container(
                "{", "}", self._member(self.python_string(), self.python_value()), True, True
            ),
        )

    def python_array(self) -> P:
        return self.rule(
            "python-array", lambda: self._container("[", "]", self.python_value(), False, True)
        )

    def python_value(self) -> P:
        """A Python literal: dict, list, string (either quote), number, True/False, None."""

        def build() -> P:
            return self.choice(
                self.python_dict(), self.python_array(), self.python_string(),
                self.python_number(), self.python_bool(), self.python_null(),
            )  # fmt: skip

        return self.rule("python-value", build)

    def marker(self) -> P:
        """Text between <> or []."""
        angle = self.literal("<") + self.until(">") + self.literal(">")
        square = self.literal("[") + self.until("]") + self.literal("]")
        return self.choice(angle, square)


def build_peg_parser(fn: Callable[[Builder], P]) -> Arena:
    """Build a grammar whose root is `fn(builder)`."""
    builder = Builder()
    builder.set_root(fn(builder))
    return builder.build()
