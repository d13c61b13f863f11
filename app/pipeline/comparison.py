"""Two renderings compared: the Diff view's character diff, its line views cut to the
page's limits, and the token diff when a vocabulary is loaded.

`compare_sides` is the one way two prompts are compared: the page's Diff view (against the
other engine or the compare template, `app.pipeline.outputs.compare`) and `/api/diff` (any
two renders) both answer from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.analysis.diff import (
    Opcode,
    char_opcodes,
    diff_stats,
    side_by_side_flagged,
    token_opcodes,
    unified,
)
from app.pipeline.token_data import columns
from app.pipeline.tokens_view import TokensOf
from app.pipeline.views import Comparison, PageLimits, Rendering
from app.sources.store import TokenizerUnavailable
from app.tokens.vocab import Token


def _cut_lines(lines: list[Any], max_chars: int, chars_of: Callable[[Any], int]) -> list[Any]:
    """The first lines of a diff view, up to about `max_chars` characters of text."""
    total = 0
    for index, line in enumerate(lines):
        total += chars_of(line)
        if total > max_chars:
            return lines[: index + 1]
    return lines


def _parts_chars(parts: list[tuple[str, str]] | None) -> int:
    return sum(len(text) for _, text in parts or [])


def _token_rows(
    left: Sequence[Token], right: Sequence[Token], opcodes: list[Opcode]
) -> list[tuple[str, Sequence[Token]]]:
    rows: list[tuple[str, Sequence[Token]]] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            rows.append(("equal", left[i1:i2]))
            continue
        if i2 > i1:
            rows.append(("delete", left[i1:i2]))
        if j2 > j1:
            rows.append(("insert", right[j1:j2]))
    return rows


def diff_sides(main: Rendering, right: Rendering, limits: PageLimits, **labels: str) -> Comparison:
    """The diff of two renderings, its line views cut to `limits`."""
    if main.prompt is None or right.prompt is None:
        return Comparison(right=right, **labels)
    opcodes = char_opcodes(main.prompt, right.prompt)
    lines = unified(main.prompt, right.prompt, opcodes)
    rows, changed = side_by_side_flagged(main.prompt, right.prompt, opcodes)
    rows = [(a, b, flag) for (a, b), flag in zip(rows, changed, strict=True)]
    shown_lines = _cut_lines(lines, limits.chars, lambda line: _parts_chars(line.parts))
    shown_rows = _cut_lines(rows, limits.chars, lambda r: _parts_chars(r[0]) + _parts_chars(r[1]))
    # Line counts from the unified lines, so the numbers are the "-" and "+" lines shown.
    signs = [line.sign for line in lines]
    return Comparison(
        right=right,
        opcodes=opcodes,
        unified=shown_lines,
        side_by_side=shown_rows,
        stats={**diff_stats(opcodes), "removed": signs.count("-"), "added": signs.count("+")},
        lines_cut=len(shown_lines) < len(lines) or len(shown_rows) < len(rows),
        **labels,
    )


def _tokenized(rendering: Rendering, tokens_of: TokensOf) -> TokenizerUnavailable | None:
    """Give `rendering` its prompt's tokens unless it has them; why not, if it cannot."""
    if rendering.tokens is not None or rendering.prompt is None:
        return None
    run, error = tokens_of(rendering.prompt)
    if run is not None:
        rendering.tokens, rendering.token_total = run.tokens, run.total
    return error


def compare_sides(
    main: Rendering,
    right: Rendering,
    limits: PageLimits,
    tokens_of: TokensOf | None = None,
    **labels: str,
) -> Comparison:
    """The comparison of two renderings: their diff (`diff_sides`) and, with `tokens_of`,
    the diff of their tokens (each side tokenized unless it has its tokens already)."""
    comparison = diff_sides(main, right, limits, **labels)
    if tokens_of is None or main.prompt is None or right.prompt is None:
        return comparison
    comparison.tokens_error = _tokenized(main, tokens_of) or _tokenized(right, tokens_of)
    if main.tokens is None or right.tokens is None:
        return comparison
    comparison.token_opcodes = token_opcodes(columns(main.tokens)[0], columns(right.tokens)[0])
    comparison.token_rows = _token_rows(main.tokens, right.tokens, comparison.token_opcodes)
    return comparison
