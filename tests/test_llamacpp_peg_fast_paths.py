"""llama.cpp's PEG parse, made faster (issue 41: an unclosed 100 kB object took 46 ms),
reads as before.

A choice does not run an alternative that would fail at once on the next character
(`Parser.quick_fail`); it must give the same results, nodes, furthest read and depth
error as running them all, which the arena does once the choices' first sets are wiped.
The arguments' closing braces are counted with one regular expression (`brace_depth`),
which must count as the character loop it replaced.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.render.engines.llamacpp.chat_peg.chat_peg_mapper import brace_depth
from app.render.engines.llamacpp.peg import peg
from app.render.engines.llamacpp.peg.peg_builder import Builder
from app.render.engines.llamacpp.peg.peg_parsers import Choice


def loop_brace_depth(text: str) -> int:
    """Unclosed '{' counted a character at a time, strings skipped (the loop it was)."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\" and in_string:
            escaped = True
        elif char == '"':
            in_string = not in_string
        elif not in_string and char == "{":
            depth += 1
        elif not in_string and char == "}":
            depth -= 1
    return depth


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet='{}"\\ a\n', max_size=40))
@example('{"a\\')  # a string that ends in a lone backslash
@example('\\"{"}')  # a backslash outside a string is plain
def test_brace_depth_counts_as_the_character_loop(text: str) -> None:
    assert brace_depth(text) == loop_brace_depth(text)


def arena(grammar: Callable[[Builder], object]) -> peg.Arena:
    p = Builder()
    p.set_root(grammar(p))
    return p.build()


GRAMMARS = {
    "json": lambda p: p.json() + p.end(),
    "json in a call": lambda p: p.literal("<call>") + p.space() + p.json() + p.literal("</call>"),
    "python value": lambda p: p.python_value(),
}


def reading(grammar: str, text: str, quick: bool) -> tuple:
    """What a lenient parse of `text` gives: result, nodes and furthest, or the error."""
    built = arena(GRAMMARS[grammar])
    if not quick:
        for parser in built.parsers:
            if isinstance(parser, Choice):
                parser._quick = [None] * len(parser.children)  # run every alternative
    ctx = peg.Context(text, peg.FLAG_LENIENT)
    try:
        result = built.parse(ctx)
    except peg.DepthError as error:
        return ("depth", str(error))
    nodes = [(n.rule, n.tag, n.start, n.end, n.children, n.is_partial) for n in ctx.ast.nodes]
    return result.type, result.start, result.end, result.nodes, nodes, ctx.furthest


def test_the_choices_know_first_characters() -> None:
    # Otherwise the comparisons below compare the same path twice.
    built = arena(GRAMMARS["json"])
    built.parse(peg.Context("[1]", peg.FLAG_LENIENT))
    known = [
        quick
        for parser in built.parsers
        if isinstance(parser, Choice) and parser._quick
        for quick in parser._quick
    ]
    assert any(quick is not None and "{" in quick[0] for quick in known)


json_bits = st.sampled_from(
    ['{"a": ', "[", "]", "}", ", ", '"x"', "1", "-2.5e3", "true", "nul", " "]
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(GRAMMARS)), st.lists(json_bits, max_size=30).map("".join))
def test_skipping_alternatives_reads_as_running_them(grammar: str, text: str) -> None:
    if grammar == "json in a call":
        text = "<call>" + text
    assert reading(grammar, text, quick=True) == reading(grammar, text, quick=False)


@pytest.mark.parametrize("grammar", sorted(GRAMMARS))
@pytest.mark.parametrize("opener", ["[", '{"a": '])
def test_the_depth_error_comes_where_it_came(grammar: str, opener: str) -> None:
    # At the depth limit (2 000 levels of JSON), a skipped alternative may go deeper
    # than the one taken (a Python value's "-" tries deeper ones first): the error must
    # come all the same, and only then.
    prefix = "<call>" if grammar == "json in a call" else ""
    levels = peg.MAX_DEPTH // 6
    for depth in (levels - 1, levels):
        for tail in ["", "-", "]"]:
            text = prefix + opener * depth + tail
            assert reading(grammar, text, quick=True) == reading(grammar, text, quick=False)
