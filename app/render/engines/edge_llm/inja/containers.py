"""Brackets, braces and parentheses in Edge-LLM's Inja expressions.

A `[` right after a value is a subscript or slice, otherwise a list literal. "Right after"
is Inja's own rule: a variable whose name ends exactly at the bracket, or any other computed
value (a call, an operator result, a literal list...) with no whitespace before the bracket;
so `x [0]` is a list literal after `x` (then "malformed expression"), `"abc"[1:]` too, and
`(x)[0]` as well, because the parenthesised `x` is still a variable that ends before `)`.
A parenthesised list `(a, b)` is an array, as Inja has no tuples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.render.engines.edge_llm.inja import lexer as lx
from app.render.engines.edge_llm.inja import nodes as n

if TYPE_CHECKING:
    from app.render.engines.edge_llm.inja.literals import LoadError


def is_function_node(expr: n.Expr) -> bool:
    """Inja builds everything but literals and variables as a FunctionNode."""
    return not isinstance(expr, (n.Literal, n.Var))


class ContainerMixin:
    """Parsing of `[...]`, `{...}` and `(...)` for ExpressionParser."""

    src: str
    tok: lx.Token

    def next(self) -> None:  # pragma: no cover - provided by ExpressionParser
        raise NotImplementedError

    def error(self, reason: str, kind: str = "parser_error") -> LoadError:  # pragma: no cover
        raise NotImplementedError

    def expression(self, stop_word: str = "") -> n.Expr | None:  # pragma: no cover
        raise NotImplementedError

    def _bracket(self, args: list[n.Expr]) -> n.Expr:
        pos = self.tok.start
        prev = args[-1] if args else None
        adjacent = pos > 0 and self.src[pos - 1] not in lx.C_SPACE
        follows = (isinstance(prev, n.Var) and prev.pos + len(prev.name) == pos) or (
            prev is not None and is_function_node(prev) and adjacent
        )
        if not follows:
            return self._array(pos)
        container = args.pop()
        self.next()
        first = None
        if self.tok.kind not in (":", "]"):
            first = self.expression()
        if self.tok.kind == ":":
            self.next()
            stop = None
            if self.tok.kind not in (":", "]"):
                stop = self.expression()
            step = None
            if self.tok.kind == ":":
                self.next()
                if self.tok.kind != "]":
                    step = self.expression()
            if self.tok.kind != "]":
                raise self.error("expected closing bracket after slice")
            null = n.Literal(pos, None)
            return n.Slice(pos, container, first or null, stop or null, step or null)
        if first is None or self.tok.kind != "]":
            raise self.error("expected index and closing bracket")
        return n.Item(pos, container, first)

    def _array(self, pos: int) -> n.Expr:
        items: list[n.Expr] = []
        self.next()
        while self.tok.kind != "]":
            item = self.expression()
            if item is None:
                raise self.error("expected array element")
            items.append(item)
            if self.tok.kind == ",":
                self.next()
                if self.tok.kind == "]":
                    break
            elif self.tok.kind != "]":
                raise self.error("expected ',' or ']' in array literal")
        return n.ListLit(pos, items)

    def _object(self) -> n.Expr:
        pos = self.tok.start
        pairs: list[tuple[n.Expr, n.Expr]] = []
        self.next()
        while self.tok.kind != "}":
            key = self.expression()
            if key is None or self.tok.kind != ":":
                raise self.error("expected object key followed by ':'")
            self.next()
            value = self.expression()
            if value is None:
                raise self.error("expected object value")
            pairs.append((key, value))
            if self.tok.kind == ",":
                self.next()
                if self.tok.kind == "}":
                    break
            elif self.tok.kind != "}":
                raise self.error("expected ',' or '}' in object literal")
        return n.DictLit(pos, pairs)

    def _paren(self) -> n.Expr:
        pos = self.tok.start
        self.next()
        expr = self.expression()
        if expr is None:
            raise self.error("empty expression in parentheses")
        if self.tok.kind == ",":
            items = [expr]
            while self.tok.kind == ",":
                self.next()
                if self.tok.kind == ")":
                    break
                item = self.expression()
                if item is None:
                    raise self.error("expected tuple element")
                items.append(item)
            expr = n.ListLit(pos, items)
        if self.tok.kind != ")":
            raise self.error(f"expected right parenthesis, got '{self.tok.describe()}'")
        return expr
