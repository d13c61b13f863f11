"""Render with the real Hugging Face transformers library: the reference our renderer must match.

Everything here runs transformers itself, offline: a tokenizer is built in memory from a
one-word vocabulary, given the case's special tokens, and asked to `apply_chat_template`
with `tokenize=False`. Transformers' `strftime_now` reads `datetime.now()` from its
`chat_template_utils` module, so that name is patched to a clock pinned at `PINNED_NOW`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, tzinfo
from functools import lru_cache
from typing import Any
from unittest import mock

import tokenizers
import tokenizers.models
from transformers import PreTrainedTokenizerFast
from transformers.utils import chat_template_utils

from tests.support.corpus import PINNED_NOW

#: What a reference render gives: ("ok", prompt) or ("error", type name, message).
Outcome = tuple[str, str] | tuple[str, str, str]


class PinnedDatetime(datetime):
    """A `datetime` whose `now()` is always `PINNED_NOW`."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> datetime:  # type: ignore[override]
        return PINNED_NOW if tz is None else PINNED_NOW.replace(tzinfo=tz)


@contextmanager
def pinned_transformers_clock() -> Iterator[None]:
    """Make transformers' `strftime_now` read `PINNED_NOW`."""
    with mock.patch.object(chat_template_utils, "datetime", PinnedDatetime):
        yield


@lru_cache(maxsize=16)
def _cached_tokenizer(special_tokens: tuple[tuple[str, str], ...]) -> PreTrainedTokenizerFast:
    model = tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>")
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(model), **dict(special_tokens)
    )
    wanted = dict(special_tokens)
    if tokenizer.special_tokens_map != wanted:
        raise AssertionError(
            f"The tokenizer's special_tokens_map {tokenizer.special_tokens_map!r} is not the "
            f"special tokens it was given, {wanted!r}"
        )
    return tokenizer


def reference_tokenizer(special_tokens: dict[str, str]) -> PreTrainedTokenizerFast:
    """An offline tokenizer whose `special_tokens_map` is exactly `special_tokens`."""
    return _cached_tokenizer(tuple(sorted(special_tokens.items())))


def error_message(error: BaseException) -> str:
    """The message of an exception: Jinja's own `message` when it has one."""
    return getattr(error, "message", None) or str(error) or type(error).__name__


def reference_render(case: dict[str, Any], template: str) -> Outcome:
    """Render a corpus case (see `tests.support.corpus`) through `template` with transformers."""
    case = copy.deepcopy(case)
    tokenizer = reference_tokenizer(case.get("special_tokens") or {})
    try:
        with pinned_transformers_clock():
            prompt = tokenizer.apply_chat_template(
                case["messages"],
                tools=case.get("tools"),
                documents=case.get("documents"),
                chat_template=template,
                tokenize=False,
                add_generation_prompt=case.get("add_generation_prompt", False),
                continue_final_message=case.get("continue_final_message", False),
                **(case.get("kwargs") or {}),
            )
    except Exception as error:
        return ("error", type(error).__name__, error_message(error))
    assert isinstance(prompt, str)
    return ("ok", prompt)


def reference_generation_spans(
    template: str,
    messages: list[dict[str, Any]],
    special_tokens: dict[str, str],
    **kwargs: Any,
) -> tuple[str, list[tuple[int, int]]]:
    """Transformers' prompt and `{% generation %}` character spans for one conversation.

    `apply_chat_template` only exposes the spans as a token mask, so this asks the function
    it calls, `render_jinja_template`, with the same variables it would pass.
    """
    messages = copy.deepcopy(messages)
    with pinned_transformers_clock():
        rendered, indices = chat_template_utils.render_jinja_template(
            conversations=[messages],
            chat_template=template,
            return_assistant_tokens_mask=True,
            **{**special_tokens, **kwargs},
        )
    return rendered[0], [tuple(span) for span in indices[0]]
