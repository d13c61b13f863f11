"""llama.cpp's whitespace: std::isspace in the C locale, and trim_whitespace.

One copy for the built-in templates, the render's reasoning workarounds and the
autoparser's text tools, which all trim as llama.cpp's `trim_whitespace` does.
"""

from __future__ import annotations

#: std::isspace in the C locale: what llama.cpp trims and what `space()` skips.
C_SPACE = " \t\n\v\f\r"


def trim(text: str) -> str:
    """trim_whitespace: `text` without leading and trailing C whitespace."""
    return text.strip(C_SPACE)
