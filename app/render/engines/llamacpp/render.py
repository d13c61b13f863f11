"""Render a conversation exactly as llama-server's `POST /apply-template` does.

The render is the prompt of llama.cpp's `common_chat_templates_apply`, ported once in
`apply.templates_apply` (the steps, in llama.cpp's order, are listed there): the same result
the answer parser reads its parser from. A request llama-server refuses is an
`InvalidRequest`; every rewrite that changes the prompt is reported as a sentence in
`rewrites`.
"""

from __future__ import annotations

from typing import Any

from app.problems import TemplateProblem
from app.render.answer import AnswerRequest, ParsedAnswer, ParserOption
from app.render.command_line import CommandContext, CommandLine
from app.render.core import Engine, Render, Rendered, RenderRequest
from app.render.engines.llamacpp import answers as llamacpp_answers
from app.render.engines.llamacpp import commands as llamacpp_commands
from app.render.engines.llamacpp.apply.templates_apply import apply
from app.render.engines.llamacpp.builtins import equivalent_builtin
from app.render.engines.llamacpp.messages import LlamaCppInputError
from app.render.engines.llamacpp.templates_init import template_capabilities
from app.render.limits import RenderLimits, check_template_size

#: (template file, case) pairs of the llama-server recordings that still render
#: differently here, each with its cause; the conformance test checks they do differ.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


class LlamaCppEngine(Engine):
    """llama-server's `/apply-template`: its rewrites, variables and Jinja engine."""

    openai_server = True
    id = "llama.cpp"
    name = "llama.cpp (llama-server)"
    program_name = "llama-server"
    #: The llama-server build whose recorded renders the tests compare against.
    version = "b11434"
    description = (
        "What llama-server (build b11434) returns from /apply-template: its message "
        "rewrites, its template variables and the semantics of its own Jinja engine."
    )

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Render as llama-server would; a request it refuses is an `InvalidRequest`."""
        try:
            return _render(request, limits)
        except LlamaCppInputError as error:
            raise TemplateProblem("InvalidRequest", str(error)) from None

    command_rank = 0

    def capabilities(self, template: str, limits: RenderLimits) -> dict[str, bool]:
        """llama-server's `chat_template_caps`, detected by its probes."""
        check_template_size(template, limits)
        return template_capabilities(template, limits)

    def command_facts(self, template: str, special_tokens: dict[str, str], render: Render) -> dict:
        """The built-in format that writes what the template writes on plain chats."""
        return {"builtin": equivalent_builtin(render, special_tokens.get("bos_token"))}

    def command_lines(self, context: CommandContext) -> list[CommandLine]:
        return llamacpp_commands.command_lines(context)

    def command_notes(self, facts: dict[str, Any]) -> dict[str, str]:
        return llamacpp_commands.command_notes(facts)

    def answer_options(self, request: RenderRequest) -> tuple[ParserOption, ...]:
        """`--reasoning-format` and the request's `parse_tool_calls`."""
        return llamacpp_answers.parser_options(request)

    def read_answer(self, answer: AnswerRequest, limits: RenderLimits) -> ParsedAnswer:
        """The chat format and parser llama-server derives from the template, applied as
        `common_chat_parse` applies it to a finished completion."""
        return llamacpp_answers.read_answer(answer, limits)


def _render(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """The prompt common_chat_templates_apply yields, and the rewrites that shaped it."""
    applied = apply(request, limits)
    return Rendered(applied.prompt, [], list(applied.rewrites))
