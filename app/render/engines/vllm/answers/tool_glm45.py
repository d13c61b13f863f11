"""vLLM's `glm45` tool parser (0.33.0: `Glm47MoeModelToolParser`, the same as `glm47`).

GLM writes a call as `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...
</tool_call>`. vLLM strips the name and keeps the call only when the request declares a
tool of that name; the values are strings unless the tool schema types them. The content
is the text before the first call, stripped; text after the calls is dropped.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._engine_reading import read_given
from app.render.engines.vllm.answers._glm_grammar import GRAMMARS, thinking_on
from app.render.engines.vllm.answers.base import ParserInput, ToolExtraction

NAME = "glm45"


def extract(text: str, given: ParserInput) -> ToolExtraction:
    """vLLM's `extract_tool_calls` for `--tool-call-parser glm45` (on the content after
    the reasoning parser; `given.kwargs` are the request's chat_template_kwargs)."""
    return read_given(GRAMMARS[thinking_on(given.kwargs)], text, given)
