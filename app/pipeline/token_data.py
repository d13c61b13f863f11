"""The Tokens view as compact data that the browser draws, and tokens per message.

A span per token made 5.7 MB of HTML for 50k tokens, and three seconds of drawing. The
page gets instead, beside the prompt it already has, one number per token (how many
characters of the prompt it covers), the ids as a JSON array (which is also the list a
reader copies), and sparse lists for what is rare: special tokens, text no token
covers, and pieces that differ from the text they cover (byte tokens, a leading space
the tokenizer added). The browser draws only the tokens on screen.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

from app.analysis.spans import MAX_MESSAGES, message_ends
from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.pool import SandboxPool
from app.sources.store import TokenList
from app.tokens.vocab import Token

#: A run of tokens as parallel lists: ids, starts, ends, special flags, and id -> piece.
Columns = tuple[list[int], list[int], list[int], list[bool], Mapping[int, str]]


def columns(tokens: Sequence[Token]) -> Columns:
    """The parallel lists of `tokens`: a source's `TokenList` has them already."""
    if isinstance(tokens, TokenList):
        return tokens.ids, tokens.starts, tokens.ends, tokens.special, tokens.pieces
    return (
        [t.id for t in tokens],
        [t.start for t in tokens],
        [t.end for t in tokens],
        [t.special for t in tokens],
        {t.id: t.piece for t in tokens},
    )


def compact_tokens(tokens: Sequence[Token], with_pieces: bool = False) -> dict[str, Any]:
    """The tokens as the API's compact answer: parallel arrays of ids, character spans
    (`starts`, `ends`) and special flags (1 or 0), taken as they are from the parallel
    lists the tokenizer gives (`columns`), with `pieces` ({id: piece}, each id once) when
    asked. A JSON object per token cost more than tokenizing; this costs almost nothing."""
    ids, starts, ends, specials, piece_of = columns(tokens)
    answer: dict[str, Any] = {
        "ids": ids,
        "starts": starts,
        "ends": ends,
        "special": [1 if flag else 0 for flag in specials],
    }
    if with_pieces:
        answer["pieces"] = {str(token_id): piece_of[token_id] for token_id in dict.fromkeys(ids)}
    return answer


def token_data(text: str, tokens: Sequence[Token]) -> dict[str, Any]:
    """What the browser needs to draw `tokens` over `text` (the part of the prompt they
    cover): joined in order, the spans are `text`. A token whose span starts before the
    end of the previous one (byte tokens of one character, overlapping offsets) gets only
    the part not yet covered, so no character is shown twice.

    - `lens[i]`: characters of `text` token i covers (0 for the second byte token of a
      character, whose text the first one shows);
    - `gaps`: `[i, n]`: n characters no token covers come before token i (i may be the
      number of tokens: text after the last one);
    - `special`: the indices of special tokens; `pieces`: `{i: piece}` where the piece is
      not the text the token covers.

    One loop over the parallel lists, no object per token: this runs on every edit.
    """
    ids, starts, ends, specials, piece_of = columns(tokens)
    n = len(text)
    if ends and max(max(starts), max(ends)) > n:  # spans past the text: cut, once
        starts, ends = [min(s, n) for s in starts], [min(e, n) for e in ends]
    lens: list[int] = []
    gaps: list[list[int]] = []
    pieces: dict[int, str] = {}
    pos = 0
    for index, (token_id, start, end) in enumerate(zip(ids, starts, ends, strict=True)):
        if start > pos:  # nothing covers text[pos:start]: kept visible, uncoloured
            gaps.append([index, start - pos])
            pos = start
        piece = piece_of[token_id]
        if end <= pos:  # all of its span is shown already
            lens.append(0)
            if piece:
                pieces[index] = piece
            continue
        # `piece != text[pos:end]`, compared in place: a slice per token was most of
        # this loop's time.
        if len(piece) != end - pos or not text.startswith(piece, pos):
            pieces[index] = piece
        lens.append(end - pos)
        pos = end
    if pos < n:
        gaps.append([len(lens), n - pos])
    special = [index for index, flag in enumerate(specials) if flag]
    return {"lens": lens, "gaps": gaps, "special": special, "pieces": pieces}


def ids_json(tokens: Sequence[Token]) -> str:
    """The token ids as a JSON array, as a reader pastes it into code."""
    return "[" + ", ".join(map(str, columns(tokens)[0])) + "]"


def message_ends_of(
    pool: SandboxPool, request: RenderRequest, prompt: str
) -> list[int | None] | None:
    """Where each message's part of the prompt ends (`app.analysis.spans`: one render per
    message, so asked only for the Tokens view, up to `MAX_MESSAGES`), or None."""
    if not 0 < len(request.messages) <= MAX_MESSAGES:
        return None
    try:
        return pool.run(message_ends, request, prompt)
    except TemplateProblem:
        return None


def tokens_per_message(
    tokens: Sequence[Token], ends: Sequence[int | None], messages: Sequence[Any], length: int
) -> list[dict[str, Any]]:
    """Rows of (messages, role, chars, tokens): each message's part of the prompt, then
    what the template adds after the last message (the generation prompt), if anything.

    `ends[k]` is where message k's part of the prompt (of `length` characters) ends, or
    None where it is unknown (a conversation up to it that does not render): its tokens
    count with the next known one. A token belongs to the part its first character is in.
    """
    starts = columns(tokens)[1]
    rows: list[dict[str, Any]] = []
    begin, first = 0, 0
    for index, end in enumerate(ends):
        if end is None:
            continue
        message = messages[index]
        role = message.get("role") if isinstance(message, dict) else None
        numbers = str(index + 1) if first == index else f"{first + 1}–{index + 1}"
        count = bisect_left(starts, end) - bisect_left(starts, begin)
        rows.append(
            {"messages": numbers, "role": str(role or "?"), "chars": end - begin, "tokens": count}
        )
        begin, first = end, index + 1
    rest = len(tokens) - bisect_left(starts, begin)
    if rest or length > begin:
        rows.append({"messages": "after", "role": "", "chars": length - begin, "tokens": rest})
    return rows
