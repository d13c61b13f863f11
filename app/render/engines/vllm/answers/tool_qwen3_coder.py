"""vLLM's `qwen3_coder` tool parser (0.33.0: `Qwen3EngineToolParser`, the Qwen3 parser engine).

Reads `<tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call>`
(`_qwen3_xml`); `qwen3_coder` and `qwen3_xml` name the same class in vLLM 0.33.0. The
content is the text before the first call, stripped; a call whose markup is cut off
still counts once its name has been read.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._qwen3_xml import read_qwen3_tools
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "qwen3_coder"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser qwen3_coder`."""
    return read_qwen3_tools(text, given)
