"""The one render loop: a compiled template streamed until its output passes a bound.

Jinja's sandbox limits what a template may reach, not how much it writes. Every render
of an untrusted template, by either engine and by every probe, goes through
`generate_bounded`, which stops as soon as the output passes the bound instead of
building the whole text first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jinja2

from app.problems import limit_exceeded


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
    for block in template.generate(**variables):
        blocks.append(block)
        length += len(block)
        if written is not None:
            written[0] = length
        if length > max_chars:
            raise limit_exceeded(
                "output_chars", f"The template wrote more than {max_chars:,} characters."
            )
    return "".join(blocks)
