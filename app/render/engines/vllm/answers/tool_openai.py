"""vLLM's `openai` tool parser (0.33.0, `GptOssToolParser`) for gpt-oss's Harmony format.

In vLLM 0.33.0 it is a stub: `extract_tool_calls` raises NotImplementedError, and on a
gpt-oss model the flag only switches on the tool part of the one `HarmonyParser` that
reads the whole completion (`_harmony_reading`). `extract` here is that parser with the
tool part on and the reasoning part off, as `--tool-call-parser openai` alone sets it:
the calls, and `final` / plain `commentary` text as content (the analysis is dropped).
With `--reasoning-parser openai_gptoss` too, read both at once with `read_pair`.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._harmony_reading import HarmonyReading, read
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "openai"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """The Harmony parser's tool calls and content for `text` (tool part on only)."""
    reading = read(text, reasoning_parser=False, tool_parser=True)
    return ToolExtraction(
        tools_called=bool(reading.tool_calls),
        tool_calls=reading.tool_calls,
        content=reading.content,
        notes=reading.notes,
    )


def read_pair(text: str, *, reasoning_parser: bool, tool_parser: bool) -> HarmonyReading:
    """`HarmonyParser.parse` with the flags as set: what vLLM returns for a gpt-oss model
    when either `--tool-call-parser openai` or `--reasoning-parser openai_gptoss` is on."""
    return read(text, reasoning_parser=reasoning_parser, tool_parser=tool_parser)
