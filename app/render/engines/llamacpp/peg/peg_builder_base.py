"""The primitives of llama.cpp's PEG builder (`common_peg_parser_builder`) and `P`.

`peg_builder.Builder` adds the string, JSON and Python value grammars on top.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Union

from app.render.engines.llamacpp.peg import peg_parsers as pp
from app.render.engines.llamacpp.peg import peg_scanners as ps
from app.render.engines.llamacpp.peg.peg import Arena
from app.render.engines.llamacpp.peg.schema import Node as SchemaNode
from app.render.engines.llamacpp.peg.schema import document

Operand = Union["P", str]


class P:
    """A parser in a builder's arena (`common_peg_parser`): its id and its builder."""

    __slots__ = ("builder", "id")

    def __init__(self, parser_id: int, builder: BaseBuilder) -> None:
        self.id, self.builder = parser_id, builder

    def _lift(self, other: Operand) -> P:
        return self.builder.literal(other) if isinstance(other, str) else other

    def __add__(self, other: Operand) -> P:
        return self.builder.sequence(self, self._lift(other))

    def __radd__(self, other: str) -> P:
        return self.builder.sequence(self._lift(other), self)

    def __or__(self, other: Operand) -> P:
        return self.builder.choice(self, self._lift(other))

    def __ror__(self, other: str) -> P:
        return self.builder.choice(self._lift(other), self)

    def __lshift__(self, other: Operand) -> P:
        return self.builder.sequence(self, self.builder.space(), self._lift(other))

    def __rlshift__(self, other: str) -> P:
        return self.builder.sequence(self._lift(other), self.builder.space(), self)


def _rule_name(name: str) -> str:
    """llama.cpp's rule names: runs of other characters than [a-zA-Z0-9-] become "-"."""
    return re.sub(r"[^a-zA-Z0-9-]+", "-", name)


def _class_char(content: str, i: int) -> tuple[int, int]:
    """One character of a class at `i` (escapes included): its code and length."""
    if content[i] == "\\" and i + 1 < len(content):
        kind = content[i + 1]
        widths = {"x": 2, "u": 4, "U": 8}
        if kind in widths:
            digits = content[i + 2 : i + 2 + widths[kind]]
            if len(digits) == widths[kind] and all(c in "0123456789abcdefABCDEF" for c in digits):
                return int(digits, 16), 2 + widths[kind]
            return ord(kind), 2  # an invalid escape is the letter itself
        return ord({"n": "\n", "t": "\t", "r": "\r"}.get(kind, kind)), 2
    return ord(content[i]), 1


def parse_char_classes(classes: str) -> tuple[list[tuple[int, int]], bool]:
    """A class such as "[^a-z\\n]" as code point ranges, and whether it is negated."""
    content = classes[1:] if classes.startswith("[") else classes
    content = content[:-1] if content.endswith("]") else content
    negated = content.startswith("^")
    content = content[1:] if negated else content
    ranges, i = [], 0
    while i < len(content):
        low, width = _class_char(content, i)
        i += width
        if i + 1 < len(content) and content[i] == "-":
            high, width = _class_char(content, i + 1)
            ranges.append((low, high))
            i += 1 + width
        else:
            ranges.append((low, low))
    return ranges, negated


