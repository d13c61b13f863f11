"""The autoparser's per-family corrections, applied after the analysis, in llama.cpp's order.

common/chat-diff-analyzer.cpp keeps a list of `workarounds`: templates whose probes
mislead the analysis are recognised by a string in their source, and the markers are
set by hand. The message-delimiter fixes (Fireworks, Solar Open, Apriel 1.6) are left
out: delimiters do not take part in parsing. The ones that set the reasoning mode and
tags (`reasoning_workarounds`) also decide the render's thinking default and prefill.
"""

from __future__ import annotations

from app.render.engines.llamacpp.autoparser.analysis import NONE, TAG_BASED, Analysis
from app.render.engines.llamacpp.autoparser.diffing import trim

_GRANITE = (
    "Write your thoughts between <think></think> and write your response between "
    "<response></response>"
)
_NEMOTRON_V2 = ("<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<TOOL_RESPONSE>")

_FUNCTIONARY = (
    'set has_code_interpreter = tools | selectattr("type", "equalto", '
    '"code_interpreter") | list | length > 0'
)
_R1_DISTILL = (
    "{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + "
    "'<｜tool▁sep｜>'"
)


def _is_old_qwen(source: str) -> bool:
    """Old Qwen/DeepSeek templates that cut reasoning out of the history (still <think>)."""
    return (
        "content.split('</think>')" in source
        and "reasoning_content" not in source
        and "<SPECIAL_12>" not in source
    )


def _is_granite(source: str) -> bool:
    """Granite 3.3: it names its <think> and <response> tags in its system prompt."""
    return _GRANITE in source


def _is_nemotron_v2(source: str) -> bool:
    """Nemotron Nano v2: its <SPECIAL_..> markers and <TOOL_RESPONSE>."""
    return all(marker in source for marker in _NEMOTRON_V2)


def reasoning_workarounds(source: str, analysis: Analysis) -> None:
    """The workarounds' part that sets the reasoning mode and tags, in the C++ order.

    Only when the analysis found no reasoning (mode NONE) do old Qwen/DeepSeek
    templates, which cut reasoning out of the history, get <think> tags. The tags keep
    their whitespace: the prefill writes the start tag as it is.
    """
    if _is_old_qwen(source) and analysis.reasoning_mode == NONE:
        analysis.reasoning_mode = TAG_BASED
        analysis.reasoning_start, analysis.reasoning_end = "<think>", "</think>"
    if _is_granite(source):
        analysis.reasoning_mode = TAG_BASED
        analysis.reasoning_start, analysis.reasoning_end = "<think>", "</think>"
    if _is_nemotron_v2(source):
        analysis.reasoning_mode = TAG_BASED
        # The opener keeps its newline.
        analysis.reasoning_start, analysis.reasoning_end = "<think>\n", "</think>"
    if "laguna_glm_thinking" in source:
        # Laguna's rendered tags carry newlines.
        analysis.reasoning_start = trim(analysis.reasoning_start)
        analysis.reasoning_end = trim(analysis.reasoning_end)


def apply_workarounds(source: str, analysis: Analysis) -> None:
    """Every workaround whose template string is in `source`, in the C++ list's order."""
    tools = analysis.tools
    found_none = analysis.reasoning_mode == NONE
    reasoning_workarounds(source, analysis)
    if _is_old_qwen(source) and found_none:
        analysis.preserved_tokens += ["<think>", "</think>"]
    if _is_granite(source):
        analysis.content_mode = "WRAPPED_WITH_REASONING"
        analysis.content_start, analysis.content_end = "<response>", "</response>"
        analysis.preserved_tokens += ["<think>", "</think>", "<response>", "</response>"]
    if (
        "<|CHATBOT_TOKEN|>" in source
        and "<|END_OF_TURN_TOKEN|>" in source
        and not analysis.content_start
    ):
        analysis.content_mode = "ALWAYS_WRAPPED"
        analysis.content_start, analysis.content_end = "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"
        analysis.preserved_tokens += ["<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"]
    if _FUNCTIONARY in source:
        analysis.content_mode, analysis.content_end = "PLAIN", ""
        tools.name_prefix = tools.section_start = tools.section_end = tools.close = ""
        tools.per_call_start, tools.per_call_end = "<function=", "</function>"
        analysis.preserved_tokens = ["<|eot_id|>", "<|eom_id|>", "<function=", ">", "</function>"]
    if _R1_DISTILL in source:
        tools.section_start, tools.section_end = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
        tools.per_call_start = "<｜tool▁call▁begin｜>function"
        tools.name_prefix = "<｜tool▁sep｜>"
        tools.per_call_end, tools.close = "<｜tool▁call▁end｜>", "```"
    if _is_nemotron_v2(source):
        tools.mode = "JSON_NATIVE"
        tools.section_start = tools.section_end = ""
        tools.per_call_start, tools.per_call_end = "<TOOLCALL>", "</TOOLCALL>"
        tools.tools_array_wrapped = True
        analysis.content_mode, analysis.content_start, analysis.content_end = "PLAIN", "", ""
        analysis.preserved_tokens = ["<SPECIAL_11>", "</think>", "<TOOLCALL>", "</TOOLCALL>"]
    if (
        'Respond in the format {"name": function name' in source
        and "Do not use variables." in source
    ):
        tools.openai_wrapper_trigger = True
    if "laguna_glm_thinking" in source:
        tools.arg_value_prefix = trim(tools.arg_value_prefix)
        tools.arg_value_suffix = trim(tools.arg_value_suffix)
        tools.arg_separator = trim(tools.arg_separator)
        tools.tolerate_intertag_whitespace = True
        analysis.additional_stops.append("</assistant>")
    if "Bailing V3 chat template" in source:
        tools.arg_value_suffix = trim(tools.arg_value_suffix)
        tools.tolerate_intertag_whitespace = True
