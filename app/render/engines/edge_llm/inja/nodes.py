"""The syntax tree of a template in Edge-LLM's patched Inja 3.5.0 dialect.

Inja itself builds one generic "function node" for every operator, filter, test and call;
here each kind of construct has its own small class, so the evaluator can dispatch on the
class and read named fields. Positions (`pos`) are character offsets into
`Template.source` (the text after a leading byte order mark, which Inja skips); use
`Template.location(pos)` for Inja's (line, column), whose column counts UTF-8 bytes.

The parser (`parser.py`) resolves every call while parsing, as Inja does, so a `Call`
already says whether it is one of Inja's builtins, one of Edge-LLM's callbacks, or a macro.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Node:
    """Base of every node: `pos` is the offset of the construct in the template source."""

    pos: int


# ---------------------------------------------------------------- expressions


@dataclass(slots=True)
class Expr(Node):
    """Base of every expression node."""


@dataclass(slots=True)
class Literal(Expr):
    """A JSON value written in the template: number, string, true/false/none, or a null
    that Inja puts in for an omitted slice bound or a missing `else` branch."""

    value: Any


@dataclass(slots=True)
class Var(Expr):
    """A variable reference. `name` may be dotted (`message.content`, `loop.index`): Inja
    lexes a dotted name as one token and looks it up as a JSON pointer path."""

    name: str


@dataclass(slots=True)
class Op(Expr):
    """An operator. `op` is one of: "not" (1 arg), "and", "or", "in", "not in", "==",
    "!=", ">", ">=", "<", "<=", "+", "~" (concatenation, also adjacent string literals),
    "-", "*", "/", "^" (power), "%", and "at_id" (a `.` with nothing before it)."""

    op: str
    args: list[Expr]


@dataclass(slots=True)
class Item(Expr):
    """Subscript `target[key]` or member access `target.name` (key is then a string
    Literal holding the member name, which may itself contain dots)."""

    target: Expr
    key: Expr


@dataclass(slots=True)
class Slice(Expr):
    """`target[start:stop:step]`; an omitted bound is `Literal(None)`."""

    target: Expr
    start: Expr
    stop: Expr
    step: Expr


@dataclass(slots=True)
class Cond(Expr):
    """Inline `then if cond else otherwise`; a missing else is `Literal(None)`."""

    cond: Expr
    then: Expr
    otherwise: Expr


@dataclass(slots=True)
class ListLit(Expr):
    """A list literal `[a, b]` or a parenthesised tuple `(a, b)` (Inja makes both arrays)."""

    items: list[Expr]


@dataclass(slots=True)
class DictLit(Expr):
    """A dict literal `{k: v, ...}`: keys are expressions, evaluated at render time."""

    pairs: list[tuple[Expr, Expr]]


@dataclass(slots=True)
class Test(Expr):
    """`arg is name`; `is not name` is `Op("not", [Test(...)])`. `name` is one of
    defined, undefined, none, iterable, mapping, sequence, string, boolean, number,
    integer, true, false."""

    name: str
    arg: Expr


@dataclass(slots=True)
class Call(Expr):
    """A call `name(args)`, a filter `x|name(args)` or a method `x.name(args)` (the piped
    value or receiver is `args[0]`). `kind` is "builtin" (Inja's own operation for that
    name and count), "callback" (Edge-LLM's registered callback) or "macro" (resolved by
    name to `Template.macros` at render time). `arg_names[i]` is the keyword name given for
    `args[i]`, or "". For `namespace(a=1)` Inja turns each keyword into two positional
    arguments, a string Literal with the name and the value, with empty names."""

    name: str
    args: list[Expr]
    arg_names: list[str]
    kind: str


# ---------------------------------------------------------------- statements

Body = list[Node]


@dataclass(slots=True)
class Text(Node):
    """Literal template text, already trimmed as Inja's lexer does (trim_blocks and
    lstrip_blocks on, `-` markers)."""

    text: str


@dataclass(slots=True)
class Output(Node):
    """`{{ expr }}`. `expr` is None for an empty `{{ }}` (a render error in Inja)."""

    expr: Expr | None


@dataclass(slots=True)
class If(Node):
    """`{% if %}`: `cond` may be None (empty condition, a render error). `elif` and
    `else if` are a nested If (nested=True) as the only node of the outer `orelse`."""

    cond: Expr | None
    body: Body = field(default_factory=list)
    orelse: Body = field(default_factory=list)
    has_else: bool = False
    nested: bool = False


@dataclass(slots=True)
class For(Node):
    """`{% for value in iterable if filter %}` or `{% for key, value in ... %}` (key is
    None in the one-name form)."""

    key: str | None
    value: str
    iterable: Expr | None = None
    filter: Expr | None = None
    body: Body = field(default_factory=list)


@dataclass(slots=True)
class Set(Node):
    """`{% set key = expr %}`; `key` may be dotted (`ns.found`). `expr` may be None."""

    key: str
    expr: Expr | None = None


@dataclass(slots=True)
class SetBlock(Node):
    """`{% set key %}...{% endset %}`: the rendered body becomes a string."""

    key: str
    body: Body = field(default_factory=list)


@dataclass(slots=True)
class Param:
    """A macro parameter with its optional default expression."""

    name: str
    default: Expr | None = None


@dataclass(slots=True)
class Macro(Node):
    """`{% macro name(params) %}...{% endmacro %}`: renders nothing where it stands."""

    name: str
    params: list[Param] = field(default_factory=list)
    body: Body = field(default_factory=list)


@dataclass(slots=True)
class LoopControl(Node):
    """`{% break %}` or `{% continue %}` (`kind`), only accepted inside a for loop."""

    kind: str


@dataclass(slots=True)
class Include(Node):
    """`{% include "file" %}`: Edge-LLM registers no templates, so rendering it fails."""

    file: str


@dataclass(slots=True)
class Extends(Node):
    """`{% extends "file" %}`: as Include, a render-time error in Edge-LLM."""

    file: str


@dataclass(slots=True)
class Block(Node):
    """`{% block name %}...{% endblock %}`."""

    name: str
    body: Body = field(default_factory=list)


@dataclass(slots=True)
class Template:
    """A parsed template: the top-level body, macros and blocks by name, and the source."""

    body: Body
    macros: dict[str, Macro]
    blocks: dict[str, Block]
    source: str

    def location(self, pos: int) -> tuple[int, int]:
        """Inja's (line, column) of offset `pos`: 1-based, the column in UTF-8 bytes."""
        return source_location(self.source, pos)


def source_location(source: str, pos: int) -> tuple[int, int]:
    """Line and column of `pos` in `source` as Inja's `get_source_location` counts them."""
    pos = max(0, min(pos, len(source)))
    line = source.count("\n", 0, pos) + 1
    start = source.rfind("\n", 0, pos) + 1
    return line, len(source[start:pos].encode("utf-8", "surrogatepass")) + 1
