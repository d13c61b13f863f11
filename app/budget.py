"""Budgets on work whose cost depends on untrusted input, and the error for one that is hit.

Templates run in sandbox workers with their own limits (`render/limits.py`). Everything
else a visitor can make the service do (parse a body or an upload, build a tokenizer,
tokenize, analyse, diff, store) is bounded too: by a size checked before the work
starts, or by a worker with time and memory limits. A budget that is hit is an
`OverLimit`, answered with its own status and the name of its `PLAYGROUND_*` limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from app.errors import ApiError


@dataclass
class OverLimit(ApiError):
    """A request that costs more than a configured limit allows.

    `limit` names the limit in lower case, as its setting spells it (`json_depth` for
    `PLAYGROUND_JSON_DEPTH`); `status` is the HTTP status (400 for a malformed body, 413
    for a size, 422 for work that ran out of its budget, 429 for a rate, 503 when the
    service is busy, 507 when storage is full); `fields` are extra JSON fields of the
    error; `headers` extra HTTP headers (`Retry-After`). Not frozen: Python sets
    `__traceback__` on exceptions as they propagate.
    """

    limit: str
    message: str
    status: int = 422
    type: str = "LimitExceeded"
    fields: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    title: ClassVar[str] = "Over a limit"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple:
        # Exceptions pickle their `args`, which a dataclass leaves empty; workers send these.
        return (
            type(self),
            (self.limit, self.message, self.status, self.type, self.fields, self.headers),
        )

    def to_json(self) -> dict[str, Any]:
        """The `error` object of the API."""
        return {"type": self.type, "message": self.message, "limit": self.limit, **self.fields}
