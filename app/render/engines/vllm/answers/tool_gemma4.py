"""vLLM's `gemma4` tool parser (0.33.0: `Gemma4EngineToolParser`, on its parser engine).

Gemma 4 writes `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>` (see
`_gemma4`); bare values stay strings unless the tool schema retypes them. The content
before the calls is trimmed, the text after them dropped. vLLM reads the content with
the same table as the reasoning, so a channel left in it is taken off here too (and an
answer that starts with `thought` loses its first part as reasoning).
"""

from __future__ import annotations

from app.render.engines.vllm.answers._engine_reading import read_given
from app.render.engines.vllm.answers._gemma4 import GRAMMAR, with_channel
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "gemma4"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser gemma4` (on the content the
    reasoning parser left)."""
    return read_given(GRAMMAR, with_channel(text), given)
