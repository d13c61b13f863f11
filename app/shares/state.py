"""What a share stores: the canonical JSON text of a playground state, and its content id.

The state itself (its fields, validation and JSON form) is `app.state.PlaygroundState`.
The id is a hash of the canonical text, so the same state always gets the same id and a
link can never point at different content.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from app.errors import ApiError, RequestError

#: A share id: the first 24 hex characters of a SHA-256 (96 bits, so collisions need
#: around 2**48 shares; a link stays short enough to paste).
SHARE_ID = re.compile(r"[0-9a-f]{24}")


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


def canonical_json(state: dict[str, Any]) -> str:
    """The one JSON text of a state's JSON form: top-level fields sorted, nested keys in
    the order given, no spaces, UTF-8 as is.

    Key order inside messages, tools, documents and kwargs is part of the state (templates
    print it with `tojson`), so it is written, and hashed, as the user typed it; only the
    state's own fields get a fixed order, whatever order a body lists them in. (Earlier
    versions sorted every key: a state whose objects are all in sorted order keeps the id
    it had then.)

    NaN and Infinity are refused: they are not JSON and a browser could not read the
    share back. Unpaired surrogates (legal in JSON escapes, not in UTF-8) are refused
    too, because the text is stored and hashed as UTF-8.
    """
    try:
        fields = dict(sorted(state.items()))
        text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
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
