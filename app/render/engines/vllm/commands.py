"""vLLM's command line: its server with the template file (vLLM reads it in Python's text
mode, which turns CR and CRLF into LF; Python's Jinja does the same when it compiles, so
vLLM renders the same), the content format the playground detects, stated, so that
the server does not detect it again on its own, and the answer parsers: the ones chosen
in the Response view, else the pair that fits the template (vLLM picks none itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.render.command_line import TEMPLATE_FILE, CommandContext, CommandLine, CommandWriter, join
from app.render.core import RenderRequest
from app.render.engines.vllm.answers import READER
from app.render.engines.vllm.content_format import detect_content_format

if TYPE_CHECKING:  # only `facts` names it, in its signature
    from app.render.command_line import Render


def command_lines(context: CommandContext) -> list[CommandLine]:
    words = ["vllm", "serve", context.hf_id, "--chat-template", TEMPLATE_FILE]
    words += ["--chat-template-content-format", context.facts.get("content_format", "string")]
    parsers = dict(context.facts.get("vllm_parsers", {}))
    choices = context.facts.get("vllm_parser_choices", {})
    for name, value in context.parsers.get("vllm", {}).items():
        if value in choices.get(name, ()):  # a value vLLM does not know stays out
            parsers[name] = value
    tool_parser = parsers.get("tool_call_parser", "none")
    if tool_parser != "none":
        words += ["--enable-auto-tool-choice", "--tool-call-parser", tool_parser]
    if (reasoning_parser := parsers.get("reasoning_parser", "none")) != "none":
        words += ["--reasoning-parser", reasoning_parser]
    return [CommandLine("vllm", "serve", join(words), {TEMPLATE_FILE: context.template})]


def facts(template: str, special_tokens: dict[str, str], render: Render) -> dict[str, Any]:
    """The content format its server is told (what it would detect), and the parsers
    that fit the template (`--tool-call-parser`, `--reasoning-parser`)."""
    options = READER.options(RenderRequest(template=template, messages=[]))
    return {
        "content_format": detect_content_format(template),
        "vllm_parsers": {option.name: option.default for option in options},
        "vllm_parser_choices": {option.name: list(option.choices) for option in options},
    }


WRITER = CommandWriter(rank=10, lines=command_lines, facts=facts)
