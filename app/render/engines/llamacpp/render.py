"""Render a conversation exactly as llama-server's `POST /apply-template` does.

The steps, in llama.cpp's order (tools/server/server-common.cpp
`oaicompat_chat_params_parse`, then common/chat.cpp `common_chat_templates_apply_jinja`
and `common_chat_template_direct_apply_impl`):

1. the request is parsed into llama.cpp's own messages (`messages`);
2. a final assistant message is continued, not closed (prefill): it is taken out,
   the rest is rendered without a generation prompt, and the continuation is written
   after it, by the template's handler or from the reasoning tags the autoparser
   finds (`handlers`, `answers.autoparser_cache`);
3. the capability-dependent rewrites run (developer→system, system merge, object
   arguments, ...), with the capabilities llama.cpp detects (`capabilities`);
4. the template renders with llama.cpp's variables — `enable_thinking` (true when the
   template supports thinking, unless the kwargs say otherwise), `datetime`
   ("%b %d %Y"), `date_string` ("%d %b %Y"),
   `bos_token`/`eos_token`, `add_generation_prompt` only when true — in an
   environment with llama.cpp's Jinja semantics (`jinja`);
5. a BOS at the start and an EOS at the end are cut when the vocabulary adds them.

Every rewrite that changes the prompt is reported as a sentence in `rewrites`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from app.problems import TemplateProblem
from app.render.answer import AnswerRequest, ParsedAnswer, ParserOption
from app.render.command_line import CommandContext, CommandLine
from app.render.core import Engine, Render, Rendered, RenderRequest
from app.render.engines.llamacpp import answers as llamacpp_answers
from app.render.engines.llamacpp import commands as llamacpp_commands
from app.render.engines.llamacpp.answers.autoparser_cache import reasoning_for, supports_thinking
from app.render.engines.llamacpp.answers.generator import continuation_prompt
from app.render.engines.llamacpp.answers.types import ChatTemplate
from app.render.engines.llamacpp.builtins import equivalent_builtin
from app.render.engines.llamacpp.context import (
    RenderContext,
    generation_prompt,
    render_messages,
    template_variables,
)
from app.render.engines.llamacpp.handlers import Handler, select_handler
from app.render.engines.llamacpp.hooks import Continued
from app.render.engines.llamacpp.messages import (
    ChatMessage,
    LlamaCppInputError,
    apply_workarounds,
    normalise_content,
    parse_messages,
    parse_tools,
    refuse_continued_tool_calls,
    to_json,
)
from app.render.engines.llamacpp.templates_init import patched_source, template_capabilities
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
        bos = request.special_tokens.get("bos_token", "")
        eos = request.special_tokens.get("eos_token", "")
        try:
            return _render(request, bos, eos, limits)
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


def _render(request: RenderRequest, bos: str, eos: str, limits: RenderLimits) -> Rendered:
    rewrites: list[str] = []
    source = patched_source(request.template)
    if source != request.template:
        rewrites.append("template patched as llama.cpp patches it before use")
    caps = template_capabilities(source, limits)
    parsed = parse_messages(request.messages)
    tools = parse_tools(request.tools)
    add_generation_prompt, continuation = _continuation_mode(request, parsed, rewrites)
    rendered = parsed
    if "You have access to the following functions in JSONSchema format" in source:
        rendered = _trimmed(parsed, rewrites)  # StepFun: workaround::trim_all_content
    messages = normalise_content([to_json(m) for m in rendered], caps, rewrites)
    continued: ChatMessage | None = None
    if continuation:
        continued = parsed[-1]
        messages.pop()
        if continuation == "auto":
            reasoning_only = continued.reasoning_content and not continued.render_content()
            continuation = "reasoning" if reasoning_only else "content"
    messages = apply_workarounds(messages, parsed, source, caps, rewrites)
    handler = select_handler(source)
    template = ChatTemplate(source, bos, eos, caps, limits, request.now)
    thinking = supports_thinking(template)
    context = RenderContext(
        source,
        tools,
        template_variables(request, thinking),
        bos,
        eos,
        request.add_bos_token,
        request.add_eos_token,
        limits,
        request.now,
    )
    if handler is not None and handler.adjust is not None:
        messages = handler.adjust(messages, rewrites)
    prompt = render_messages(context, messages, add_generation_prompt, rewrites)
    if handler is not None and handler.patch is not None:
        prompt = handler.patch(prompt, add_generation_prompt, rewrites)
    if continued is not None and not continued.is_empty():
        prompt += _continue(template, context, handler, messages, prompt, continued, continuation)
        rewrites.append(
            "final assistant message continued (prefill): it is written after the "
            "template's opening of the turn, left open"
        )
    return Rendered(prompt, [], list(dict.fromkeys(rewrites)))


def _continuation_mode(
    request: RenderRequest, parsed: list[ChatMessage], rewrites: list[str]
) -> tuple[bool, str | None]:
    """oaicompat_chat_params_parse: prefill a final assistant message (prefill_assistant)."""
    add_generation_prompt = request.add_generation_prompt
    continuation: str | None = None
    requested = request.continue_final_message
    if requested is True:
        continuation = "auto"
    elif requested in ("content", "reasoning_content"):
        continuation = "content" if requested == "content" else "reasoning"
    if continuation is None and parsed and parsed[-1].role == "assistant":
        if len(parsed) >= 2 and parsed[-2].role == "assistant":
            raise LlamaCppInputError(
                "Cannot have 2 or more assistant messages at the end of the list."
            )
        continuation, add_generation_prompt = "auto", False
        if request.add_generation_prompt:
            rewrites.append(
                "add_generation_prompt ignored: the final assistant message is continued"
            )
    if continuation is not None and add_generation_prompt:
        raise LlamaCppInputError(
            "Cannot set both add_generation_prompt and continue_final_message to true."
        )
    if continuation is not None:
        refuse_continued_tool_calls(parsed)
    return add_generation_prompt, continuation


def _trimmed(parsed: list[ChatMessage], rewrites: list[str]) -> list[ChatMessage]:
    """Copies with their text trimmed; the continued message keeps its own, as in chat.cpp."""
    result = []
    for message in parsed:
        copy = dataclasses.replace(
            message,
            content=message.content.strip(" \n\t\r"),
            reasoning_content=message.reasoning_content.strip(" \n\t\r"),
            parts=[{**p, "text": p["text"].strip(" \n\t\r")} for p in message.parts],
        )
        if copy != message:
            rewrites.append("message text trimmed (as llama.cpp does for StepFun templates)")
        result.append(copy)
    return result


def _continue(
    template: ChatTemplate,
    context: RenderContext,
    handler: Handler | None,
    messages: list[dict[str, Any]],
    prompt: str,
    message: ChatMessage,
    mode: str | None,
) -> str:
    """The text a handler, or the autoparser, writes to continue the final message."""
    content = mode == "content"
    if handler is None:
        gen = generation_prompt(context, messages)
        text = message.render_content() if content else None
        return continuation_prompt(gen, reasoning_for(template), message.reasoning_content, text)
    if handler.continuation is None:
        return ""
    continued = Continued(message, content, prompt, lambda: generation_prompt(context, messages))
    return handler.continuation(continued)
