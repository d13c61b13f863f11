"""The parser kinds of llama.cpp's PEG arena (common/peg-parser.cpp, `parser_executor`):
the combinators here, the text scanners in `peg_scanners`.

Each kind keeps llama.cpp's results exactly, failures and "need more input" included:
in LENIENT mode (how `common_chat_peg_parse` always parses) a text that ends inside a
literal, a string, a character class or an `until` is NEED_MORE_INPUT, and sequences,
choices and repetitions pass that up with the nodes made so far.
"""

from __future__ import annotations

from app.render.engines.llamacpp.peg.peg import (
    FAIL,
    MAX_DEPTH,
    NEED_MORE_INPUT,
    SUCCESS,
    Arena,
    Context,
    DepthError,
    Parser,
    QuickFail,
    Result,
    deeper,
    dump_child,
)

#: What C's isspace() accepts in the "C" locale (llama.cpp's `space` and trims use it).
SPACE = " \t\n\v\f\r"


class Epsilon(Parser):
    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        return Result(SUCCESS, pos, pos)


class Start(Parser):
    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        return Result(SUCCESS if pos == 0 else FAIL, pos, pos)


class End(Parser):
    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        return Result(SUCCESS if pos >= len(ctx.input) else FAIL, pos, pos)


class Sequence(Parser):
    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        start, nodes, parsers = pos, [], arena.parsers
        for child in self.children:
            depth = deeper(ctx)  # arena.parse_at(child, ctx, pos), inlined (`deeper`)
            result = parsers[child].parse(arena, ctx, pos)
            ctx.depth = depth - 1
            if result.type != FAIL and result.end > ctx.furthest:
                ctx.furthest = result.end
            if result.type == FAIL:
                return Result(FAIL, start, result.end)
            nodes.extend(result.nodes)
            if result.type == NEED_MORE_INPUT:
                return Result(NEED_MORE_INPUT, start, result.end, nodes)
            pos = result.end
        return Result(SUCCESS, start, pos, nodes)

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        """A sequence fails at once where its first parser does."""
        first = arena.quick_fail(self.children[0], open_ids) if self.children else None
        return None if first is None else (first[0], first[1] + 1)


class Choice(Parser):
    """The first alternative that does not fail. One that would fail on the next
    character at once is not run (JSON values try an object, an array, a string ... in
    turn): that changes nothing, but the depth it would have reached is still checked."""

    #: Each alternative's `quick_fail`, worked out at the first parse.
    _quick: list[QuickFail | None] | None = None

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        if self._quick is None:
            self._quick = [arena.quick_fail(child, set()) for child in self.children]
        text = ctx.input
        char = text[pos] if pos < len(text) else None
        for child, quick in zip(self.children, self._quick, strict=True):
            if quick is not None and char is not None and char not in quick[0]:
                if ctx.depth + quick[1] > MAX_DEPTH:
                    raise DepthError
                continue
            depth = deeper(ctx)  # arena.parse_at(child, ctx, pos), inlined
            result = arena.parsers[child].parse(arena, ctx, pos)
            ctx.depth = depth - 1
            if result.type != FAIL:
                if result.end > ctx.furthest:
                    ctx.furthest = result.end
                return result
        return Result(FAIL, pos, pos)

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        """A choice fails at once where all its alternatives do, one after the other."""
        found = [arena.quick_fail(child, open_ids) for child in self.children]
        if not found or any(quick is None for quick in found):
            return None
        known = [quick for quick in found if quick is not None]
        return frozenset().union(*(q[0] for q in known)), 1 + max(q[1] for q in known)


