"""The Tokens view of the main prompt: tokenized only for the views that show tokens.

Tokenizing a 50k-token prompt was most of an edit's time, so the prompt is tokenized only
for the Tokens and Diff views, and the Tokens view's compact data (`token_data`) and its
tokens per message are built only while that view is open.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from app.display.token_data import (
    ids_json,
    message_ends_of,
    token_data,
    tokens_per_message,
)
from app.render.core import RenderRequest
from app.render.pool import SandboxPool
from app.sources.source import Source
from app.sources.store import SourceStore, TokenizerUnavailable, Tokens
from app.state import PlaygroundState

#: Characters of the token id list per block (`id_blocks`).
ID_BLOCK_CHARS = 1500


def id_blocks(ids: str, size: int = ID_BLOCK_CHARS) -> list[str]:
    """The id list's text cut after a ", " every `size` characters or so: each piece is a
    box the browser lays out only near the screen (outputs.css), so the first layout of
    a page with 50k ids does not lay out 300 kB of text in a box a few lines high."""
    pieces, start = [], 0
    while start < len(ids):
        cut = ids.find(", ", start + size)
        end = len(ids) if cut == -1 else cut + 2
        pieces.append(ids[start:end])
        start = end
    return pieces


#: The views that show the main prompt's tokens (the Diff compares them, by tokens).
TOKEN_VIEWS = frozenset({"tokens", "diff"})


#: Tokenizes a text with the loaded source: its first tokens and their count, or None
#: and why there are none.
TokensOf = Callable[[str], tuple[Tokens | None, str | None]]


def tokens_with(store: SourceStore, source: Source | None, limit: int) -> TokensOf:
    """The first `limit` tokens from the source's own vocabulary (tokenized in a source
    worker), or why there are none."""

    def tokens_of(text: str) -> tuple[Tokens | None, str | None]:
        if source is None:
            return None, "No vocabulary is loaded: upload a GGUF file or a tokenizer.json."
        if source.tokenizer is None:
            return None, "This source has no vocabulary: upload a GGUF file or a tokenizer.json."
        if source.tokenizer.supported is False:
            reason = source.tokenizer.reason
            return None, f"This vocabulary cannot be reproduced exactly: {reason}."
        try:
            [run] = store.tokenize(source, [text], parse_special=True, limit=limit)
        except TokenizerUnavailable as error:
            return None, error.message
        return run, None

    return tokens_of


#: Threads that wait for the message ends while the request's own thread waits for the
#: tokens (each wait is on a worker process: no CPU is spent here).
_MESSAGE_ENDS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="message-ends")


@dataclass
class TokensView:
    """What the Tokens view gets for the main prompt (see `Outputs`)."""

    data: dict[str, Any] | None = None
    note: str | None = None
    ids: str = "[]"
    per_message: list[dict[str, Any]] | None = None
    later: bool = False
    #: The main prompt's tokens, when a view on screen shows them.
    tokens: Tokens | None = None


def tokens_view(
    pool: SandboxPool,
    state: PlaygroundState,
    request: RenderRequest,
    prompt: str | None,
    source: Source | None,
    tokens_of: TokensOf,
) -> TokensView:
    """Tokenize the main prompt for the views that show its tokens (`tokens`), and build
    the Tokens view's data while that view is open."""
    if prompt is None:
        return TokensView()
    if state.view not in TOKEN_VIEWS and source is not None and source.can_tokenize:
        # No view on screen shows them: tokenizing 50k tokens was most of each edit's
        # time in the Prompt view. Opening the Tokens view asks for them.
        return TokensView(later=True)
    # Where each message's part of the prompt ends (a render per message, in a sandbox
    # worker) is found while the source worker tokenizes: neither waits for the other.
    wanted = state.view == "tokens" and source is not None and source.can_tokenize
    ends = _MESSAGE_ENDS.submit(message_ends_of, pool, request, prompt) if wanted else None
    tokens, note = tokens_of(prompt)
    if tokens is None:
        return TokensView(note=note)
    if ends is None:
        # The data only while the Tokens view is open: 50k tokens are about 0.5 MB of
        # the answer to parse on every edit in the other views (and 80 ms to build).
        return TokensView(note=note, tokens=tokens)
    # Only the text the drawn tokens cover: the rest is not "untokenized".
    covered = max(tokens.tokens.ends, default=0)
    whole = tokens.total == len(tokens.tokens)
    data = token_data(prompt if whole else prompt[:covered], tokens.tokens)
    part_ends = ends.result()
    return TokensView(
        data=data,
        note=note,
        tokens=tokens,
        ids=ids_json(tokens.tokens),
        per_message=(
            tokens_per_message(tokens.tokens, part_ends, request.messages, len(prompt))
            if whole and part_ends is not None
            else None
        ),
    )
