"""What can go wrong in a worker's task (a render, a probe, a source), as values with fields
rather than stack traces: the worker pools raise these, so they sit below `render` and `pool`.
"""

from __future__ import annotations

import traceback
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import ClassVar

from jinja2 import Environment
from jinja2.exceptions import TemplateSyntaxError

from app.errors import NAME_CHARS, ApiError, bounded_text, plain_text

#: Jinja compiles templates to Python code whose frames carry this file name and,
#: after Jinja rewrites the traceback, the template's own line numbers.
TEMPLATE_FILENAME = "<template>"


@dataclass
class TemplateProblem(ApiError):
    """A render that could not produce a prompt: answered as 422 by the API.

    Not frozen: Python sets `__traceback__` on exceptions as they propagate.

    `type` is the name of what went wrong ("TemplateSyntaxError", "UndefinedError",
    "LimitExceeded", ...), `line` the 1-based template line when it is known,
    `limit` the name of the limit that was hit, if any, and `column` the 1-based column
    where the program that failed says one (Edge-LLM's Inja counts it in UTF-8 bytes);
    the API's `error` has a `column` only then.
    """

    type: str
    message: str
    line: int | None = None
    limit: str | None = None
    column: int | None = None

    status: ClassVar[int] = 422
    title: ClassVar[str] = "The template failed"

    def __post_init__(self) -> None:
        # Whoever makes a problem, whatever a template raised: plain, bounded values only.
        self.type = bounded_text(self.type, "Error", NAME_CHARS) or "Error"
        self.message = bounded_text(self.message, self.type) or self.type
        self.line = self.line if type(self.line) is int else None
        self.column = self.column if type(self.column) is int else None
        self.limit = None if self.limit is None else bounded_text(self.limit, "", NAME_CHARS)

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.type}: {self.message}{where}"

    def __reduce__(self) -> tuple:
        # Exceptions pickle their `args`, which a dataclass leaves empty; workers send these.
        return (TemplateProblem, (self.type, self.message, self.line, self.limit, self.column))

    def to_json(self) -> dict:
        """The `error` object of the API (`column` only where one is known)."""
        body = asdict(self)
        if self.column is None:
            del body["column"]
        return body


#: The type of a problem raised before any render: the program would not load the model
#: with this template (an engine whose program checks it at load, `EngineInfo.checks_at_load`).
LOAD_ERROR = "LoadError"


def limit_exceeded(limit: str, message: str, line: int | None = None) -> TemplateProblem:
    """A problem that names the limit the template ran into."""
    return TemplateProblem("LimitExceeded", message, line=line, limit=limit)


def template_line(tb: TracebackType | None) -> int | None:
    """The innermost template line in a traceback, if the error happened in template code."""
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == TEMPLATE_FILENAME:
            line = lineno
    return line


#: What Jinja says when a tag misses its `%}` or `}}`: it notices at the next token, which
#: is often on a later line than the tag.
_UNCLOSED = ("'end of statement block'", "'end of print statement'")
#: Lexer token types that open and close a tag.
_TAG_OPEN = {"block_begin": "block_end", "variable_begin": "variable_end"}


def unclosed_tag_line(error: TemplateSyntaxError) -> int | None:
    """The line the unclosed tag starts on, when a syntax error is a missing `%}`/`}}`
    noticed on a later line (Jinja's `lineno` is where it noticed)."""
    if error.source is None or not any(end in (error.message or "") for end in _UNCLOSED):
        return None
    opened = None
    try:
        # Same delimiters as every template environment; trim settings do not move lines.
        for lineno, kind, _ in Environment().lexer.tokeniter(error.source, None):
            if lineno > error.lineno:
                break
            if kind in _TAG_OPEN:
                opened = (lineno, _TAG_OPEN[kind])
            elif opened and kind == opened[1]:
                opened = None
    except TemplateSyntaxError:
        pass  # the lexer stops where the source stops making sense: keep what it saw
    return opened[0] if opened and opened[0] < error.lineno else None


def problem_from_exception(error: BaseException) -> TemplateProblem:
    """Turn whatever a template raised into a problem that says what and where."""
    if isinstance(error, TemplateProblem):
        return error
    if isinstance(error, TemplateSyntaxError):
        # The line stays Jinja's own (transformers raises the same); the message says where
        # the tag that was left open starts.
        message = error.message or str(error)
        if (opened := unclosed_tag_line(error)) is not None:
            message += f" (the tag that starts on line {opened} is not closed)"
        return TemplateProblem("TemplateSyntaxError", message, error.lineno)
    line = template_line(error.__traceback__)
    if isinstance(error, MemoryError):
        return limit_exceeded("memory", "The template ran out of its memory allowance.", line)
    if isinstance(error, RecursionError):
        return limit_exceeded(
            "recursion", "The template nests or recurses too deeply to render.", line
        )
    message = getattr(error, "message", None)
    if message is None:
        message = plain_text(error, type(error).__name__)
    return TemplateProblem(type(error).__name__, message, line)
