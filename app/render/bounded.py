"""The one render loop: a compiled template streamed until its output passes a bound.

Jinja's sandbox limits what a template may reach, not how much it writes. Every render
of an untrusted template, by either engine and by every probe, goes through
`generate_bounded`, which stops as soon as the output passes the bound instead of
building the whole text first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import jinja2

from app.problems import limit_exceeded

#: While `tracking_lines` is on: (end offset, template line) of each block of the latest
#: render, so a position in a prompt can be traced to the line that wrote it.
_LINES: ContextVar[list[tuple[int, int | None]] | None] = ContextVar("lines", default=None)


@contextmanager
def tracking_lines() -> Iterator[list[tuple[int, int | None]]]:
    """Within the block, renders note which template line wrote each piece of output.

    Jinja's own line table (`get_corresponding_lineno`, the one its tracebacks use) maps
    the compiled code the generator is paused in back to the template.
    """
    lines: list[tuple[int, int | None]] = []
    token = _LINES.set(lines)
    try:
        yield lines
    finally:
        _LINES.reset(token)


def _writing_line(generator: Any, template: jinja2.Template) -> int | None:
    """The template line of the code `generator` is paused in (after `yield from`s)."""
    while (inner := getattr(generator, "gi_yieldfrom", None)) is not None:
        generator = inner
    frame = getattr(generator, "gi_frame", None)
    return None if frame is None else template.get_corresponding_lineno(frame.f_lineno)


def generate_bounded(
    template: jinja2.Template,
    variables: Mapping[str, Any],
    max_chars: int,
    written: list[int] | None = None,
) -> str:
    """Render `template`, raising the `output_chars` limit once it writes over `max_chars`.

    `written[0]`, when given, follows the characters written so far: the
    `{% generation %}` tag reads it to place its spans.
    """
    blocks: list[str] = []
    length = 0
    lines = _LINES.get()
    if lines is not None:
        lines.clear()  # the render that makes the prompt is the last one
    generator = template.generate(**variables)
    for block in generator:
        blocks.append(block)
        length += len(block)
        if lines is not None:
            lines.append((length, _writing_line(generator, template)))
        if written is not None:
            written[0] = length
        if length > max_chars:
            raise limit_exceeded(
                "output_chars", f"The template wrote more than {max_chars:,} characters."
            )
    return "".join(blocks)
