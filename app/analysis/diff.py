"""Diffs of two prompts: exact character opcodes, unified and side-by-side line views.

`difflib.SequenceMatcher` with autojunk=False gives the most readable character diff, but its
cost grows with the number of equal pairs (a[i] == b[j]), which for prose is about
len(a) * len(b) / 15: two 20k-character prompts take seconds. `char_opcodes` therefore runs
it only within a cost budget, and above it diffs coarser units first (lines, chunks of
words, words) and refines only the blocks that changed. Whatever the path, the opcodes are
exact: applying them to the left text gives the right text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate, zip_longest
from typing import Any
from zlib import crc32

from app.text import common_prefix_length, gc_paused

Opcode = tuple[str, int, int, int, int]
#: A piece of a line: ("equal" | "delete" | "insert", text).
Part = tuple[str, str]
#: Cuts a block into units (lines, chunks, words) to align before the elements themselves.
Level = Callable[[Any], list[Any]]

#: Work allowed for one diff, in equal pairs plus 20 per element (SequenceMatcher's overhead
#: per element): about 0.3 s. Measured: 2k vs 2k characters of prose cost 0.3M and 0.05 s.
COST_BUDGET = 1_500_000
#: Above this cost a block is first aligned by coarser units, even when the budget allows
#: characters: a few cheap unit passes beat one near-quadratic character pass.
BLOCK_COST = 300_000

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
# Words, whitespace runs and punctuation runs ("<|", "|>"), so markers split sensibly.
_WORD = re.compile(r"\w+|\s+|[^\w\s]+")


def _cuts(codes: Sequence[int]) -> Iterator[tuple[int, int]]:
    """Cut a sequence into runs of ~16 elements where a hash of the last four hits 1 in 16.

    Lines fail as units when every line differs (a template that glues its markers to the
    message text), and words or token ids cost too much (frequent ones pair up
    quadratically). Cuts that depend only on nearby content fall in the same places in both
    texts, so equal stretches become equal chunks, which are nearly all distinct: cheap to
    align. `codes`: one well-mixed 32-bit hash per element.
    """
    start = 0
    for k in range(3, len(codes)):
        mixed = codes[k] ^ (codes[k - 1] >> 4) ^ (codes[k - 2] >> 8) ^ (codes[k - 3] >> 12)
        if mixed & 15 == 0 or k - start >= 255:
            yield start, k + 1
            start = k + 1
    if start < len(codes):
        yield start, len(codes)


def _word_chunks(text: str) -> list[str]:
    words = _WORD.findall(text)
    # crc32 rather than hash(): the same cuts in every process, so diffs are reproducible.
    code = {w: crc32(w.encode("utf-8", "surrogatepass")) for w in set(words)}
    return ["".join(words[s:e]) for s, e in _cuts([code[w] for w in words])]


def _id_chunks(ids: Sequence[int]) -> list[tuple[int, ...]]:
    codes = [(i * 2654435761 & 0xFFFFFFFFFFFF) >> 16 for i in ids]  # Knuth's hash, high bits
    return [tuple(ids[s:e]) for s, e in _cuts(codes)]


#: Units tried, coarse to fine, when a block costs too much to diff element by element.
_TEXT_LEVELS: tuple[Level, ...] = (_LINE.findall, _word_chunks, _WORD.findall)
_ID_LEVELS: tuple[Level, ...] = (_id_chunks,)


def _cost(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Roughly what SequenceMatcher(None, a, b, autojunk=False) spends: its equal pairs."""
    count_b = Counter(b)
    pairs = sum(n * count_b.get(x, 0) for x, n in Counter(a).items())
    return pairs + 20 * (len(a) + len(b))


def _opcodes(a: Sequence[Any], b: Sequence[Any]) -> list[Opcode]:
    return SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


