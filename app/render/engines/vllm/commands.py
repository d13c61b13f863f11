"""vLLM's command line: its server with the template file (vLLM reads it in Python's text
mode, which turns CR and CRLF into LF; Python's Jinja does the same when it compiles, so
vLLM renders the same) and the content format the playground detects, stated, so that
the server does not detect it again on its own."""

from __future__ import annotations

from app.render.command_line import TEMPLATE_FILE, CommandContext, CommandLine, join


def command_lines(context: CommandContext) -> list[CommandLine]:
    words = ["vllm", "serve", context.hf_id, "--chat-template", TEMPLATE_FILE]
    words += ["--chat-template-content-format", context.facts.get("content_format", "string")]
    return [CommandLine("vllm", "serve", join(words), {TEMPLATE_FILE: context.template})]
