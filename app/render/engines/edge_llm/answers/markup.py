"""Where Edge-LLM's generic tool parser finds tool-call blocks, and what it strips off them.

Edge-LLM's server (`experimental/server/parsing/tool_calling.py` at 83f5f76) knows nine
wrapper families (`_MARKER_FAMILIES`): an opener, then the shortest text up to a closer.
It finds blocks with one regular expression, whose alternatives it tries at each position
in the families' order, left to right (the first that matches wins; after a block the
search goes on at its end). An opener with no closer after it is no block: the text stays
content. Python's engine pays for that by scanning to the end of the text once per such
opener; here every search only moves forward (a closer missing after one opener is
missing after every later one too), so the same blocks come out in linear time.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One wrapper format: its openers and closers, as Edge-LLM lists them."""

    opens: tuple[str, ...]
    closes: tuple[str, ...]
    #: `<function=NAME>`: the opener runs on to the next ">" (at least one character).
    named: bool = False
    #: The end of the text closes it too (Python's `$`: the very end, or before a final
    #: newline).
    open_ended: bool = False
    #: Whether its tags are stripped from a block before the calls are read.
    strippable: bool = True


#: Edge-LLM's families in its order, which is the order its regular expression tries them.
FAMILIES = (
    Family(("<tool_call>",), ("</tool_call>",)),
    Family(("<tool_calls>",), ("</tool_calls>",)),
    Family(("<toolcall>",), ("</toolcall>",)),
    Family(("<toolcalls>",), ("</toolcalls>",)),
    Family(("<function_call>",), ("</function_call>",)),
    Family(("<function_calls>",), ("</function_calls>",)),
    Family(("<atem:function_calls>",), ("</atem:function_calls>",)),
    Family(("<function=",), ("</function>",), named=True, strippable=False),
    Family(("[TOOL_CALL]", "[TOOL_CALLS]"), ("[/TOOL_CALL]", "[/TOOL_CALLS]"), open_ended=True),
)


class Forward:
    """The first `needle` in `text` at or after a position, for positions that only grow:
    each call goes on from where the last one stopped, so all of them cost one pass."""

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle = text, needle
        self._asked = -1
        self._found = -1

    def at_or_after(self, start: int) -> int:
        """Where `needle` next starts at or after `start` (-1: nowhere)."""
        stale = self._found != -1 and self._found < start
        if self._asked == -1 or start < self._asked or stale:
            self._found = self.text.find(self.needle, start)
        self._asked = start
        return self._found


@dataclass(frozen=True)
class Block:
    """One block the parser found: `text[start:end]`, opened by `opener`."""

    start: int
    end: int
    family: Family
    opener: str


@dataclass(frozen=True)
class Unclosed:
    """An opener no closer follows: the first of its family, which is no block."""

    at: int
    opener: str
    closer: str


def find_blocks(text: str) -> tuple[list[Block], list[Unclosed]]:
    """Every block Edge-LLM's regular expression finds in `text`, left to right, and the
    first opener of each family that found no closer."""
    opens = [[Forward(text, token) for token in family.opens] for family in FAMILIES]
    closes = [[Forward(text, token) for token in family.closes] for family in FAMILIES]
    angle = Forward(text, ">")
    skip = [0] * len(FAMILIES)  # a named opener that failed where it stands
    dead: set[int] = set()
    blocks: list[Block] = []
    unclosed: list[Unclosed] = []
    pos = 0
    while True:
        best: tuple[int, int, str] | None = None
        for index, family in enumerate(FAMILIES):
            if index in dead:
                continue
            for finder, token in zip(opens[index], family.opens, strict=True):
                at = finder.at_or_after(max(pos, skip[index]))
                if at != -1 and (best is None or at < best[0]):
                    best = (at, index, token)
        if best is None:
            return blocks, unclosed
        at, index, token = best
        family = FAMILIES[index]
        body = at + len(token)
        if family.named:
            if body < len(text) and text[body] == ">":
                skip[index] = at + 1  # "<function=>" has no name: no match here
                continue
            angle_at = angle.at_or_after(body + 1) if body < len(text) else -1
            if angle_at == -1:
                dead.add(index)
                continue
            body = angle_at + 1
        end = _block_end(text, body, family, closes[index])
        if end is None:
            dead.add(index)
            unclosed.append(Unclosed(at, token, family.closes[0]))
            continue
        blocks.append(Block(at, end, family, token))
        pos = end


def _block_end(text: str, body: int, family: Family, closes: list[Forward]) -> int | None:
    """Where the block whose body starts at `body` ends (None: it never closes)."""
    found = [
        (finder.at_or_after(body), token)
        for finder, token in zip(closes, family.closes, strict=True)
    ]
    found = [(at, token) for at, token in found if at != -1]
    nearest = min(found) if found else None
    if family.open_ended:
        # `$` matches before a final newline first, if the body reaches that far.
        end = len(text) - 1 if text.endswith("\n") and len(text) - 1 >= body else len(text)
        if nearest is not None and nearest[0] < end:
            return nearest[0] + len(nearest[1])
        return end
    return None if nearest is None else nearest[0] + len(nearest[1])


def strip_tags(block: str) -> str:
    """A block without its wrapper (`_strip_tool_tags`): the text between a family's
    opener at its start and closer at its end, else without a code fence."""
    body = block.strip()
    for family in FAMILIES:
        if not family.strippable:
            continue
        opener = next((token for token in family.opens if body.startswith(token)), None)
        if opener is None:
            continue
        rest = body[len(opener) :]
        closer = next((token for token in family.closes if rest.endswith(token)), None)
        if closer is not None:
            return rest[: len(rest) - len(closer)].strip()
        if family.open_ended:
            return rest.strip()
    return strip_fence(body)


def strip_fence(text: str) -> str:
    """`text` without a Markdown code fence around all of it (```` ``` ```` or
    ```` ```json ````), stripped (`_strip_code_fence`)."""
    body = text.strip()
    if len(body) < 6 or not (body.startswith("```") and body.endswith("```")):
        return body
    start = 7 if body.startswith("```json") and len(body) >= 10 else 3
    return body[start:-3].strip()