class _Differ:
    """Opcodes for `left` -> `right` in `ops`, spending at most `budget` on SequenceMatcher."""

    def __init__(self, left: Sequence[Any], right: Sequence[Any], budget: int, levels: Any) -> None:
        self.left, self.right, self.budget = left, right, budget
        self.ops: list[Opcode] = []
        cost = _cost(left, right) if len(left) + len(right) <= 8000 else budget + 1
        if cost <= min(budget, BLOCK_COST):  # small: exactly what SequenceMatcher says
            self.ops = _opcodes(left, right)
        else:
            self.block(0, len(left), 0, len(right), levels)

    def emit(self, tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 == i2 and j1 == j2:
            return
        if self.ops and self.ops[-1][0] == tag:  # blocks meet: keep one opcode per run
            _, i1, _, j1, _ = self.ops.pop()
        self.ops.append((tag, i1, i2, j1, j2))

    def block(self, i1: int, i2: int, j1: int, j2: int, levels: tuple[Level, ...]) -> None:
        """Diff left[i1:i2] with right[j1:j2]; `levels`: units to try if chars cost too much."""
        a, b = self.left[i1:i2], self.right[j1:j2]
        # Prompts that differ in a few places share long prefixes/suffixes: free to cut off.
        pre = common_prefix_length(a, b)
        suf = common_prefix_length(a[pre:][::-1], b[pre:][::-1])
        self.emit("equal", i1, i1 + pre, j1, j1 + pre)
        i1, i2, j1, j2 = i1 + pre, i2 - suf, j1 + pre, j2 - suf
        if i1 == i2 or j1 == j2:
            self.emit("delete" if j1 == j2 else "insert", i1, i2, j1, j2)
        else:
            self.middle(i1, i2, j1, j2, levels)
        self.emit("equal", i2, i2 + suf, j2, j2 + suf)

    def middle(self, i1: int, i2: int, j1: int, j2: int, levels: tuple[Level, ...]) -> None:
        a, b = self.left[i1:i2], self.right[j1:j2]
        char_cost = _cost(a, b)
        for k, level in enumerate(levels if char_cost > min(self.budget, BLOCK_COST) else ()):
            units_a, units_b = level(a), level(b)
            cost = _cost(units_a, units_b)
            if (len(units_a) < 2 and len(units_b) < 2) or cost > self.budget:
                continue  # one unit each (nothing to align) or too costly: try finer units
            self.budget -= cost
            offs_a = list(accumulate(map(len, units_a), initial=i1))
            offs_b = list(accumulate(map(len, units_b), initial=j1))
            for tag, a1, a2, b1, b2 in _opcodes(units_a, units_b):
                span = (offs_a[a1], offs_a[a2], offs_b[b1], offs_b[b2])
                if tag == "replace":  # refine what changed with the finer levels
                    self.block(*span, levels[k + 1 :])
                else:
                    self.emit(tag, *span)
            return
        if char_cost > self.budget:  # too big to refine: still exact, just coarse
            self.emit("replace", i1, i2, j1, j2)
            return
        self.budget -= char_cost
        for tag, a1, a2, b1, b2 in _opcodes(a, b):
            self.emit(tag, i1 + a1, i1 + a2, j1 + b1, j1 + b2)


def char_opcodes(left: str, right: str, *, budget: int = COST_BUDGET) -> list[Opcode]:
    """SequenceMatcher-style opcodes turning `left` into `right`, character by character.

    Small inputs get exactly `SequenceMatcher(None, left, right, autojunk=False)`'s opcodes.
    Larger ones lose their common prefix/suffix; then lines, chunks of words and words are
    aligned first and only changed blocks refined, within `budget`; a block too big to refine
    becomes one "replace".
    """
    return _Differ(left, right, budget, _TEXT_LEVELS).ops


def token_opcodes(
    left_ids: Sequence[int], right_ids: Sequence[int], *, budget: int = COST_BUDGET
) -> list[Opcode]:
    """Opcodes turning the token ids `left_ids` into `right_ids`: SequenceMatcher(autojunk=False)
    within `budget`, else chunks of ids aligned first, as `char_opcodes` does with text."""
    return _Differ(list(left_ids), list(right_ids), budget, _ID_LEVELS).ops


def diff_stats(opcodes: Sequence[Opcode]) -> dict[str, int]:
    """Characters kept, inserted and deleted (a replace counts as both)."""
    stats = {"equal": 0, "inserted": 0, "deleted": 0}
    for tag, i1, i2, j1, j2 in opcodes:
        stats["equal" if tag == "equal" else "deleted"] += i2 - i1
        stats["inserted"] += 0 if tag == "equal" else j2 - j1
    return stats


@dataclass(frozen=True)
class DiffLine:
    """A line of the unified view: sign " " (context), "-", "+" or "@" (lines left out);
    `parts` spell it exactly, "\\n" included (a last line may lack it); 1-based numbers."""

    sign: str
    parts: list[Part]
    left_line: int | None = None
    right_line: int | None = None


# A line: its start and end offsets, its parts and its 1-based number.
_Line = tuple[int, int, list[Part], int]


def _lines(text: str, opcodes: Sequence[Opcode], side: int) -> list[_Line]:
    """Cut one side into lines, each a list of parts marked by the opcodes (side 0: left)."""
    changed = "delete" if side == 0 else "insert"
    lines: list[_Line] = []
    parts: list[Part] = []
    line_start = 0
    for op in opcodes:
        kind = "equal" if op[0] == "equal" else changed
        a, b = op[1 + 2 * side], op[2 + 2 * side]
        while a < b:
            nl = text.find("\n", a, b)
            stop = b if nl == -1 else nl + 1
            if parts and parts[-1][0] == kind:  # a replace next to a delete: one part
                parts[-1] = (kind, parts[-1][1] + text[a:stop])
            else:
                parts.append((kind, text[a:stop]))
            a = stop
            if nl != -1:
                lines.append((line_start, stop, parts, len(lines) + 1))
                parts, line_start = [], stop
    if parts:
        lines.append((line_start, len(text), parts, len(lines) + 1))
    return lines


def _rows(left: str, right: str, opcodes: Sequence[Opcode]) -> list[tuple[bool, Any, Any]]:
    """Align lines: (False, left line, right line) where a line is carried over unchanged,
    (True, left lines, right lines) for the runs of changed lines between those."""
    left_lines, right_lines = _lines(left, opcodes, 0), _lines(right, opcodes, 1)
    right_at = {line[0]: k for k, line in enumerate(right_lines)}
    equal = [op for op in opcodes if op[0] == "equal"]
    rows: list[tuple[bool, Any, Any]] = []
    done_l = done_r = k = 0  # lines already placed in rows; the equal opcode looked at
    for li, (start, end, _, _) in enumerate(left_lines):
        while k < len(equal) and equal[k][2] < end:
            k += 1
        if k == len(equal):
            break
        i1, j1 = equal[k][1], equal[k][3]
        # Unchanged: inside one equal block and mapped onto a whole line of the right side.
        ri = right_at.get(start - i1 + j1) if i1 <= start else None
        if ri is None or right_lines[ri][1] != end - i1 + j1:
            continue
        if li > done_l or ri > done_r:
            rows.append((True, left_lines[done_l:li], right_lines[done_r:ri]))
        rows.append((False, left_lines[li], right_lines[ri]))
        done_l, done_r = li + 1, ri + 1
    if done_l < len(left_lines) or done_r < len(right_lines):
        rows.append((True, left_lines[done_l:], right_lines[done_r:]))
    return rows


def _trim(entries: list[Any], changed: list[bool], context: int, gap: Any) -> list[Any]:
    """Keep changed entries and `context` entries around them; one `gap` per run left out."""
    out: list[Any] = []
    for k, entry in enumerate(entries):
        if any(changed[max(0, k - context) : k + context + 1]):
            out.append(entry)
        elif not out or out[-1] is not gap:
            out.append(gap)
    return out


@gc_paused()
def unified(
    left: str, right: str, opcodes: Sequence[Opcode], *, context: int = 2
) -> list[DiffLine]:
    """Changed lines ("-" lines, then "+" lines, per run) with `context` unchanged lines
    around them and an "@" line ("…") for each run left out; [] if the texts are equal."""
    entries: list[DiffLine] = []
    for changed, a, b in _rows(left, right, opcodes):
        if not changed:
            entries.append(DiffLine(" ", a[2], a[3], b[3]))
            continue
        entries += [DiffLine("-", line[2], line[3], None) for line in a]
        entries += [DiffLine("+", line[2], None, line[3]) for line in b]
    signs = [e.sign != " " for e in entries]
    return _trim(entries, signs, context, DiffLine("@", [("equal", "…\n")])) if any(signs) else []


def side_by_side_flagged(
    left: str, right: str, opcodes: Sequence[Opcode]
) -> tuple[list[tuple[list[Part] | None, list[Part] | None]], list[bool]]:
    """Rows pairing left and right lines (None where a run of changed lines is shorter on
    one side), and for each whether its lines are the unified view's "-" and "+" lines
    (a moved line is changed even when all its parts are equal)."""
    rows: list[tuple[list[Part] | None, list[Part] | None]] = []
    flags: list[bool] = []
    for changed, a, b in _rows(left, right, opcodes):
        pairs = zip_longest(a, b) if changed else [(a, b)]
        for line_l, line_r in pairs:
            rows.append((line_l and line_l[2], line_r and line_r[2]))
            flags.append(changed)
    return rows, flags
