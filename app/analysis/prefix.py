"""Prefix stability across turns: how much of the KV cache survives the next request.

A chat client sends, at turn k, the conversation up to and including its k-th user
message, rendered with the generation prompt. An inference server can reuse its cache
for the part of request k+1 that repeats request k exactly. Templates that move the
system text into the last user message, print a date, or rewrite earlier turns lose
most of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from app.text import common_prefix_length

#: Characters of context shown on each side of the first difference.
CONTEXT_CHARS = 24


def user_turn_requests(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Request k: the messages up to and including the k-th user message."""
    return [
        list(messages[: index + 1])
        for index, message in enumerate(messages)
        if message.get("role") == "user"
    ]


@dataclass(frozen=True)
class TurnPair:
    """How request k+1 reuses request k."""

    from_turn: int
    to_turn: int
    shared_chars: int
    request_chars: int
    shared_tokens: int | None
    first_difference: int | None
    before: str
    after_left: str
    after_right: str
    answer_stays_prefix: bool | None

    @property
    def reused_share(self) -> float:
        """The share of request k that request k+1 repeats."""
        return self.shared_chars / self.request_chars if self.request_chars else 1.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "reused_share": round(self.reused_share, 4)}


def compare_requests(
    turn: int,
    left: str,
    right: str,
    ids: tuple[list[int], list[int]] | None = None,
    answered: str | None = None,
) -> TurnPair:
    """Compare request `turn` with the next one; `ids` are both requests' token ids, and
    `answered` is request k plus its answer."""
    shared = common_prefix_length(left, right)
    differs = shared < len(left)
    shared_tokens = common_prefix_length(*ids) if ids is not None else None
    return TurnPair(
        from_turn=turn,
        to_turn=turn + 1,
        shared_chars=shared,
        request_chars=len(left),
        shared_tokens=shared_tokens,
        first_difference=shared if differs else None,
        before=left[max(0, shared - CONTEXT_CHARS) : shared],
        after_left=left[shared : shared + CONTEXT_CHARS],
        after_right=right[shared : shared + CONTEXT_CHARS],
        answer_stays_prefix=None if answered is None else right.startswith(answered),
    )


def answered_requests(messages: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]] | None]:
    """For each user turn k: the messages up to the assistant's answer to it, if any.

    Agent loops append the model's answer (with its reasoning and tool calls) and send
    again; this is what the second measure checks stays a prefix of the next request.
    """
    answered: list[list[dict[str, Any]] | None] = []
    user_positions = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    for k, position in enumerate(user_positions):
        end = user_positions[k + 1] if k + 1 < len(user_positions) else len(messages)
        answer_at = next(
            (i for i in range(position + 1, end) if messages[i].get("role") == "assistant"),
            None,
        )
        answered.append(None if answer_at is None else list(messages[: answer_at + 1]))
    return answered
