"""llama.cpp's PEG parser (common/peg-parser.cpp, build b11434): the arena and its parse loop.

A grammar is an arena of parsers addressed by integer ids (`Arena`), built with
`peg_builder.Builder`. Parsing a text gives a `Result` (fail, success or need-more-input,
the span, and the ids of the AST nodes it made); tags and rules leave `AstNode`s in the
context's `AstArena`, which the chat mapper (`chat_peg`) turns into a message.

llama.cpp works on UTF-8 bytes; this works on a Python `str`, whose code points are what
llama.cpp decodes (`any`, `chars` and `until` step a code point at a time there too), so
spans count code points here. Like llama.cpp it never memoises: a PEG's repetition never
backtracks into itself, so the grammars llama.cpp builds run in time linear in the text,
and `until` finds its delimiters with `str.find`. Nesting is capped (`MAX_DEPTH`) where
llama.cpp would recurse until its stack ran out: `DepthError` says so.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Result types, as `common_peg_parse_result_type` numbers them.
FAIL, SUCCESS, NEED_MORE_INPUT = 0, 1, 2

#: Parse flags (`common_peg_parse_flags`); `common_chat_peg_parse` always parses LENIENT:
#: input that ends inside a parser is "need more input", not a failure.
FLAG_NONE, FLAG_LENIENT = 0, 1

#: How many parsers may be active at once (six per level of JSON nesting: 2,000 levels).
MAX_DEPTH = 12000

#: The ids llama.cpp uses for "none".
INVALID_ID = -1


class DepthError(Exception):
    """The text nests deeper than `MAX_DEPTH` parsers (llama.cpp would overflow its stack)."""

    def __init__(self) -> None:
        super().__init__(f"the text nests deeper than {MAX_DEPTH} parsers")


#: What `Parser.quick_fail` knows of a parser: the characters a match can start with, and
#: how deep it runs parsers (itself included) before it fails on any other.
QuickFail = tuple[frozenset[str], int]


@dataclass
class AstNode:
    """One node of the parse tree: a rule's or a tag's match (`common_peg_ast_node`)."""

    id: int
    rule: str
    tag: str
    start: int
    end: int
    text: str
    children: list[int]
    is_partial: bool = False


class AstArena:
    """The nodes a parse made, by id (`common_peg_ast_arena`)."""

    def __init__(self) -> None:
        self.nodes: list[AstNode] = []

    def add_node(self, rule: str, tag: str, start: int, end: int, text: str,
                 children: list[int], is_partial: bool = False) -> int:  # fmt: skip
        """Add a node and return its id."""
        node_id = len(self.nodes)
        self.nodes.append(AstNode(node_id, rule, tag, start, end, text, children, is_partial))
        return node_id

    def get(self, node_id: int) -> AstNode:
        """The node with id `node_id`."""
        return self.nodes[node_id]

    def find_by_tag(self, parent: AstNode, tag: str, max_depth: int = 3) -> int:
        """The first descendant of `parent` (depth first, `max_depth` levels) tagged `tag`."""
        return self._find(parent, lambda n: n.tag == tag, max_depth)

    def _find(self, parent: AstNode, hit: Callable[[AstNode], bool], max_depth: int) -> int:
        for child_id in parent.children:
            child = self.nodes[child_id]
            if hit(child):
                return child_id
            if max_depth > 1:
                found = self._find(child, hit, max_depth - 1)
                if found != INVALID_ID:
                    return found
        return INVALID_ID

    def walk(self, roots: list[int]) -> Iterator[AstNode]:
        """Nodes under `roots` in pre-order, as `visit` calls its visitor (without recursion,
        since JSON values nest their rule nodes as deep as the text nests)."""
        stack = list(reversed(roots))
        while stack:
            node = self.nodes[stack.pop()]
            yield node
            stack.extend(reversed(node.children))


class Result:
    """What a parser made of the text from `start` (`common_peg_parse_result`).

    A plain class with slots, not a dataclass: a parse makes one per parser it runs, and
    this one is made in half the time."""

    __slots__ = ("end", "nodes", "start", "type")

    def __init__(self, type: int, start: int, end: int, nodes: list[int] | None = None) -> None:
        self.type, self.start, self.end = type, start, end
        self.nodes: list[int] = [] if nodes is None else nodes

    def __repr__(self) -> str:
        return f"Result(type={self.type}, start={self.start}, end={self.end}, nodes={self.nodes})"

    def fail(self) -> bool:
        return self.type == FAIL

    def success(self) -> bool:
        return self.type == SUCCESS


class Context:
    """One parse: the text, the flags and the AST it grows (`common_peg_parse_context`)."""

    def __init__(self, text: str, flags: int = FLAG_NONE) -> None:
        self.input = text
        self.flags = flags
        self.ast = AstArena()
        self.depth = 0
        #: The furthest any parser read to (lookaheads aside): where a failed parse got
        #: stuck, for the notes. llama.cpp keeps no such thing; it changes no result.
        self.furthest = 0

    def is_lenient(self) -> bool:
        return bool(self.flags & FLAG_LENIENT)


class Arena:
    """A built grammar: its parsers by id, its named rules and its root."""

    def __init__(self) -> None:
        self.parsers: list[Parser] = []
        self.rules: dict[str, int] = {}
        self.root: int = INVALID_ID

    def empty(self) -> bool:
        """Whether it has no parsers (llama.cpp then parses everything as content)."""
        return not self.parsers

    def get_rule(self, name: str) -> int:
        """The id of rule `name`; llama.cpp throws "Rule not found" for a missing one."""
        if name not in self.rules:
            raise KeyError(f"Rule not found: {name}")
        return self.rules[name]

    def parse(self, ctx: Context, start: int = 0) -> Result:
        """Run the root parser on `ctx.input` from `start`."""
        if self.root == INVALID_ID:
            raise ValueError("No root parser set")
        # Python counts frames where llama.cpp uses its stack: make room for MAX_DEPTH
        # parsers (two frames each) and give the old limit back afterwards.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 2 * MAX_DEPTH + 500))
        try:
            return self.parse_at(self.root, ctx, start)
        finally:
            sys.setrecursionlimit(limit)

    def parse_at(self, parser_id: int, ctx: Context, start: int) -> Result:
        """Run parser `parser_id` on `ctx.input` from `start`."""
        # No try/finally around the depth: nothing catches an exception inside a parse,
        # so a context that raised is never read again.
        depth = deeper(ctx)
        result = self.parsers[parser_id].parse(self, ctx, start)
        ctx.depth = depth - 1
        if result.type != FAIL and result.end > ctx.furthest:
            ctx.furthest = result.end
        return result

    def quick_fail(self, parser_id: int, open_ids: set[int]) -> QuickFail | None:
        """`Parser.quick_fail` of parser `parser_id`; None for one already being worked
        out further up (a rule that recurses)."""
        if parser_id in open_ids:
            return None
        open_ids.add(parser_id)
        try:
            return self.parsers[parser_id].quick_fail(self, open_ids)
        finally:
            open_ids.discard(parser_id)

    def resolve_refs(self) -> None:
        """Point every child that is a rule reference at the rule itself (`resolve_refs`)."""
        for parser in self.parsers:
            parser.resolve(self._resolve)
        if self.root != INVALID_ID:
            self.root = self._resolve(self.root)

    def _resolve(self, parser_id: int) -> int:
        name = self.parsers[parser_id].ref_name
        return parser_id if name is None else self.get_rule(name)

    def dump(self, parser_id: int) -> str:
        """The parser as llama.cpp's `dump` writes it, e.g. "Sequence(Literal(a), Space)"."""
        return self.parsers[parser_id].dump(self, set())


