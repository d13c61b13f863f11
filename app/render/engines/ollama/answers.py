"""How Ollama's /api/chat reads a model's answer when it renders with a Go template.

With tools in the request, Ollama looks for the tag its template names
(`gotemplate.runner.tool_call_tag`) and reads JSON objects after it (`tools.ToolsParser`);
without tools it sends the text as it is. A template that does not mention `.Tools` is a
model without tools: Ollama refuses a request that offers some. The answer is read as one
chunk (a real stream comes in tokens, and a chunk with content drops its calls).
"""

from __future__ import annotations

import json

from app.render.answer import AnswerReader, ParsedAnswer, ReadContext, ToolCall
from app.render.engines.ollama import choice
from app.render.engines.ollama.gotemplate.runner import tool_call_tag
from app.render.engines.ollama.tools import read_tool_calls

PARSER = "ollama-tools"
#: Ollama's error for tools offered to a model whose template has none.
NO_TOOLS = "registry.ollama.ai/library/model does not support tools"
ONE_CHUNK = (
    "Read as one chunk: Ollama parses the stream token by token, and a token that carries "
    "text before a tool call sends that text and drops the call."
)


class OllamaReader(AnswerReader):
    """Ollama's tools parser for Go templates (no options: the template decides)."""

    def declines(self, context: ReadContext) -> str | None:
        """Ollama reads with the Go template's tag only on the Go template's path."""
        request = context.request
        taken = choice.decide(request.template, request.template_kind)
        if taken.path == "llama-server":
            return (
                "On this path llama-server parses the answer and Ollama passes its message on: "
                "the llama.cpp engine's reading applies."
            )
        if taken.path != "go-template":
            return f"Ollama's {taken.name} parser is not modelled here yet."
        return None

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The message /api/chat returns for `completion`."""
        request = context.request
        taken = choice.decide(request.template, request.template_kind)
        if not request.tools:
            return ParsedAnswer(PARSER, content=completion)
        assert taken.go_template is not None
        tag = tool_call_tag(taken.go_template, context.limits)
        if tag is None:
            return ParsedAnswer(PARSER, error=NO_TOOLS)
        names = [
            str((tool.get("function") or {}).get("name", ""))
            for tool in request.tools
            if isinstance(tool, dict)
        ]
        content, calls = read_tool_calls(tag, names, [completion])
        notes = (f"Ollama's tool-call tag for this template: {tag!r}.", ONE_CHUNK)
        return ParsedAnswer(
            PARSER,
            content=content,
            tool_calls=tuple(
                ToolCall(name, json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))
                for name, arguments in calls
            ),
            notes=notes,
        )
