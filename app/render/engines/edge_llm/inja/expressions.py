"""The expression half of Edge-LLM's Inja parser (operator precedence, calls, literals).

Inja parses an expression with one operand list and one operator stack (a shunting-yard
loop), not with a grammar per precedence level, and several of its answers come from that
shape: postfix forms (`|filter`, `.member`, `[index]`, `is test`) apply to the last operand
whatever operators are pending; `x if c else y` swallows the rest of the expression; `not`
binds tighter than comparisons (`not a == b` is `(not a) == b`); a `-` that the lexer took as
an operator with nothing before it fails as "too few arguments"; two operands with no
operator between them fail as "malformed expression". This module re-implements that loop.
Operator precedences (higher binds tighter): or/and 1, in/not in/comparisons 2, + - ~ 3,
* / % not 4, ^ 5 (right-associative).
"""

from __future__ import annotations

from app.render.engines.edge_llm.inja import callbacks
from app.render.engines.edge_llm.inja import lexer as lx
from app.render.engines.edge_llm.inja import nodes as n
from app.render.engines.edge_llm.inja.containers import ContainerMixin
from app.render.engines.edge_llm.inja.literals import (
    LoadError,
    is_keyword,
    keyword_value,
    number_value,
    string_value,
)

#: operator token or word -> (Inja operation name, precedence, right-associative)
BINARY = {
    "and": ("and", 1, False),
    "or": ("or", 1, False),
    "in": ("in", 2, False),
    "not": ("not", 4, False),
    "==": ("==", 2, False),
    "!=": ("!=", 2, False),
    ">": (">", 2, False),
    ">=": (">=", 2, False),
    "<": ("<", 2, False),
    "<=": ("<=", 2, False),
    "+": ("+", 3, False),
    "~": ("~", 3, False),
    "-": ("-", 3, False),
    "*": ("*", 4, False),
    "/": ("/", 4, False),
    "^": ("^", 5, True),
    "%": ("%", 4, False),
    ".": ("at_id", 8, False),
}
TESTS = frozenset(
    [
        "defined",
        "undefined",
        "none",
        "iterable",
        "mapping",
        "sequence",
        "string",
        "boolean",
        "number",
        "integer",
        "true",
        "false",
    ]
)
#: Nesting bound (ours; Inja recurses without one) so hostile input cannot exhaust the stack.
MAX_DEPTH = 100
TOO_DEEP = (
    f"expression nested deeper than {MAX_DEPTH} levels (a limit of this playground; "
    "Edge-LLM's parser recurses and crashes on very deep nesting)"
)


class _Pending:
    """An operator waiting on the stack."""

    __slots__ = ("op", "pos", "prec", "right")

    def __init__(self, op: str, prec: int, right: bool, pos: int) -> None:
        self.op, self.prec, self.right, self.pos = op, prec, right, pos


