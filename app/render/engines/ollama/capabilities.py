"""What a chat template and a Go template can do, as Ollama compares them to choose one.

Facts read in ollama/ollama `server/images.go` at
fb30760996871fa9460115c753afd2c60d4ab0f7 (2026-08-21):

- A GGUF's chat template (Jinja) supports tools when its text contains "tools" or
  "tool_call"; thinking when it contains both "<think>" and "</think>", or splits content
  at "</think>" (in either quote) without mentioning "reasoning_content" or
  "<SPECIAL_12>". A tool round trip: tools, "tool_calls" or "assistant_tool_call", and one
  of the tool-result spellings in `_JINJA_TOOL_RESULTS`.
- A Go template supports tools when its actions use `.Tools`, insert with `.Suffix`,
  thinking when a `.Thinking` inside a `range` over `.Messages` has text around it
  (`thinking.InferTags`; read here as: it uses both, which gives InferTags' answer on
  Ollama's 20 index templates and the 97 of `@huggingface/ollama-utils` 0.0.18, 3 of
  them thinking, checked with Go's parser; the Go worker's parse is the exact one). A
  tool round trip: `.Tools` and `.ToolCalls`, and `eq .Role "tool"`, "tool_response" or
  "TOOL_RESULTS" in its text.
- `shouldPreferChatTemplate`: the chat template wins when it has more capabilities (unless
  only the Go template has a round trip), or the same ones with tools on both sides and
  only the chat template has a round trip.
"""

from __future__ import annotations

from app.render.engines.ollama.template.vars import template_vars

TOOLS, THINKING, INSERT = "tools", "thinking", "insert"
_JINJA_TOOL_RESULTS = (
    "tool_response",
    "tool_results",
    "role'] == 'tool'",
    'role\'] == "tool"',
    "role\"] == 'tool'",
    'role"] == "tool"',
    "message.role == 'tool'",
    'message.role == "tool"',
    "ipython",
)


def chat_template_capabilities(jinja: str) -> tuple[str, ...]:
    """`chatTemplateCapabilities`: tools and thinking, in Ollama's order."""
    found = []
    if _jinja_tools(jinja):
        found.append(TOOLS)
    if _jinja_thinking(jinja):
        found.append(THINKING)
    return tuple(found)


def _jinja_tools(jinja: str) -> bool:
    return "tools" in jinja or "tool_call" in jinja


def _jinja_thinking(jinja: str) -> bool:
    if "<think>" in jinja and "</think>" in jinja:
        return True
    splits = "content.split('</think>')" in jinja or 'content.split("</think>")' in jinja
    return splits and "reasoning_content" not in jinja and "<SPECIAL_12>" not in jinja


def chat_template_round_trip(jinja: str) -> bool:
    """`chatTemplateHasToolRoundTrip`: tools, tool calls and tool results all written."""
    if not _jinja_tools(jinja):
        return False
    calls = "tool_calls" in jinja or "assistant_tool_call" in jinja
    return calls and any(spelling in jinja for spelling in _JINJA_TOOL_RESULTS)


def go_template_capabilities(go_template: str) -> tuple[str, ...]:
    """`goTemplateCapabilities`: tools, insert and thinking, in Ollama's order."""
    names = template_vars(go_template)
    found = [TOOLS] if "tools" in names else []
    found += [INSERT] if "suffix" in names else []
    found += [THINKING] if {"thinking", "messages"} <= names else []
    return tuple(found)


def go_template_round_trip(go_template: str) -> bool:
    """`goTemplateHasToolRoundTrip`: `.Tools`, `.ToolCalls` and a tool-result spelling."""
    names = template_vars(go_template)
    if not {"tools", "toolcalls"} <= names:
        return False
    spellings = ('eq .Role "tool"', "tool_response", "TOOL_RESULTS")
    return any(spelling in go_template for spelling in spellings)


def prefers_chat_template(jinja: str, go_template: str) -> bool:
    """`shouldPreferChatTemplate`: whether the GGUF's chat template wins over the Go one."""
    chat, go = chat_template_capabilities(jinja), go_template_capabilities(go_template)
    if len(chat) > len(go):
        return not go_template_round_trip(go_template) or chat_template_round_trip(jinja)
    if set(chat) != set(go) or TOOLS not in chat:
        return False
    return chat_template_round_trip(jinja) and not go_template_round_trip(go_template)


def listed(capabilities: tuple[str, ...]) -> str:
    """Capabilities in words, as the sentences comparing two templates say them."""
    return " and ".join(capabilities) if capabilities else "no tools and no thinking"
