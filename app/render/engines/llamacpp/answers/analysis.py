"""What the autoparser's analysis finds (common/chat-diff-analyzer.cpp): its record.

Below `analyzer` (which fills it) and `workarounds` (which corrects it), so that neither
imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.render.engines.llamacpp.answers.tool_analysis import ToolAnalysis

#: reasoning_mode and content_mode, by their C++ names.
NONE, TAG_BASED, TOOLS_ONLY = "NONE", "TAG_BASED", "TOOLS_ONLY"
PLAIN, ALWAYS_WRAPPED, WRAPPED_WITH_REASONING = "PLAIN", "ALWAYS_WRAPPED", "WRAPPED_WITH_REASONING"


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
