"""What the autoparser's analysis finds (common/chat-diff-analyzer.cpp): its records.

Below `analyzer` and `tool_analysis` (which fill them), and the modules that correct
them or read them (`workarounds`, `tool_functions`, `tool_markers`, `tool_sections`),
so that none of them imports another to name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: reasoning_mode and content_mode, by their C++ names.
NONE, TAG_BASED, TOOLS_ONLY = "NONE", "TAG_BASED", "TOOLS_ONLY"
PLAIN, ALWAYS_WRAPPED, WRAPPED_WITH_REASONING = "PLAIN", "ALWAYS_WRAPPED", "WRAPPED_WITH_REASONING"


#: tool_format_analysis' modes, by their C++ names (and NONE, above).
JSON_NATIVE, TAG_WITH_JSON, TAG_WITH_TAGGED = "JSON_NATIVE", "TAG_WITH_JSON", "TAG_WITH_TAGGED"


@dataclass
class ToolAnalysis:
    """analyze_tools: tool_format_analysis, tool_function_analysis, arguments, call id."""

    mode: str = NONE
    section_start: str = ""
    section_end: str = ""
    per_call_start: str = ""
    per_call_end: str = ""
    fun_name_is_key: bool = False
    tools_array_wrapped: bool = False
    openai_wrapper_trigger: bool = False
    function_field: str = "function"
    name_field: str = "name"
    args_field: str = "arguments"
    id_field: str = ""
    gen_id_field: str = ""
    parameter_order: list[str] = field(default_factory=list)
    name_prefix: str = ""
    name_suffix: str = ""
    args_separator: str = ""
    close: str = ""
    args_start: str = ""
    args_end: str = ""
    arg_name_prefix: str = ""
    arg_name_suffix: str = ""
    arg_value_prefix: str = ""
    arg_value_suffix: str = ""
    arg_separator: str = ""
    tolerate_intertag_whitespace: bool = False
    call_id_pos: str = "NONE"
    call_id_prefix: str = ""
    call_id_suffix: str = ""

    def markers(self) -> list[str]:
        """The markers in collect_preserved_tokens' order."""
        return [
            self.section_start,
            self.section_end,
            self.per_call_start,
            self.per_call_end,
            self.name_prefix,
            self.name_suffix,
            self.args_separator,
            self.close,
            self.args_start,
            self.args_end,
            self.arg_name_prefix,
            self.arg_name_suffix,
            self.arg_separator,
            self.arg_value_prefix,
            self.arg_value_suffix,
            self.call_id_prefix,
            self.call_id_suffix,
        ]


@dataclass
class Analysis:
    """autoparser: what the analysis found (markers keep their whitespace, as in C++)."""

    caps: dict[str, bool]
    reasoning_mode: str = NONE
    reasoning_start: str = ""
    reasoning_end: str = ""
    content_mode: str = PLAIN
    content_start: str = ""
    content_end: str = ""
    tools: ToolAnalysis = field(default_factory=ToolAnalysis)
    preserved_tokens: list[str] = field(default_factory=list)
    additional_stops: list[str] = field(default_factory=list)

    def content_always_wrapped(self) -> bool:
        """analyze_content::is_always_wrapped."""
        return self.content_mode == ALWAYS_WRAPPED and bool(self.content_start and self.content_end)
