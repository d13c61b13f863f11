"""Runners of Ollama's gemma4 parser tests (model/parsers/gemma4_test.go)."""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama.gojson import marshal
from app.render.engines.ollama.parsers import gemma4, gemma4_args


def _calls(calls: Any) -> list[str]:
    """Tool calls (ours as (name, arguments), Go's as dicts) as comparable text."""
    out = []
    for call in calls or []:
        if isinstance(call, dict):
            fn = call["function"]
            call = (fn["name"], fn.get("arguments") or {})
        out.append(call[0] + marshal(call[1]))
    return out


def parser(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestGemma4Parser: one whole answer, with thinking on or off and a last message."""
    message = gemma4.parse_after(
        fields["input"], None, fields.get("thinkingEnabled", False), fields.get("lastMessage")
    )
    got = (message.content, message.thinking, _calls(message.tool_calls))
    want = (
        fields.get("expectedContent", ""),
        fields.get("expectedThinking", ""),
        _calls(fields.get("expectedToolCalls")),
    )
    return got, want


def chunks(thinking: bool, with_calls: bool) -> Any:
    """A test that feeds chunks: the chunks joined, read at once."""

    def run(fields: dict[str, Any]) -> tuple[Any, Any]:
        message = gemma4.parse_after("".join(fields["chunks"]), None, thinking, None, thinking)
        got: dict[str, Any] = {"content": message.content}
        want: dict[str, Any] = {"content": fields.get("expectedContent", "")}
        if thinking:
            got["thinking"] = message.thinking
            want["thinking"] = fields.get("expectedThinking", "")
        if with_calls and "expectedToolCalls" in fields:
            got["calls"] = _calls(message.tool_calls)
            want["calls"] = _calls(fields["expectedToolCalls"])
        return got, want

    return run


def unit(function: str, *names: str) -> Any:
    """A helper of gemma4_args on the case's fields; want `expected`."""

    def run(fields: dict[str, Any]) -> tuple[Any, Any]:
        return getattr(gemma4_args, function)(*(fields[n] for n in names)), fields["expected"]

    return run


def raw_terminal(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestRepairGemma4RawTerminalStringValue: the repaired text, or none."""
    got = gemma4_args.raw_terminal_string_value(
        fields["input"], fields["toolName"], fields["tools"] or []
    )
    return (got is not None, got or ""), (fields["expectedOK"], fields.get("expected", ""))


def tool_call(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestParseGemma4ToolCall_Repairs...: one call's text read (and repaired)."""
    name, arguments = gemma4.parse_tool_call(fields["content"], fields["tools"])
    return _calls([(name, arguments)]), _calls([fields["want"]])
