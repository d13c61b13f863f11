"""The autoparser's per-family corrections, applied after the analysis, in llama.cpp's order.

common/chat-diff-analyzer.cpp keeps a list of `workarounds`: templates whose probes
mislead the analysis are recognised by a string in their source, and the markers are
set by hand. The message-delimiter fixes (Fireworks, Solar Open, Apriel 1.6) are left
out: delimiters do not take part in parsing.
"""

from __future__ import annotations

from app.render.engines.llamacpp.answers.analysis import Analysis
from app.render.engines.llamacpp.answers.diffing import trim
from app.render.engines.llamacpp.reasoning_workarounds import (
    is_granite,
    is_nemotron_v2,
    is_old_qwen,
    tags_after_workarounds,
)

_FUNCTIONARY = (
    'set has_code_interpreter = tools | selectattr("type", "equalto", '
    '"code_interpreter") | list | length > 0'
)
_R1_DISTILL = (
    "{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + "
    "'<｜tool▁sep｜>'"
)


def apply_workarounds(source: str, analysis: Analysis) -> None:
    """Every workaround whose template string is in `source`, in the C++ list's order."""
    tools = analysis.tools
    found_none = analysis.reasoning_mode == "NONE"
    # The tags, set by four of the workarounds below (none of the others reads them).
    analysis.reasoning_start, analysis.reasoning_end = tags_after_workarounds(
        source, analysis.reasoning_start, analysis.reasoning_end, found_none=found_none
    )
    if is_old_qwen(source) and found_none:
        # Old Qwen/DeepSeek templates that cut reasoning from the history.
        analysis.reasoning_mode = "TAG_BASED"
        analysis.preserved_tokens += ["<think>", "</think>"]
    if is_granite(source):
        analysis.reasoning_mode = "TAG_BASED"
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
    if is_nemotron_v2(source):
        tools.mode = "JSON_NATIVE"
        tools.section_start = tools.section_end = ""
        tools.per_call_start, tools.per_call_end = "<TOOLCALL>", "</TOOLCALL>"
        tools.tools_array_wrapped = True
        analysis.content_mode, analysis.content_start, analysis.content_end = "PLAIN", "", ""
        analysis.reasoning_mode = "TAG_BASED"
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
