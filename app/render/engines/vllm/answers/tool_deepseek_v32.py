"""vLLM's `deepseek_v32` tool parser (0.33.0: `DeepSeekV32EngineToolParser`, on its parser
engine).

DeepSeek V3.2 writes its calls in DSML inside `<｜DSML｜function_calls>` (see `_dsml`);
it has no think markers of its own, so `<think>` and `</think>` stay in the content (the
`deepseek_v3` reasoning parser takes them off first). The content before the calls is
kept as written, and the text after them is dropped.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._dsml import V32
from app.render.engines.vllm.answers._engine_reading import read_tools
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "deepseek_v32"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser deepseek_v32` (on the content
    the reasoning parser left)."""
    return read_tools(
        V32,
        text,
        given.tools,
        suppress=given.tool_choice_none,
        special_tokens=given.special_tokens,
    )
