"""Parse a chat template as Edge-LLM's patched Inja 3.5.0 does, or fail as it fails.

No library parses this dialect: Jinja2 accepts far more (filters blocks, `.append`, any
filter name, undefined variables), and Inja's C++ parser is reachable from Python only by
building it. Edge-LLM refuses to load a model whose template its parser rejects, so this is
a re-implementation of that parser's decisions: which statements exist, how each is closed,
that every function name and argument count must be registered (or be a macro defined
somewhere in the file), and the message and position each failure reports. Expression
parsing is in `expressions.py`, tokens in `lexer.py`, the tree in `nodes.py`.

Statements: if / elif / else if / else / endif, for v in x [if c] / for k, v in x / endfor,
set k = x, set k ... endset, macro m(a, b=x) / endmacro, break, continue, generation /
endgeneration, block / endblock, include "f", extends "f". Anything else (`filter`, `call`,
`raw`, `do`, `with`, ...) is "expected statement, got '<word>'".
"""

from __future__ import annotations

from app.render.engines.edge_llm.inja import lexer as lx
from app.render.engines.edge_llm.inja import nodes as n
from app.render.engines.edge_llm.inja.expressions import ExpressionParser
from app.render.engines.edge_llm.inja.literals import LoadError

__all__ = ["LoadError", "parse"]

_BOM = "\ufeff"
#: Block nesting bound (ours): the parser needs none, but a recursive renderer does.
MAX_BLOCK_DEPTH = 200


class _Frame:
    """An open block statement: its node and the body it was added to."""

    __slots__ = ("node", "parent")

    def __init__(self, node: n.Node, parent: list[n.Node]) -> None:
        self.node, self.parent = node, parent


