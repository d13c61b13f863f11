"""Runners of Ollama's olmo3 renderer and parser tests (model/renderers/olmo3_test.go,
olmo3_think_test.go, model/parsers/olmo3_test.go, olmo3_think_test.go)."""

from __future__ import annotations

from typing import Any

from app.render.engines.ollama.parsers import olmo3 as parser
from app.render.engines.ollama.parsers import olmo3_calls
from app.render.engines.ollama.parsers.message import read_stream
from app.render.engines.ollama.parsers.qwen3coder import ToolCallError
from app.render.engines.ollama.renderers import olmo3 as renderer
from oracles.ollama.run_lfm2 import calls_text

#: The think renderer's Variant constants -> whether it is Olmo3Think32B.
VARIANTS = {"Olmo31Think": False, "Olmo3Think32B": True}


def render(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestOlmo3Renderer: Olmo3Renderer{} (olmo3's default system message), no think."""
    got = renderer.make(extended=False)(fields.get("msgs") or [], fields.get("tools"), None)
    return got, fields["expected"]


def render_think(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestOlmo3ThinkRenderer: the case's variant."""
    make = renderer.make_think(VARIANTS[fields["variant"]])
    return make(fields.get("msgs") or [], fields.get("tools"), None), fields["expected"]


def stream(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestOlmo3Parser(_Streaming): the input (or chunks) added, then an empty done."""
    chunks = fields.get("chunks") or [fields["input"]]
    message = read_stream(parser.Stream(), [*chunks, ""])
    got = {"content": message.content, "calls": calls_text(message.tool_calls)}
    want = {
        "content": fields.get("expectedContent", ""),
        "calls": calls_text(fields.get("expectedCalls")),
    }
    if "input" in fields:  # TestOlmo3Parser also compares the thinking
        got["thinking"], want["thinking"] = message.thinking, fields.get("expectedThinking", "")
    return got, want


def function_calls(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestParseOlmo3FunctionCalls: the calls of the text, or an error."""
    try:
        found = calls_text(olmo3_calls.parse_calls(fields["input"]))
    except ToolCallError:
        found = "error"
    return found, "error" if fields.get("wantErr") else calls_text(fields.get("expected"))


def value(fields: list[Any]) -> tuple[Any, Any]:
    """TestParseOlmo3Value: (name, input, expected) as written, compared typed."""
    _, text, expected = fields
    return olmo3_calls.value(text), expected


def think(fields: dict[str, Any]) -> tuple[Any, Any]:
    """TestOlmo3ThinkParser(...): the input (or chunks, the last with done) after Init
    with the case's last message; no tool calls."""
    chunks = fields.get("chunks") or [fields["input"]]
    message = read_stream(parser.ThinkStream(fields.get("lastMessage")), chunks)
    got = (message.content, message.thinking, len(message.tool_calls))
    return got, (fields.get("expectedContent", ""), fields.get("expectedThinking", ""), 0)
