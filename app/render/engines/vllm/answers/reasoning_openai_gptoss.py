"""vLLM's `openai_gptoss` reasoning parser (0.33.0, `GptOssReasoningParser`).

In vLLM 0.33.0 it only marks where reasoning ends: `extract_reasoning` raises
NotImplementedError, and on a gpt-oss model the flag switches on the reasoning part of
the one `HarmonyParser` that reads the whole completion (`_harmony_reading`). `extract`
here is that parser with the reasoning part on and the tool part off, as
`--reasoning-parser openai_gptoss` alone sets it: the `analysis` channel is reasoning,
`final` and plain `commentary` text content, and calls to functions are dropped. With
`--tool-call-parser openai` too, read both at once with `tool_openai.read_pair`.
"""

from __future__ import annotations

from app.render.engines.vllm.answers._harmony_reading import read
from app.render.engines.vllm.answers.base import ParserInput, ReasoningExtraction

NAME = "openai_gptoss"


def extract(text: str, given: ParserInput) -> ReasoningExtraction:
    """The Harmony parser's reasoning and content for `text` (reasoning part on only);
    gpt-oss always reasons, so no chat_template_kwargs turns it off."""
    reading = read(text, reasoning_parser=True, tool_parser=False)
    return ReasoningExtraction(reading.reasoning, reading.content, reading.notes)
