"""Runners of Ollama's lfm2 renderer and parser tests (model/renderers/lfm2_test.go,
model/parsers/lfm2_test.go)."""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama import gojson
from app.render.engines.ollama.parsers import lfm2 as parser
from app.render.engines.ollama.parsers import lfm2_calls
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError
from app.render.engines.ollama.renderers import lfm2 as renderer


def calls_text(calls: Any) -> list[str]:
    """Tool calls (ours as (name, arguments), Go's as dicts) compared as Ollama's
    argsComparer does: the name and each argument's JSON."""
    out = []
    for call in calls or []:
        if isinstance(call, dict):
            fn = call["function"]
            call = (fn["name"], fn.get("arguments") or {})
        out.append(call[0] + gojson.marshal(call[1]))
    return out


def render(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestLFM2Renderer_ChatTemplateParity: the case's renderer on its messages."""
    settings = fields.get("renderer") or {}
    render = renderer.make(bool(settings.get("IsThinking")), bool(settings.get("useImgTags")))
    got = render(fields.get("messages") or [], fields.get("tools"), fields.get("thinkValue"))
    return got, fields["expected"]


def images(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestLFM2Renderer_Images: one message with images, no tools, no think value."""
    settings = fields.get("renderer") or {}
    render = renderer.make(bool(settings.get("IsThinking")), bool(settings.get("useImgTags")))
    return render([fields["message"]], None, None), fields["expected"]


def json_formatting(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestLFM2Renderer_JSONFormatting: lfm2JSON of an api.Tool."""
    (tool,) = fields["args"]
    return renderer.lfm2_json(None, gojson.tool(tool)), fields["want"]


def whole(with_calls: bool) -> Any:
    """TestLFM2Parser(_Streaming, _EdgeCases): the input (or chunks) with thinking on or
    off as the model supports it; the calls compared where the test compares them."""

    def run(fields: dict[str, Any]) -> tuple[Any, Any]:
        chunks = fields.get("chunks") or [fields["input"]]
        think = fields.get("hasThinking", False)
        message = parser.parse_chunks(chunks, think, [], think)
        got = {"content": message.content, "thinking": message.thinking}
        want = {
            "content": fields.get("expectedContent", ""),
            "thinking": fields.get("expectedThinking", ""),
        }
        if with_calls:
            got["calls"] = calls_text(message.tool_calls)
            want["calls"] = calls_text(fields.get("expectedCalls"))
        return got, want

    return run


def calls(first_only: bool) -> Any:
    """TestLFM2Parser_parseToolCall(s)Content: the calls read (or the first), or an error."""

    def run(fields: dict[str, Any]) -> tuple[Any, Any]:
        try:
            found = lfm2_calls.parse_calls(fields["content"])
        except ToolCallError:
            return "error", "error" if fields.get("expectError") else "calls"
        if fields.get("expectError"):
            return calls_text(found), "error"
        want = [fields["expected"]] if first_only else fields["expected"]
        return calls_text(found[:1] if first_only else found), calls_text(want)

    return run


def images_kept(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestLFM2Parser_ImagePlaceholdersPreserved: with a `bash` tool and thinking off, the
    input is all content: no thinking, no calls."""
    tools = [{"type": "function", "function": {"name": "bash"}}]
    message = parser.parse_chunks([fields["input"]], False, tools, False)
    got = (message.content, message.thinking, len(message.tool_calls))
    return got, (fields["input"], "", 0)
