"""vLLM's `llama4_pythonic` tool parser (0.33.0: `Llama4PythonicToolParser`).

The `pythonic` format (`_pythonic`), except that an answer starting with
`<|python_start|>` has that marker and every `<|python_end|>` removed first; the content
returned when there are no calls is the answer so trimmed.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._pythonic import read_calls
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "llama4_pythonic"
START = "<|python_start|>"
END = "<|python_end|>"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser llama4_pythonic`."""
    if text.startswith(START):
        text = text[len(START) :].replace(END, "")
    return read_calls(text, NAME)