class Repetition(Parser):
    def __init__(self, child: int, min_count: int, max_count: int) -> None:
        super().__init__(child)
        self.min_count, self.max_count = min_count, max_count

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        start, count, nodes = pos, 0, []
        while self.max_count == -1 or count < self.max_count:
            if pos >= len(ctx.input):
                break
            result = arena.parse_at(self.children[0], ctx, pos)
            if result.type == SUCCESS:
                if result.end == pos:  # an empty match would loop for ever
                    break
                nodes.extend(result.nodes)
                pos, count = result.end, count + 1
                continue
            if result.type == NEED_MORE_INPUT:
                nodes.extend(result.nodes)
                return Result(NEED_MORE_INPUT, start, result.end, nodes)
            break
        if self.min_count > 0 and count < self.min_count:
            if pos >= len(ctx.input) and ctx.is_lenient():
                return Result(NEED_MORE_INPUT, start, pos, nodes)
            return Result(FAIL, start, pos)
        return Result(SUCCESS, start, pos, nodes)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        top = "unbounded" if self.max_count == -1 else str(self.max_count)
        return f"Repetition({dump_child(arena, self.children[0], seen)}, {self.min_count}, {top})"


class And(Parser):
    """Positive lookahead: the child's verdict, no input consumed, no nodes."""

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        furthest = ctx.furthest  # a look ahead is not a read
        kind = arena.parse_at(self.children[0], ctx, pos).type
        ctx.furthest = furthest
        return Result(kind, pos, pos)


class Not(Parser):
    """Negative lookahead; a child that needs more input leaves it undecided."""

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        furthest = ctx.furthest  # a look ahead is not a read
        kind = arena.parse_at(self.children[0], ctx, pos).type
        ctx.furthest = furthest
        verdict = {SUCCESS: FAIL, NEED_MORE_INPUT: NEED_MORE_INPUT}.get(kind, SUCCESS)
        return Result(verdict, pos, pos)


class Delegate(Parser):
    """A wrapper that parses as its child: schema, gbnf, ac (they matter for grammars)."""

    def __init__(self, child: int, kind: str, info: object = None) -> None:
        super().__init__(child)
        self.kind, self.info = kind, info

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        return arena.parse_at(self.children[0], ctx, pos)

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        return wrapped_quick_fail(self, arena, open_ids)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        return f"{self.kind}({dump_child(arena, self.children[0], seen)})"


class Atomic(Parser):
    """Its child, but no nodes when the child needs more input."""

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        result = arena.parse_at(self.children[0], ctx, pos)
        if result.type == NEED_MORE_INPUT:
            result.nodes = []
        return result

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        return wrapped_quick_fail(self, arena, open_ids)


class Node(Parser):
    """A rule (`name`) or a tag (`tag`): its child, recorded as an AST node unless it fails."""

    def __init__(self, child: int, name: str = "", tag: str = "", trigger: bool = False) -> None:
        super().__init__(child)
        self.name, self.tag, self.trigger = name, tag, trigger

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        depth = deeper(ctx)  # arena.parse_at(self.children[0], ctx, pos), inlined
        result = arena.parsers[self.children[0]].parse(arena, ctx, pos)
        ctx.depth = depth - 1
        if result.type == FAIL:
            return result
        if result.end > ctx.furthest:
            ctx.furthest = result.end
        text = ctx.input[result.start : result.end]
        partial = result.type == NEED_MORE_INPUT
        node = ctx.ast.add_node(
            self.name, self.tag, result.start, result.end, text, result.nodes, partial
        )
        return Result(result.type, result.start, result.end, [node])

    def quick_fail(self, arena: Arena, open_ids: set[int]) -> QuickFail | None:
        return wrapped_quick_fail(self, arena, open_ids)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        inner = dump_child(arena, self.children[0], seen)
        return f"Tag({self.tag}, {inner})" if self.tag else f"Rule({self.name}, {inner})"


class Ref(Parser):
    """A reference to a named rule, looked up when parsed (or resolved at build)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.ref_name = name

    def parse(self, arena: Arena, ctx: Context, pos: int) -> Result:
        return arena.parse_at(arena.get_rule(self.ref_name or ""), ctx, pos)

    def dump(self, arena: Arena, seen: set[int]) -> str:
        return f"Ref({self.ref_name})"


def wrapped_quick_fail(parser: Parser, arena: Arena, open_ids: set[int]) -> QuickFail | None:
    """`quick_fail` of a parser that fails where its one child does (a node only records
    a child that did not fail)."""
    inner = arena.quick_fail(parser.children[0], open_ids)
    return None if inner is None else (inner[0], inner[1] + 1)
