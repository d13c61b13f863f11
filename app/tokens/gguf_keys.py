"""Typed reads of `tokenizer.ggml.*` keys from an uploaded GGUF header.

A header is untrusted: any key can hold any GGUF type, and llama.cpp refuses a model
whose tokenizer keys have the wrong type. Each read here checks the type (and, for the
per-token arrays, the length) and raises `UnsupportedVocab` naming the key, so that a
hostile vocabulary becomes "unsupported, because ..." instead of a crash.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: Every key read here lives under this prefix.
PREFIX = "tokenizer.ggml."
#: Names and texts quoted in messages are cut to this many characters.
MAX_QUOTED_CHARS = 60


class UnsupportedVocab(ValueError):
    """The vocabulary cannot be reproduced exactly; the message says why."""


def describe(value: Any) -> str:
    """What a decoded GGUF value is, as a message says it: "a string", "an array of 3 items"."""
    if isinstance(value, list):
        return f"an array of {len(value):,} items"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return names.get(type(value), f"a {type(value).__name__}")


def quoted(text: str) -> str:
    """`text` quoted for a message, cut short: names in a hostile header can be megabytes."""
    if len(text) > MAX_QUOTED_CHARS:
        text = text[:MAX_QUOTED_CHARS] + "…"
    return repr(text)


def get(fields: Mapping[str, Any], name: str, kind: type, what: str) -> Any:
    """The value of `tokenizer.ggml.NAME` if it is a `kind`, None if the key is absent.

    Types are compared exactly, so a boolean is not taken for an integer.
    """
    value = fields.get(PREFIX + name)
    if value is None or type(value) is kind:
        return value
    raise UnsupportedVocab(f"{PREFIX}{name} must be {what}, not {describe(value)}")


def flag(fields: Mapping[str, Any], name: str, default: bool) -> bool:
    """A boolean key, or `default` when it is absent."""
    value = get(fields, name, bool, "a boolean")
    return default if value is None else value


def token_id(fields: Mapping[str, Any], name: str, n_tokens: int) -> int | None:
    """A `NAME_token_id` key; an id past the vocabulary is ignored, as llama.cpp does."""
    value = get(fields, name + "_token_id", int, "an integer")
    return value if value is not None and 0 <= value < n_tokens else None


def items(
    fields: Mapping[str, Any], name: str, kind: type, what: str, limit: int | None = None
) -> list[Any] | None:
    """An array key whose items (the first `limit`) are all `kind`, or None if absent.

    `what` names one item ("string"), for the message.
    """
    value = get(fields, name, list, f"an array of {what}s")
    if value is None:
        return None
    value = value[:limit]
    if set(map(type, value)) <= {kind}:
        return value
    index = next(i for i, item in enumerate(value) if type(item) is not kind)
    article = "an" if what[0] in "aeiou" else "a"
    raise UnsupportedVocab(
        f"{PREFIX}{name}[{index}] is {describe(value[index])}, not {article} {what}"
    )


def per_token(
    fields: Mapping[str, Any], name: str, kind: type, what: str, n_tokens: int
) -> list[Any] | None:
    """An array with a `kind` for each token; llama.cpp reads no further than the tokens."""
    value = items(fields, name, kind, what, limit=n_tokens)
    if value is not None and len(value) < n_tokens:
        raise UnsupportedVocab(f"{PREFIX}{name} has {len(value):,} entries for {n_tokens:,} tokens")
    return value


def scores(fields: Mapping[str, Any], n_tokens: int) -> list[float]:
    """`scores`, one number per token (0 without the key); NaN cannot be ordered as llama.cpp."""
    value = per_token(fields, "scores", float, "number", n_tokens)
    if value is None:
        return [0.0] * n_tokens
    if any(map(math.isnan, value)):
        index = next(i for i, score in enumerate(value) if math.isnan(score))
        raise UnsupportedVocab(f"{PREFIX}scores[{index}] is NaN, which has no order")
    return value
