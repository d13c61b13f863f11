"""The Tokens view of the main prompt: tokenized only for the views that show tokens.

Tokenizing a 50k-token prompt was most of an edit's time, so the prompt is tokenized only
for the Tokens and Diff views, and the Tokens view's compact data (`token_data`) and its
tokens per message are built only while that view is open.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from app.pipeline.token_data import (
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
TokensOf = Callable[[str], tuple[Tokens | None, TokenizerUnavailable | None]]


def tokens_with(store: SourceStore, source: Source | None, limit: int | None) -> TokensOf:
    """The first `limit` tokens (None: all) from the source's own vocabulary (tokenized in
    a source worker), or why there are none."""

    def tokens_of(text: str) -> tuple[Tokens | None, TokenizerUnavailable | None]:
        if source is None:
            why = "No vocabulary is loaded: upload a GGUF file or a tokenizer.json."
        elif source.tokenizer is None:
            why = "This source has no vocabulary: upload a GGUF file or a tokenizer.json."
        elif source.tokenizer.supported is False:
            why = f"This vocabulary cannot be reproduced exactly: {source.tokenizer.reason}."
        else:
            try:
                [run] = store.tokenize(source, [text], parse_special=True, limit=limit)
            except TokenizerUnavailable as error:
                return None, error
            return run, None
        return None, TokenizerUnavailable(why)

    return tokens_of


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
    if state.view != "tokens" or source is None or not source.can_tokenize:
        # The data only while the Tokens view is open: 50k tokens are about 0.5 MB of
        # the answer to parse on every edit in the other views (and 80 ms to build).
        tokens, error = tokens_of(prompt)
        return TokensView(note=None if error is None else error.message, tokens=tokens)
    # Where each message's part of the prompt ends (a render per message, in a sandbox
    # worker) is found while the source worker tokenizes: neither waits for the other.
    # The thread that waits for it is this request's own, not a shared pool's: leaving
    # the `with` joins it, so its sandbox task never outlives the request's admission
    # slot. Admission lets in PLAYGROUND_THREADS requests, one per sandbox worker, so no
    # render waits for a worker (nor is taken for a wedged pool), and no pool is left
    # to size or to close at shutdown.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="message-ends") as beside:
        ends = beside.submit(message_ends_of, pool, request, prompt)
        tokens, error = tokens_of(prompt)
        if tokens is None:
            return TokensView(note=None if error is None else error.message)
        return _with_data(request, prompt, tokens, ends)


def _with_data(
    request: RenderRequest,
    prompt: str,
    tokens: Tokens,
    ends: Future[list[int | None] | None],
) -> TokensView:
    """The Tokens view's data: its tokens, their ids and, when every token was drawn and
    the message ends are known (`ends`, waited for last), the tokens of each message."""
    # Only the text the drawn tokens cover: the rest is not "untokenized".
    covered = max(tokens.tokens.ends, default=0)
    whole = tokens.total == len(tokens.tokens)
    data = token_data(prompt if whole else prompt[:covered], tokens.tokens)
    part_ends = ends.result()
    return TokensView(
        data=data,
        tokens=tokens,
        ids=ids_json(tokens.tokens),
        per_message=(
            tokens_per_message(tokens.tokens, part_ends, request.messages, len(prompt))
            if whole and part_ends is not None
            else None
        ),
    )