class BaseBuilder:
    """The primitives of common_peg_parser_builder: parsers made in an arena, handed out by
    `build`."""

    def __init__(self) -> None:
        self.arena = Arena()

    def add(self, parser: pp.Parser) -> P:
        """Add a parser to the arena."""
        self.arena.parsers.append(parser)
        return P(len(self.arena.parsers) - 1, self)

    # The primitives, in peg-parser.h's order.
    def eps(self) -> P:
        return self.add(pp.Epsilon())

    def start(self) -> P:
        return self.add(pp.Start())

    def end(self) -> P:
        return self.add(pp.End())

    def literal(self, literal: str) -> P:
        return self.add(ps.Literal(literal))

    def _flat(self, kind: type, parsers: Sequence[Operand]) -> list[int]:
        ids = []
        for parser in parsers:
            parser = self.literal(parser) if isinstance(parser, str) else parser
            inner = self.arena.parsers[parser.id]
            ids.extend(inner.children if type(inner) is kind else [parser.id])
        return ids

    def sequence(self, *parsers: Operand) -> P:
        """All in order; nested sequences are flattened as llama.cpp does."""
        return self.add(pp.Sequence(*self._flat(pp.Sequence, parsers)))

    def choice(self, *parsers: Operand) -> P:
        """The first that does not fail; nested choices are flattened."""
        return self.add(pp.Choice(*self._flat(pp.Choice, parsers)))

    def repeat(self, p: P, min_count: int, max_count: int | None = None) -> P:
        """Between min and max repetitions (-1: unbounded; one count: exactly that many)."""
        top = min_count if max_count is None else max_count
        return self.add(pp.Repetition(p.id, min_count, top))

    def one_or_more(self, p: P) -> P:
        return self.repeat(p, 1, -1)

    def zero_or_more(self, p: P) -> P:
        return self.repeat(p, 0, -1)

    def optional(self, p: P) -> P:
        return self.repeat(p, 0, 1)

    def peek(self, p: P) -> P:
        return self.add(pp.And(p.id))

    def negate(self, p: P) -> P:
        return self.add(pp.Not(p.id))

    def any(self) -> P:
        return self.add(ps.Any())

    def chars(self, classes: str, min_count: int = 1, max_count: int = -1) -> P:
        ranges, negated = parse_char_classes(classes)
        return self.add(ps.Chars(classes, ranges, negated, min_count, max_count))

    def ref(self, name: str) -> P:
        return self.add(pp.Ref(name))

    def space(self) -> P:
        return self.add(ps.Space())

    def until(self, delimiter: str) -> P:
        return self.add(ps.Until([delimiter]))

    def until_one_of(self, delimiters: Sequence[str]) -> P:
        return self.add(ps.Until(list(delimiters)))

    def rest(self) -> P:
        return self.until_one_of([])

    def string_content(self, delimiter: str) -> P:
        return self.add(ps.StringContent(delimiter))

    def schema(self, p: P, name: str, schema: Any, raw: bool = False) -> P:
        # llama.cpp builds its schema tree from JSON here, refusing what it cannot read
        # (a SchemaError); a node of a tree built before is taken as it is.
        node = schema if isinstance(schema, SchemaNode) else document(schema).root
        return self.add(pp.Delegate(p.id, "Schema", (name, node, raw)))

    def atomic(self, p: P) -> P:
        return self.add(pp.Atomic(p.id))

    def tag(self, tag: str, p: P) -> P:
        return self.add(pp.Node(p.id, tag=tag))

    def gbnf(self, p: P, grammar: str) -> P:
        return self.add(pp.Delegate(p.id, "Gbnf", grammar))

    def ac(self, p: P, delimiters: str | Sequence[str]) -> P:
        found = [delimiters] if isinstance(delimiters, str) else list(delimiters)
        if not found:
            raise ValueError("ac parser requires at least one delimiter")
        return self.add(pp.Delegate(p.id, "Ac", found))

    def rule(self, name: str, p: P | Callable[[], P], trigger: bool = False) -> P:
        """A named rule and a reference to it; with a function, an existing rule of that
        name is reused, and the function may refer to the rule by name (recursion)."""
        clean = _rule_name(name)
        if isinstance(p, P):
            self.arena.rules[clean] = self.add(pp.Node(p.id, name=clean, trigger=trigger)).id
            return self.ref(clean)
        if clean in self.arena.rules:
            return self.ref(clean)
        placeholder = self.add(pp.Node(self.any().id, name=clean, trigger=trigger))
        self.arena.rules[clean] = placeholder.id
        body = p()
        self.arena.rules[clean] = self.add(pp.Node(body.id, name=clean, trigger=trigger)).id
        return self.ref(clean)

    def trigger_rule(self, name: str, p: P | Callable[[], P]) -> P:
        return self.rule(name, p, True)

    def set_root(self, p: P) -> None:
        self.arena.root = p.id

    def build(self) -> Arena:
        """Resolve rule references and hand out the arena."""
        self.arena.resolve_refs()
        return self.arena
