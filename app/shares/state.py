"""What a share stores: a validated, normalised playground state and its content id.

A share is the `/api/render` body plus what the page needs to show the same view
again (a second template to compare, a summary of the loaded source, the engine and
the open tab). The id is a hash of the canonical JSON of the normalised state, so the
same state always gets the same id and a link can never point at different content.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from app.errors import ApiError, RequestError
from app.render.request import parse_render_request

#: A share id: the first 24 hex characters of a SHA-256 (96 bits, so collisions need
#: around 2**48 shares; a link stays short enough to paste).
SHARE_ID = re.compile(r"[0-9a-f]{24}")

#: The kinds of source a share can point at.
SOURCE_KINDS = ("gguf", "hf")

#: Optional string-or-null fields of a source summary.
_SOURCE_OPTIONAL = ("file_name", "template_name")


@dataclass
class ShareTooLarge(ApiError):
    """A state whose canonical JSON is over the share size cap (answered as 413)."""

    size_bytes: int
    max_bytes: int

    status: ClassVar[int] = 413
    title: ClassVar[str] = "Too large to share"

    def __str__(self) -> str:
        return f"The shared state is {self.size_bytes:,} bytes; the limit is {self.max_bytes:,}."

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "PayloadTooLarge",
            "message": str(self),
            "max_bytes": self.max_bytes,
            "size_bytes": self.size_bytes,
        }


def _kind(value: Any) -> str:
    """A JSON type name for error messages."""
    if value is None:
        return "null"
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), "a number")


def _optional_string(body: dict, field: str, path: str | None = None) -> str | None:
    """A string or null (absent) field; `path` is how the error names it."""
    value = body.get(field)
    if value is not None and type(value) is not str:
        name = path or field
        raise RequestError(name, f"'{name}' must be a string or null, not {_kind(value)}.")
    return value


def _optional_flag(body: dict, field: str) -> bool | None:
    """A boolean option stored only when true."""
    value = body.get(field)
    if value is None or value is False:
        return None
    if value is not True:
        raise RequestError(field, f"'{field}' must be a boolean.")
    return True


def _source_summary(value: Any) -> dict[str, Any] | None:
    """Validate `source`; unknown keys are dropped, as `/api/render` ignores them."""
    if value is None:
        return None
    if type(value) is not dict:
        raise RequestError("source", f"'source' must be an object or null, not {_kind(value)}.")
    source_id = value.get("id")
    if type(source_id) is not str:
        raise RequestError("source.id", f"'source.id' must be a string, not {_kind(source_id)}.")
    kind = value.get("kind")
    if type(kind) is not str or kind not in SOURCE_KINDS:
        shown = repr(kind) if type(kind) is str else _kind(kind)
        raise RequestError("source.kind", f"'source.kind' must be 'gguf' or 'hf', not {shown}.")
    summary: dict[str, Any] = {"id": source_id, "kind": kind}
    for field in _SOURCE_OPTIONAL:
        # Always present (null when unknown) so the page reads one fixed shape.
        summary[field] = _optional_string(value, field, f"source.{field}")
    return summary


def normalise_state(body: Any) -> dict[str, Any]:
    """The state to store for a share body; raises `RequestError` naming the bad field.

    Only validated fields are kept (unknown keys are dropped), null fields are left out,
    render options get their defaults written out, and `now` is always present: when the
    body has none it is the current time, so the share pins the moment it was made and
    renders the same prompt forever.
    """
    render = parse_render_request(body)  # rejects a non-object body first
    state: dict[str, Any] = {
        "template": render.template,
        "messages": render.messages,
        "tools": render.tools,
        "documents": render.documents,
        "add_generation_prompt": render.add_generation_prompt,
        "continue_final_message": render.continue_final_message,
        "special_tokens": render.special_tokens,
        "kwargs": render.kwargs,
        "now": render.now.isoformat() if render.now else None,
        "compare_template": _optional_string(body, "compare_template"),
        "source": _source_summary(body.get("source")),
        # Defaults are left out so that a body that spells them out hashes the same.
        "engine": None if render.engine == "transformers" else render.engine,
        "add_bos_token": render.add_bos_token or None,
        "add_eos_token": render.add_eos_token or None,
        "compare_engines": _optional_flag(body, "compare_engines"),
        "view": _optional_string(body, "view"),
    }
    # Null and absent mean the same thing, so they must hash the same.
    return {key: value for key, value in state.items() if value is not None}


def canonical_json(state: dict[str, Any]) -> str:
    """The one JSON text of a state: sorted keys, no spaces, UTF-8 as is.

    NaN and Infinity are refused: they are not JSON and a browser could not read the
    share back. Unpaired surrogates (legal in JSON escapes, not in UTF-8) are refused
    too, because the text is stored and hashed as UTF-8.
    """
    try:
        text = json.dumps(
            state, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except ValueError:
        message = "NaN and Infinity are not JSON values; a share cannot hold them."
        raise RequestError(None, message) from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError(None, "The state contains an unpaired UTF-16 surrogate.") from None
    return text


def share_id(canonical: str) -> str:
    """The content id of a canonical state text: SHA-256, first 24 hex characters."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


def check_size(canonical: str, max_bytes: int) -> None:
    """Raise `ShareTooLarge` when the canonical text is over `max_bytes` in UTF-8."""
    size = len(canonical.encode("utf-8"))
    if size > max_bytes:
        raise ShareTooLarge(size, max_bytes)
