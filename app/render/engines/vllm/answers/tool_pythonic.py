"""vLLM's `pythonic` tool parser (0.33.0: `PythonicToolParser`): `[get_weather(city="Paris")]`.

The whole answer must be one Python list of calls (`_pythonic`); text before or after
it makes the whole answer content.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._pythonic import read_calls
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "pythonic"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser pythonic`."""
    return read_calls(text, NAME)