def deeper(ctx: Context) -> int:
    """One parser more running: the new depth, set in `ctx` (DepthError past MAX_DEPTH).
    The parsers that run most (sequences, choices, nodes) call their children's `parse`
    themselves with this and `parse_at`'s other lines, one Python frame less a parser."""
    depth = ctx.depth + 1
    if depth > MAX_DEPTH:
        raise DepthError
    ctx.depth = depth
    return depth


#: Maps a child id to the id it stands for (`Arena.resolve_refs`).
Resolve = Callable[[int], int]


class Parser:
    """A parser kind; `ref_name` is set only on references to named rules."""

    ref_name: str | None = None
    #: The ids of the parsers it runs (resolved from references by `Arena.resolve_refs`).
    children: list[int]

    def __init__(self, *children: int) -> None:
        self.children = list(children)

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        raise NotImplementedError

    def resolve(self, resolve: Resolve) -> None:
        self.children = [resolve(child) for child in self.children]

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        """What is sure of this parser when the text goes on with a character outside
        the first set: it fails at once, having made no node and read nothing, and runs
        no deeper than the depth given. None when nothing is sure (the default)."""
        return None

    def dump(self, arena: Arena, seen: set[int]) -> str:
        if not self.children:
            return type(self).__name__
        inner = ", ".join(dump_child(arena, child, seen) for child in self.children)
        return f"{type(self).__name__}({inner})"


def dump_child(arena: Arena, parser_id: int, seen: set[int]) -> str:
    """How `dump` writes child `parser_id`: "[cycle]" the second time it meets one."""
    if parser_id in seen:
        return "[cycle]"
    seen.add(parser_id)
    return arena.parsers[parser_id].dump(arena, seen)
