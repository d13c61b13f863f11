"""Errors the API answers with: each one knows its HTTP status and its JSON body.

Plain Python, no Flask: the core raises these, and `app.web.errors` answers every one
of them in one handler, `{"error": error.to_json()}` with `error.status` (or a small page
for a person browsing). A view never builds an error body by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar


class ApiError(Exception):
    """Base of every error with an HTTP answer.

    Subclasses set `status` (a class attribute, or a field where it varies) and
    implement `to_json`, the `error` object of the answer, which always holds `type`
    and `message`. `headers` are extra HTTP headers (`Retry-After`); `title` heads the
    page a browser gets.
    """

    status: int = 500
    headers: Mapping[str, str] = MappingProxyType({})
    title: ClassVar[str] = "Something went wrong"

    def to_json(self) -> dict[str, Any]:
        """The `error` object of the API: `type`, `message` and the error's own fields."""
        raise NotImplementedError

    def answer(self) -> dict[str, Any]:
        """The whole JSON body: `{"error": {...}}`."""
        return {"error": self.to_json()}


@dataclass
class RequestError(ApiError):
    """A request the API cannot read: answered as 400 with the offending field.

    Not frozen: Python sets `__traceback__` on exceptions as they propagate.
    """

    field: str | None
    message: str

    status: ClassVar[int] = 400
    title: ClassVar[str] = "Bad request"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple:
        # Exceptions pickle their `args`, which a dataclass leaves empty.
        return (type(self), (self.field, self.message))

    def to_json(self) -> dict[str, Any]:
        return {"type": "BadRequest", "message": self.message, "field": self.field}


@dataclass
class NotFound(ApiError):
    """Something named in the URL or the body that does not exist (404)."""

    message: str

    status: ClassVar[int] = 404
    title: ClassVar[str] = "Not found"

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"type": "NotFound", "message": self.message}


@dataclass
class PlainError(ApiError):
    """An error known only by its type name, message and status: what the web framework
    raises (405, 415, a body over the cap) and what nobody expected (500)."""

    type: str
    message: str
    status: int = 500
    fields: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, **self.fields}
