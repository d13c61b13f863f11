"""Errors the API answers with: each one knows its HTTP status and its JSON body.

Plain Python, no Flask: the core raises these, and `app.web.errors` answers every one
of them in one handler, `{"error": error.to_json()}` with `error.status` (or a small page
for a person browsing). A view never builds an error body by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

#: The most characters of an error message. A template can raise with any text
#: (`raise_exception('x' * 10**8)`), a reason may quote a 200,000-character merge: each
#: is cut where the error is made, in the worker, so megabytes never reach the web
#: process and the page.
MESSAGE_CHARS = 4000
#: The most characters of an error's type or limit name (normally a class name).
NAME_CHARS = 100
#: The most sentences of one list that leaves a worker (an answer's notes, a render's
#: rewrites), the last saying how many more there were.
MESSAGE_LINES = 20


def plain_text(value: object, fallback: str) -> str:
    """`value` as a plain `str`: a template can raise with any object as its message (a
    cycler, a macro, a loop), whose text is all that may leave the worker."""
    if isinstance(value, str):
        return str.__str__(value)  # a subclass (Markup) becomes a plain string
    try:
        return str(value)
    except Exception:  # a strict undefined value, say; CPU-time stops still propagate
        return fallback


def bounded_text(value: object, fallback: str, max_chars: int = MESSAGE_CHARS) -> str:
    """`value` as plain text of at most about `max_chars` characters. A longer text loses
    its middle, where a message quotes what it refuses ("merge '…' makes a token that is
    not in the vocabulary"), and says how much was cut there."""
    text = plain_text(value, fallback)
    if len(text) <= max_chars:
        return text
    # The result stays within `max_chars` (the note takes at most 64), so cutting it
    # again, as unpickling a problem does, changes nothing.
    kept = max_chars - 64
    head, tail = kept * 3 // 4, kept - kept * 3 // 4
    cut = len(text) - head - tail
    return f"{text[:head]} … [{cut:,} of {len(text):,} characters cut] … {text[-tail:]}"


def bounded_lines(
    values: Iterable[object], fallback: str, most: int = MESSAGE_LINES
) -> tuple[str, ...]:
    """At most `most` sentences, each cut by `bounded_text`; a last one counts the rest
    (one per piece of a hostile input: a dropped kwarg each, say)."""
    lines = [bounded_text(value, fallback) for value in values]
    if len(lines) <= most:
        return tuple(lines)
    return (*lines[: most - 1], f"… and {len(lines) - most + 1:,} more like these.")


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
        """The whole JSON body: `{"error": {...}}`, its message cut to `MESSAGE_CHARS`
        (a message may quote what it refuses: a redirect's 60 kB host name, say)."""
        body = self.to_json()
        body["message"] = bounded_text(body.get("message"), self.title)
        return {"error": body}


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
