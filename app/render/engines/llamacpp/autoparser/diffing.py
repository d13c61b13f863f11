"""The autoparser's text tools: trimming, marker segments, two-render diffs, marker scans.

common/chat-auto-parser-helpers.cpp splits two renders of a template into a common
prefix, the two differing middles and a common suffix, aligned on *markers* (text in
`<...>` or `[...]`). common/chat-diff-analyzer.cpp then reads markers off those pieces
with small tagged PEG parsers built from `marker()`, `space()`, `literal()` and
`until()`. Those parsers have fixed shapes and never backtrack past one alternative,
so each is written out here as a scan that returns the same tags (positions are
indices into the text; every scan is linear in it).
"""

from __future__ import annotations

from dataclasses import dataclass

# The answer modules read both from here, with the other text tools.
from app.render.engines.llamacpp.whitespace import C_SPACE as WHITESPACE
from app.render.engines.llamacpp.whitespace import trim as trim


def trim_leading(text: str) -> str:
    """trim_leading_whitespace."""
    return text.lstrip(WHITESPACE)


def space(text: str, pos: int) -> int:
    """`space()`: the end of the whitespace run at `pos`."""
    while pos < len(text) and text[pos] in WHITESPACE:
        pos += 1
    return pos


def marker(text: str, pos: int) -> int | None:
    """`marker()`: the end of a `<...>` or `[...]` starting at `pos`, or None."""
    if pos >= len(text) or text[pos] not in "<[":
        return None
    closer = ">" if text[pos] == "<" else "]"
    end = text.find(closer, pos + 1)
    return None if end < 0 else end + 1


def first_marker(text: str) -> str:
    """parse_anywhere(tag(marker())): the first marker in `text` ("" without one)."""
    for pos in range(len(text)):
        end = marker(text, pos)
        if end is not None:
            return text[pos:end]
    return ""


def no_marker_run(text: str, pos: int) -> int:
    """`zero_or_more(negate(marker()) + any())`: up to the first place a marker starts."""
    while pos < len(text) and marker(text, pos) is None:
        pos += 1
    return pos


@dataclass(frozen=True)
class Segment:
    """segment: a marker or the text between markers."""

    marker: bool
    value: str


def segmentize(text: str) -> list[Segment]:
    """segmentize_markers: markers and the text between them, in order."""
    segments: list[Segment] = []
    border = 0
    opener = ""
    for pos, char in enumerate(text):
        if not opener and char in "<[":
            if border < pos:
                segments.append(Segment(False, text[border:pos]))
            border, opener = pos, char
        elif opener and char == (">" if opener == "<" else "]"):
            segments.append(Segment(True, text[border : pos + 1]))
            border, opener = pos + 1, ""
    if border < len(text):
        segments.append(Segment(False, text[border:]))
    return segments


def prune_whitespace(segments: list[Segment]) -> list[Segment]:
    """prune_whitespace_segments."""
    return [segment for segment in segments if trim(segment.value)]


@dataclass
class DiffSplit:
    """diff_split: a common prefix and suffix around the two differing middles."""

    prefix: str = ""
    suffix: str = ""
    left: str = ""
    right: str = ""


def _common_prefix(a: str, b: str) -> int:
    length = 0
    limit = min(len(a), len(b))
    while length < limit and a[length] == b[length]:
        length += 1
    return length


def _common_suffix(a: str, b: str) -> int:
    length = 0
    limit = min(len(a), len(b))
    while length < limit and a[len(a) - 1 - length] == b[len(b) - 1 - length]:
        length += 1
    return length


def diff_split(left: str, right: str) -> DiffSplit:
    """calculate_diff_split: the segments both share from each end, then characters."""
    result = DiffSplit()
    lseg, rseg = segmentize(left), segmentize(right)
    if not lseg:
        result.right = right
        return result
    if not rseg:
        result.left = left
        return result
    ls, le, rs, re_ = 0, len(lseg) - 1, 0, len(rseg) - 1
    left_done = right_done = False
    while ls != le and rs != re_:
        advanced = False
        if lseg[ls] == rseg[rs]:
            result.prefix += lseg[ls].value
            ls, rs, advanced = ls + 1, rs + 1, True
        if lseg[le] == rseg[re_]:
            result.suffix = lseg[le].value + result.suffix
            if ls != le:
                le -= 1
            else:
                left_done = True
            if rs != re_:
                re_ -= 1
            else:
                right_done = True
            advanced = True
        if not advanced:
            break
    if ls == le and rs != re_:
        if lseg[ls] == rseg[re_]:
            result.suffix = rseg[re_].value + result.suffix
            re_ -= 1
            left_done = True
        elif lseg[ls] == rseg[rs]:
            result.prefix += rseg[rs].value
            rs += 1
            left_done = True
    elif rs == re_ and ls != le:
        if lseg[le] == rseg[rs]:
            result.suffix = lseg[le].value + result.suffix
            le -= 1
            right_done = True
        elif lseg[ls] == rseg[rs]:
            result.prefix += lseg[ls].value
            ls += 1
            right_done = True
    elif ls == le and rs == re_ and lseg[ls] == rseg[rs] and lseg[ls].marker:
        result.prefix += rseg[rs].value
        left_done = right_done = True
    text_suffix = not lseg[le].marker and not rseg[re_].marker
    text_prefix = not rseg[rs].marker and not lseg[ls].marker
    rem_left = "".join(s.value for s in lseg[ls : le if left_done else le + 1])
    rem_right = "".join(s.value for s in rseg[rs : re_ if right_done else re_ + 1])
    suffix_len = _common_suffix(rem_left, rem_right) if text_suffix else 0
    prefix_len = (
        _common_prefix(
            rem_left[: len(rem_left) - suffix_len], rem_right[: len(rem_right) - suffix_len]
        )
        if text_prefix
        else 0
    )
    result.prefix += rem_left[:prefix_len]
    result.suffix = rem_left[len(rem_left) - suffix_len :] + result.suffix
    result.left = rem_left[prefix_len : len(rem_left) - suffix_len]
    result.right = rem_right[prefix_len : len(rem_right) - suffix_len]
    if not result.left and not result.right:
        result.prefix, result.suffix = left, ""
    if not result.left and result.right and right.startswith(left):
        result.prefix, result.suffix, result.right = left, "", right[len(left) :]
    return result