class _Parser(ExpressionParser):
    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.root: list[n.Node] = []
        self.block = self.root
        # Inja keeps one stack per statement kind, so mis-nested ends are not noticed.
        self.ifs: list[_Frame] = []
        self.fors: list[_Frame] = []
        self.blocks: list[_Frame] = []
        self.set_blocks: list[_Frame] = []
        self.macro_stack: list[_Frame] = []
        self.generation_depth = 0
        self.macros: dict[str, n.Macro] = {}
        self.named_blocks: dict[str, n.Block] = {}

    def _open(self, stack: list[_Frame], node: n.Node, body: list[n.Node]) -> None:
        if (
            len(self.ifs)
            + len(self.fors)
            + len(self.blocks)
            + len(self.set_blocks)
            + len(self.macro_stack)
            >= MAX_BLOCK_DEPTH
        ):
            raise self.error(
                f"blocks nested deeper than {MAX_BLOCK_DEPTH} levels (a limit of this playground, "
                "so that rendering stays within Python's stack; Edge-LLM has none)",
                kind="limit",
            )
        self.block.append(node)
        stack.append(_Frame(node, self.block))
        self.block = body

    def run(self) -> n.Template:
        while True:
            self.next()
            kind = self.tok.kind
            if kind == lx.EOF:
                self._finish()
                return n.Template(self.root, self.macros, self.named_blocks, self.src)
            if kind == lx.TEXT:
                self.block.append(n.Text(self.tok.start, self.tok.text))
            elif kind == lx.STMT_OPEN:
                self.next()
                if not self._statement():
                    raise self.error(f"expected statement, got '{self.tok.describe()}'")
                if self.tok.kind != lx.STMT_CLOSE:
                    raise self.error(f"expected statement close, got '{self.tok.describe()}'")
            elif kind == lx.EXPR_OPEN:
                self.next()
                node = n.Output(self.tok.start, None)
                self.block.append(node)
                node.expr = self.expression()
                if self.tok.kind != lx.EXPR_CLOSE:
                    raise self.error(f"expected expression close, got '{self.tok.describe()}'")
            elif kind == lx.COMMENT_OPEN:
                self.next()
                if self.tok.kind != lx.COMMENT_CLOSE:
                    raise self.error(f"expected comment close, got '{self.tok.describe()}'")
            else:
                raise self.error(f"unexpected token '{self.tok.describe()}'")

    def _finish(self) -> None:
        for stack, what in (
            (self.ifs, "if"),
            (self.fors, "for"),
            (self.macro_stack, "macro"),
            (self.set_blocks, "set block"),
        ):
            if stack:
                raise self.error(f"unmatched {what}")
        if self.generation_depth:
            raise self.error("unmatched generation block")
        for name, _pos in self.unresolved:
            if name not in self.macros:
                # Inja reports this at the end of the template, not at the call.
                raise self.error(f"unknown function {name}")

    def _closing_expression(self) -> tuple[n.Expr | None, bool]:
        expr = self.expression()
        return expr, self.tok.kind == lx.STMT_CLOSE

    def _statement(self) -> bool:
        """One statement after `{%`; False means Inja's "expected statement" error."""
        if self.tok.kind != lx.ID:
            return False
        word = self.tok.text
        handler = _HANDLERS.get(word)
        if handler is None:
            return False
        return handler(self)

    # ---- statements (each starts with the keyword as the current token)

    def _if(self) -> bool:
        self.next()
        node = n.If(self.tok.start, None)
        self._open(self.ifs, node, node.body)
        node.cond, closed = self._closing_expression()
        return closed

    def _else(self) -> bool:
        if not self.ifs:
            raise self.error("else/elif without matching if")
        is_elif = self.tok.text == "elif"
        top = self.ifs[-1].node
        self.next()
        top.has_else = True
        self.block = top.orelse
        if is_elif or self.is_word("if"):
            if not is_elif:
                self.next()
            node = n.If(self.tok.start, None, nested=True)
            self._open(self.ifs, node, node.body)
            node.cond, closed = self._closing_expression()
            return closed
        return True

    def _endif(self) -> bool:
        if not self.ifs:
            raise self.error("endif without matching if")
        while self.ifs[-1].node.nested:
            self.ifs.pop()
        self.next()
        self.block = self.ifs.pop().parent
        return True

    def _for(self) -> bool:
        self.next()
        if self.tok.kind != lx.ID:
            raise self.error(f"expected id, got '{self.tok.describe()}'")
        first = self.tok.text
        self.next()
        key = None
        value = first
        if self.tok.kind == ",":
            self.next()
            if self.tok.kind != lx.ID:
                raise self.error(f"expected id, got '{self.tok.describe()}'")
            key, value = first, self.tok.text
            self.next()
        node = n.For(self.tok.start, key, value)
        self._open(self.fors, node, node.body)
        if not self.is_word("in"):
            raise self.error(f"expected 'in', got '{self.tok.describe()}'")
        self.next()
        node.iterable = self.expression("if")
        if node.iterable is None:
            raise self.error("for loop requires an iterable expression")
        if self.is_word("if"):
            self.next()
            node.filter = self.expression()
            if node.filter is None:
                raise self.error("for-loop filter requires an expression")
        return self.tok.kind == lx.STMT_CLOSE

    def _set(self) -> bool:
        self.next()
        if self.tok.kind != lx.ID:
            raise self.error(f"expected variable name, got '{self.tok.describe()}'")
        key = self.tok.text
        self.next()
        if self.tok.kind == lx.STMT_CLOSE:
            node = n.SetBlock(self.tok.start, key)
            self._open(self.set_blocks, node, node.body)
            return True
        stmt = n.Set(self.tok.start, key)
        self.block.append(stmt)
        if self.tok.text != "=":
            raise self.error(f"expected '=' or statement close, got '{self.tok.describe()}'")
        self.next()
        stmt.expr, closed = self._closing_expression()
        return closed

    def _macro(self) -> bool:
        self.next()
        if self.tok.kind != lx.ID:
            raise self.error(f"expected macro name, got '{self.tok.describe()}'")
        name = self.tok.text
        node = n.Macro(self.tok.start, name)
        if name in self.macros:
            raise self.error(f"macro with the name '{name}' already exists")
        self.macros[name] = node
        self.next()
        if self.tok.kind != "(":
            raise self.error("expected '(' after macro name")
        self.next()
        saw_default = False
        while self.tok.kind != ")":
            if self.tok.kind != lx.ID:
                raise self.error(f"expected macro parameter, got '{self.tok.describe()}'")
            param = n.Param(self.tok.text)
            self.next()
            if self.tok.text == "=":
                saw_default = True
                self.next()
                param.default = self.expression()
                if param.default is None:
                    raise self.error(f"expected default value for macro parameter '{param.name}'")
            elif saw_default:
                raise self.error("non-default macro parameter follows default parameter")
            node.params.append(param)
            if self.tok.kind == ",":
                self.next()
            elif self.tok.kind != ")":
                raise self.error("expected ',' or ')' in macro declaration")
        self.next()
        self._open(self.macro_stack, node, node.body)
        return True

    def _block(self) -> bool:
        self.next()
        if self.tok.kind != lx.ID:
            raise self.error(f"expected block name, got '{self.tok.describe()}'")
        name = self.tok.text
        node = n.Block(self.tok.start, name)
        self._open(self.blocks, node, node.body)
        if name in self.named_blocks:
            raise self.error(f"block with the name '{name}' does already exist")
        self.named_blocks[name] = node
        self.next()
        return True

    def _end(self, stack: list[_Frame], what: str) -> bool:
        if not stack:
            raise self.error(f"end{what} without matching {what}")
        self.next()
        self.block = stack.pop().parent
        return True

    def _file(self, cls: type) -> bool:
        self.next()
        if self.tok.kind != lx.STRING:
            raise self.error(f"expected string, got '{self.tok.describe()}'")
        if len(self.tok.text) < 2:
            raise self.error(f"expected filename, got '{self.tok.text}'")
        name = self.tok.text[1:-1]
        self.block.append(cls(self.tok.start, name))
        self.next()
        return True

    def _loop_control(self) -> bool:
        if not self.fors:
            raise self.error("loop control outside a for loop")
        self.block.append(n.LoopControl(self.tok.start, self.tok.text))
        self.next()
        return True

    def _generation(self) -> bool:
        if self.tok.text == "endgeneration":
            if not self.generation_depth:
                raise self.error("endgeneration without matching generation")
            self.generation_depth -= 1
        else:
            self.generation_depth += 1
        self.next()
        return True


_HANDLERS = {
    "macro": _Parser._macro,
    "endmacro": lambda p: p._end(p.macro_stack, "macro"),
    "if": _Parser._if,
    "else": _Parser._else,
    "elif": _Parser._else,
    "endif": _Parser._endif,
    "block": _Parser._block,
    "endblock": lambda p: p._end(p.blocks, "block"),
    "for": _Parser._for,
    "endfor": lambda p: p._end(p.fors, "for"),
    "include": lambda p: p._file(n.Include),
    "extends": lambda p: p._file(n.Extends),
    "set": _Parser._set,
    "endset": lambda p: p._end(p.set_blocks, "set"),
    "break": _Parser._loop_control,
    "continue": _Parser._loop_control,
    "generation": _Parser._generation,
    "endgeneration": _Parser._generation,
}


def parse(source: str) -> n.Template:
    """Parse `source` as Edge-LLM loads a chat template; raise LoadError where it fails."""
    if source.startswith(_BOM):
        source = source[1:]
    return _Parser(source).run()
