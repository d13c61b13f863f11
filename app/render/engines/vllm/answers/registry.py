"""vLLM 0.33.0's answer parsers by the names its server flags take: one explicit table
each, as vLLM's own `ToolParserManager` and `ReasoningParserManager` keep them.

Every parser is `extract(text, given)` (`base.ParserInput`); the sets below say what
vLLM's chat API does differently around some of them.
"""

from __future__ import annotations

from collections.abc import Callable

from app.render.engines.vllm.answers import (
    reasoning_deepseek_r1,
    reasoning_deepseek_v3,
    reasoning_deepseek_v4,
    reasoning_gemma4,
    reasoning_glm45,
    reasoning_granite,
    reasoning_kimi_k3,
    reasoning_openai_gptoss,
    reasoning_qwen3,
    tool_deepseek_v3,
    tool_deepseek_v4,
    tool_deepseek_v31,
    tool_deepseek_v32,
    tool_gemma4,
    tool_glm45,
    tool_granite,
    tool_hermes,
    tool_kimi_k2,
    tool_kimi_k3,
    tool_llama3_json,
    tool_llama4_pythonic,
    tool_minimax_m2,
    tool_mistral,
    tool_openai,
    tool_pythonic,
    tool_qwen3_coder,
)
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction, ToolExtraction

ToolParser = Callable[[str, ParserInput], ToolExtraction]
ReasoningParser = Callable[[str, ParserInput], ReasoningExtraction]

#: `--tool-call-parser NAME`: the parser that reads tool calls out of the content.
TOOL_PARSERS: dict[str, ToolParser] = {
    "deepseek_v3": tool_deepseek_v3.extract,
    "deepseek_v31": tool_deepseek_v31.extract,
    "deepseek_v32": tool_deepseek_v32.extract,
    "deepseek_v4": tool_deepseek_v4.extract,
    "gemma4": tool_gemma4.extract,
    "glm45": tool_glm45.extract,
    "granite": tool_granite.extract,
    "hermes": tool_hermes.extract,
    "kimi_k2": tool_kimi_k2.extract,
    "kimi_k3": tool_kimi_k3.extract,
    "llama3_json": tool_llama3_json.extract,
    "llama4_pythonic": tool_llama4_pythonic.extract,
    "minimax_m2": tool_minimax_m2.extract,
    "mistral": tool_mistral.extract,
    "openai": tool_openai.extract,
    "pythonic": tool_pythonic.extract,
    "qwen3_coder": tool_qwen3_coder.extract,
    # vLLM 0.33.0 registers the same class (`Qwen3EngineToolParser`) under both names.
    "qwen3_xml": tool_qwen3_coder.extract,
}

#: `--reasoning-parser NAME`: the parser that splits the reasoning off the completion.
REASONING_PARSERS: dict[str, ReasoningParser] = {
    "deepseek_r1": reasoning_deepseek_r1.extract,
    "deepseek_v3": reasoning_deepseek_v3.extract,
    "deepseek_v4": reasoning_deepseek_v4.extract,
    "gemma4": reasoning_gemma4.extract,
    "glm45": reasoning_glm45.extract,
    "granite": reasoning_granite.extract,
    "kimi_k3": reasoning_kimi_k3.extract,
    "openai_gptoss": reasoning_openai_gptoss.extract,
    "qwen3": reasoning_qwen3.extract,
}

#: Reasoning parsers vLLM hands the rendered prompt (they ask whether it closed the
#: thinking): only for these is the prompt rendered.
READS_PROMPT = frozenset({"glm45", "qwen3"})

#: gpt-oss's Harmony parsers, by flag: with either, vLLM reads the completion with one
#: parser for both flags (`tool_openai.read_pair`).
HARMONY_TOOL, HARMONY_REASONING = "openai", "openai_gptoss"

#: Parsers built on vLLM 0.33.0's parser engine (`engine_based_streaming`): with both of a
#: pair on it, a skipped or empty tool reading still removes the tool markup.
ENGINE_BASED_TOOLS = frozenset(
    {"deepseek_v32", "deepseek_v4", "gemma4", "glm45", "granite", "kimi_k2", "minimax_m2",
     "mistral", "qwen3_coder", "qwen3_xml"}
)  # fmt: skip
ENGINE_BASED_REASONING = frozenset({"deepseek_v4", "gemma4", "glm45", "qwen3"})
#: Tool parsers whose server composition (vLLM's `KimiK3Parser`) takes the content from
#: the tool parser as an engine-based pair does, whatever the reasoning parser.
CONTENT_FROM_TOOL_PARSER = frozenset({"kimi_k3"})