class ExpressionParser(ContainerMixin):
    """Token handling shared with the statement parser, and `expression()`."""

    def __init__(self, source: str) -> None:
        self.src = source
        self.lexer = lx.Lexer(source)
        self.tok = lx.Token(lx.EOF, 0, 0, "")
        self.peek: lx.Token | None = None
        self.depth = 0
        self.unresolved: list[tuple[str, int]] = []

    # ---- tokens and errors

    def next(self) -> None:
        """Inja's get_next_token."""
        if self.peek is not None:
            self.tok, self.peek = self.peek, None
        else:
            self.tok = self.lexer.scan()

    def look(self) -> lx.Token:
        """Inja's get_peek_token."""
        if self.peek is None:
            self.peek = self.lexer.scan()
        return self.peek

    def error(self, reason: str, kind: str = "parser_error") -> LoadError:
        """A parser error where Inja reports it: the start of the last token scanned."""
        line, column = n.source_location(self.src, self.lexer.tok_start)
        return LoadError(reason, line, column, kind)

    def is_word(self, word: str) -> bool:
        """Whether the current token is the identifier `word`."""
        return self.tok.kind == lx.ID and self.tok.text == word

    # ---- expressions

    def expression(self, stop_word: str = "") -> n.Expr | None:
        """Parse one expression from the current token; None when there is none."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(TOO_DEEP, kind="limit")
        try:
            return self._expression(stop_word)
        finally:
            self.depth -= 1

    def _reduce(self, args: list[n.Expr], ops: list[_Pending]) -> None:
        top = ops.pop()
        count = 1 if top.op == "not" else 2
        if len(args) < count:
            raise self.error("too few arguments")
        operands = args[-count:]
        del args[-count:]
        args.append(n.Op(top.pos, top.op, operands))

    def _expression(self, stop_word: str) -> n.Expr | None:
        args: list[n.Expr] = []
        ops: list[_Pending] = []
        while self.tok.kind != lx.EOF:
            tok = self.tok
            kind = tok.kind
            if stop_word and kind == lx.ID and tok.text == stop_word:
                break
            if kind == lx.STRING:
                lit = n.Literal(tok.start, string_value(self.src, tok.start, tok.end))
                prev = args[-1] if args else None
                adjacent = not ops and (
                    (isinstance(prev, n.Literal) and isinstance(prev.value, str))
                    or (isinstance(prev, n.Op) and prev.op == "~")
                )
                if adjacent:
                    args[-1] = n.Op(lit.pos, "~", [args[-1], lit])
                else:
                    args.append(lit)
            elif kind == lx.NUMBER:
                args.append(n.Literal(tok.start, number_value(self.src, tok.start, tok.end)))
            elif kind == "[":
                args.append(self._bracket(args))
            elif kind == "{":
                args.append(self._object())
            elif kind in ("]", "}", ",", ":"):
                break
            elif kind == lx.ID:
                if self._word(args, ops):
                    break
            elif kind == "." and args:
                args.append(self._member(args.pop()))
            elif kind in BINARY:
                self._push(args, ops, BINARY[kind], tok.start)
            elif kind == "(":
                args.append(self._paren())
            elif kind == "|":
                args.append(self._filter(args))
            else:
                break
            self.next()
        while ops:
            self._reduce(args, ops)
        if len(args) > 1:
            raise self.error("malformed expression")
        return args[0] if args else None

    def _push(self, args: list[n.Expr], ops: list[_Pending], spec: tuple, pos: int) -> None:
        op, prec, right = spec
        while ops and (ops[-1].prec > prec or (ops[-1].prec == prec and not right)):
            self._reduce(args, ops)
        ops.append(_Pending(op, prec, right, pos))

    def _word(self, args: list[n.Expr], ops: list[_Pending]) -> bool:
        """An identifier inside an expression. Returns True when the expression ends."""
        tok = self.tok
        text = tok.text
        peek = self.look()
        if is_keyword(text):
            args.append(n.Literal(tok.start, keyword_value(text)))
        elif text == "is":
            self._test(args, ops)
        elif text == "if" and args:
            self._conditional(args, ops)
            return True
        elif text == "not" and peek.kind == lx.ID and peek.text == "in":
            while ops and ops[-1].prec >= 2:
                self._reduce(args, ops)
            ops.append(_Pending("not in", 2, False, tok.start))
            self.next()
        elif text in ("and", "or", "in", "not"):
            self._push(args, ops, BINARY[text], tok.start)
        elif peek.kind == "(":
            dot = text.rfind(".")
            call = n.Call(tok.start, text[dot + 1 :], [], [], "")
            if dot >= 0:
                call.args.append(n.Var(tok.start, text[:dot]))
                call.arg_names.append("")
            self.next()
            self._call_arguments(call)
            args.append(self._resolve(call))
        else:
            args.append(n.Var(tok.start, text))
        return False

    def _test(self, args: list[n.Expr], ops: list[_Pending]) -> None:
        while ops and ops[-1].op != "not" and ops[-1].prec > 2:
            self._reduce(args, ops)
        if not args:
            raise self.error("missing value before 'is'")
        self.next()
        negate = self.is_word("not")
        if negate:
            self.next()
        if self.tok.kind != lx.ID:
            raise self.error("expected test name after 'is'")
        name = self.tok.text
        if name not in TESTS:
            raise self.error(f"unknown test '{name}'")
        node: n.Expr = n.Test(self.tok.start, name, args.pop())
        if negate:
            node = n.Op(self.tok.start, "not", [node])
        args.append(node)

    def _conditional(self, args: list[n.Expr], ops: list[_Pending]) -> None:
        while ops:
            self._reduce(args, ops)
        if len(args) != 1:
            raise self.error("malformed conditional expression")
        then = args.pop()
        self.next()
        cond = self.expression("else")
        if cond is None:
            raise self.error("conditional expression requires a condition")
        if self.is_word("else"):
            self.next()
            otherwise = self.expression()
            if otherwise is None:
                raise self.error("conditional expression requires a false value")
        else:
            otherwise = n.Literal(then.pos, None)
        args.append(n.Cond(then.pos, cond, then, otherwise))

    def _member(self, container: n.Expr) -> n.Expr:
        """`.name` or `.name(args)` after a value that is not a plain name."""
        self.next()
        if self.tok.kind != lx.ID:
            raise self.error("expected member name after '.'")
        member, pos = self.tok.text, self.tok.start
        if self.look().kind == "(":
            call = n.Call(pos, member, [container], [""], "")
            self.next()
            self._call_arguments(call)
            return self._resolve(call)
        return n.Item(pos, container, n.Literal(pos, member))

    def _filter(self, args: list[n.Expr]) -> n.Expr:
        self.next()
        if self.tok.kind != lx.ID:
            raise self.error(f"expected function name, got '{self.tok.describe()}'")
        if not args:
            # Inja reads past the end of an empty vector here: the real process crashes.
            reason = "a filter with no value before '|' (Inja crashes here)"
            raise self.error(reason, kind="crash")
        call = n.Call(self.tok.start, self.tok.text, [args.pop()], [""], "")
        if self.look().kind == "(":
            self.next()
            self._call_arguments(call)
        return self._resolve(call)

    def _call_arguments(self, call: n.Call) -> None:
        """Arguments after `(` (the current token), up to and including `)`."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(TOO_DEEP, kind="limit")
        while True:
            self.next()
            if self.tok.kind == ")":
                break
            name = ""
            pos = self.tok.start
            if self.tok.kind == lx.ID and self.look().text == "=":
                name = self.tok.text
                self.next()
                self.next()
            expr = self.expression()
            if expr is None:
                raise self.error("expected function argument")
            if call.name == "namespace" and name:
                call.args += [n.Literal(pos, name), expr]
                call.arg_names += ["", ""]
            else:
                call.args.append(expr)
                call.arg_names.append(name)
            if self.tok.kind != ",":
                break
        self.depth -= 1
        if self.tok.kind != ")":
            raise self.error(f"expected right parenthesis, got '{self.tok.describe()}'")

    def _resolve(self, call: n.Call) -> n.Call:
        kind = callbacks.resolve(call.name, len(call.args))
        if kind is None:
            call.kind = "macro"
            self.unresolved.append((call.name, call.pos))
        else:
            call.kind = kind
        return call
