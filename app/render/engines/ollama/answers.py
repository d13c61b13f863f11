"""How Ollama's /api/chat reads a model's answer when it renders with a Go template.

With tools in the request, Ollama looks for the tag its template names
(`gotemplate.runner.tool_call_tag`) and reads JSON objects after it (`tools.ToolsParser`);
without tools it sends the text as it is. A template that does not mention `.Tools` is a
model without tools: Ollama refuses a request that offers some. The answer is read as one
chunk (a real stream comes in tokens, and a chunk with content drops its calls).
"""

from __future__ import annotations

import json
from dataclasses import replace

from app.problems import TemplateProblem
from app.render.answer import AnswerReader, ParsedAnswer, ReadContext, ToolCall
from app.render.engines.ollama import choice
from app.render.engines.ollama.chat_checks import THINK_LEVELS, chat_think
from app.render.engines.ollama.engine_facts import capabilities, family, renderer, with_model
from app.render.engines.ollama.family import HARMONY
from app.render.engines.ollama.gotemplate.runner import thinking_tags, tool_call_tag
from app.render.engines.ollama.messages import think_value
from app.render.engines.ollama.named_parser import cut_at_stop, parser_name, read_named, unknown
from app.render.engines.ollama.thinking import ThinkingParser
from app.render.engines.ollama.tools import read_tool_calls
from app.render.render_request import RenderRequest

PARSER = "ollama-tools"
ONE_CHUNK = (
    "Read as one chunk: Ollama parses the stream token by token, and a token that carries "
    "text before a tool call sends that text and drops the call."
)


HARMONY_WHY = "Ollama uses Harmony for this gpt-oss model"


def _taken(request: RenderRequest) -> choice.OllamaPath:
    """The way Ollama renders the request's model (its family known or not)."""
    return choice.decide(
        request.template, request.template_kind, renderer(request), family=family(request)
    )


class OllamaReader(AnswerReader):
    """Ollama's tools parser for Go templates (no options: the template decides)."""

    def declines(self, context: ReadContext) -> str | None:
        """Ollama reads with the Modelfile's PARSER when it names one, else with the Go
        template's tag only on the Go template's path."""
        request = context.request
        if (name := parser_name(request)) is not None:
            return unknown(name)
        taken = _taken(request)
        if taken.harmony:
            return None
        if taken.path == "llama-server":
            return (
                "On this path llama-server parses the answer and Ollama passes its message on: "
                "the llama.cpp engine's reading applies."
            )
        if taken.path != "go-template":
            return f"Ollama's {taken.name} parser is not modelled here yet."
        return None

    def read(self, completion: str, context: ReadContext) -> ParsedAnswer:
        """The message /api/chat returns for `completion`: its thinking split off at the
        template's tags when thinking is on, then its tool calls read; or what the
        Modelfile's PARSER reads. Either reads the answer cut at the first stop string."""
        request, _ = with_model(context.request)
        completion, stopped = cut_at_stop(request, completion)
        if (name := parser_name(request)) is not None:
            parsed = read_named(name, request, completion)
            return replace(parsed, notes=(*stopped, *parsed.notes))
        taken = _taken(request)
        if taken.harmony:
            parsed = read_named(HARMONY, request, completion, HARMONY_WHY)
            return replace(parsed, notes=(*stopped, *parsed.notes))
        template = taken.go_template
        assert template is not None
        try:
            think = chat_think(
                template,
                request.tools,
                think_value(request.kwargs),
                context.limits,
                capabilities(request),
            )
        except TemplateProblem as refused:
            return ParsedAnswer(PARSER, error=refused.message)
        thinking, completion = split_thinking(template, think, completion, context)
        if not request.tools:
            return ParsedAnswer(
                PARSER, content=completion, reasoning_content=thinking, notes=stopped
            )
        tag = tool_call_tag(template, context.limits)
        assert tag is not None  # chat_think refuses tools to a template without them
        names = [
            str((tool.get("function") or {}).get("name", ""))
            for tool in request.tools
            if isinstance(tool, dict)
        ]
        content, calls = read_tool_calls(tag, names, [completion])
        notes = (*stopped, f"Ollama's tool-call tag for this template: {tag!r}.", ONE_CHUNK)
        return ParsedAnswer(
            PARSER,
            content=content,
            reasoning_content=thinking,
            tool_calls=tuple(
                ToolCall(name, json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))
                for name, arguments in calls
            ),
            notes=notes,
        )


def split_thinking(
    template: str, think: bool | str | None, completion: str, context: ReadContext
) -> tuple[str | None, str]:
    """The thinking and the rest of `completion`, as /api/chat splits them: only with
    thinking on and the template's tags (None: no thinking field)."""
    tags = thinking_tags(template, context.limits)
    if tags is None or not (think is True or think in THINK_LEVELS):
        return None, completion
    parser = ThinkingParser(*tags)
    if (context.prompt or "").strip().endswith(tags[0]):
        parser.add(tags[0])  # the prompt opened the thinking already
    thinking, content = parser.add(completion)
    return thinking or None, content
