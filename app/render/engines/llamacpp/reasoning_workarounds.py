"""The autoparser's workarounds that set the reasoning tags, for the render and the parser.

common/chat-diff-analyzer.cpp corrects its analysis with a list of `workarounds` that
recognise a template by strings in its source. Four of them set the reasoning tags; the
render (its prefill writes the start tag as it is) and the answer parser (which reads
with the tags) both need them, so they live here, below both, once.
"""

from __future__ import annotations

from app.render.engines.llamacpp.whitespace import trim

_GRANITE = (
    "Write your thoughts between <think></think> and write your response between "
    "<response></response>"
)
_NEMOTRON_V2 = ("<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<TOOL_RESPONSE>")


def is_old_qwen(source: str) -> bool:
    """Old Qwen/DeepSeek templates that cut reasoning out of the history (still <think>)."""
    return (
        "content.split('</think>')" in source
        and "reasoning_content" not in source
        and "<SPECIAL_12>" not in source
    )


def is_granite(source: str) -> bool:
    """Granite 3.3: it names its <think> and <response> tags in its system prompt."""
    return _GRANITE in source


def is_nemotron_v2(source: str) -> bool:
    """Nemotron Nano v2: its <SPECIAL_..> markers and <TOOL_RESPONSE>."""
    return all(marker in source for marker in _NEMOTRON_V2)


def tags_after_workarounds(source: str, start: str, end: str, found_none: bool) -> tuple[str, str]:
    """The reasoning tags after the four workarounds, in the C++ list's order.

    `found_none`: the analysis found no reasoning (its mode is NONE); only then do old
    Qwen/DeepSeek templates, which cut reasoning out of the history, get <think> tags.
    """
    if is_old_qwen(source) and found_none:
        start, end = "<think>", "</think>"
    if is_granite(source):
        start, end = "<think>", "</think>"
    if is_nemotron_v2(source):
        start, end = "<think>\n", "</think>"  # the opener keeps its newline
    if "laguna_glm_thinking" in source:
        start, end = trim(start), trim(end)  # Laguna's rendered tags carry newlines
    return start, end
