"""vLLM's `deepseek_v4` tool parser (0.33.0: `DeepSeekV4EngineToolParser`, on its parser
engine).

DeepSeek V4 writes DSML calls inside `<｜DSML｜tool_calls>` (vLLM also takes
`<｜DSML｜toolcalls>` and `<｜DSML｜tool>`; see `_dsml`), and the same table holds its
`<think>` markers: a think block in the content is dropped when a reasoning parser is
configured, kept as text when none is. The content before the calls is kept as written,
the text after them dropped.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._dsml import V4, v4_thinking
from app.render.engines.vllm.answers._engine_reading import read_given
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "deepseek_v4"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser deepseek_v4`; `given.kwargs` are the
    request's chat_template_kwargs."""
    return read_given(V4[v4_thinking(given.kwargs)], text, given)
