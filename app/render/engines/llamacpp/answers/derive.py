"""The chat params llama-server derives for a request: common_chat_templates_apply_jinja.

From the request, as tools/server/server-common.cpp `oaicompat_chat_params_parse`
builds `common_chat_templates_inputs` and common/chat.cpp turns it into
`autoparser::generation_params` (`ParseInputs`): the messages parsed and rewritten
by the template's capabilities, the continued final message taken out, the dates and
kwargs as extra context. Then a specialized handler (`handlers`), or the differential
autoparser (`analyzer` + `generator`), derives the format and the parser.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from app.problems import TemplateProblem, problem_from_exception
from app.render.core import RenderRequest
from app.render.engines.llamacpp import handlers as engine_handlers
from app.render.engines.llamacpp.answers import handlers
from app.render.engines.llamacpp.answers.autoparser_cache import analysis_for, supports_thinking
from app.render.engines.llamacpp.answers.generator import generate_params
from app.render.engines.llamacpp.answers.types import ChatParams, ChatTemplate, ParseInputs
from app.render.engines.llamacpp.context import template_variables
from app.render.engines.llamacpp.messages import (
    apply_workarounds,
    normalise_content,
    parse_messages,
    parse_tools,
    refuse_continued_tool_calls,
    to_json,
)
from app.render.engines.llamacpp.templates_init import patched_source, template_capabilities
from app.render.limits import RenderLimits


class HandlerMissing(Exception):
    """llama.cpp has a specialized handler for the template that is not reproduced here."""


class HandlerFailed(Exception):
    """A specialized handler failed (its render of the template, mostly): llama.cpp lets
    that error through as it is, where it wraps the autoparser's in a sentence."""

    def __init__(self, handler: str, error: Exception) -> None:
        # A problem's own message, without the "Type: ... (line N)" its str() adds.
        super().__init__(error.message if isinstance(error, TemplateProblem) else str(error))
        self.handler, self.error = handler, error

    def notes(self) -> tuple[str, ...]:
        """What the page says about it."""
        line = problem_from_exception(self.error).line
        where = f" (line {line} of the template)" if line else ""
        return (
            f"llama.cpp's {self.handler} handler renders the prompt itself, and the "
            f"template failed{where}: llama-server refuses the request with the template's "
            'error, which it prefixes with where the template failed ("While executing '
            '... at line ..., column ... in source").',
        )


def chat_template(request: RenderRequest, limits: RenderLimits) -> ChatTemplate:
    """common_chat_template: the patched source, its tokens and its capabilities."""
    source = patched_source(request.template)
    return ChatTemplate(
        source=source,
        bos=request.special_tokens.get("bos_token", ""),
        eos=request.special_tokens.get("eos_token", ""),
        caps=template_capabilities(source, limits),
        limits=limits,
        now=request.now,
    )


def _continuation(request: RenderRequest, last_role: str | None) -> str:
    """The continuation mode llama-server resolves (prefill of a final assistant turn)."""
    requested = request.continue_final_message
    if requested is True:
        return "auto"
    if requested in ("content", "reasoning_content"):
        return "content" if requested == "content" else "reasoning"
    if last_role == "assistant":
        return "auto"
    return "none"


def parse_inputs(
    request: RenderRequest,
    template: ChatTemplate,
    reasoning_format: str,
    overrides: dict[str, Any] | None = None,
) -> ParseInputs:
    """The generation_params common_chat_templates_apply_jinja hands on (may raise the
    engine's LlamaCppInputError for a request llama-server refuses). `overrides` sets
    fields llama-server takes from the request body or its flags (`enable_thinking`,
    `parallel_tool_calls`, `tool_choice`, `json_schema`), as llama.cpp's tests do."""
    source, caps = template.source, template.caps
    parsed = parse_messages(request.messages)
    rendered = parsed
    if "You have access to the following functions in JSONSchema format" in source:
        rendered = [dataclasses.replace(m, content=m.content.strip(" \n\t\r")) for m in parsed]
    messages: list[dict[str, Any]] = normalise_content([to_json(m) for m in rendered], caps, [])
    continuation = _continuation(request, parsed[-1].role if parsed else None)
    if continuation != "none":
        refuse_continued_tool_calls(parsed)
    continue_msg: dict[str, Any] | None = None
    if continuation != "none" and messages:
        messages.pop()
        # The continued message is the request's own, untrimmed (C++: inputs.messages.back()).
        continue_msg = normalise_content([to_json(parsed[-1])], caps, [])[0]
        if continuation == "auto":
            only_reasoning = continue_msg.get("reasoning_content") and not continue_msg.get(
                "content"
            )
            continuation = "reasoning" if only_reasoning else "content"
    messages = apply_workarounds(messages, parsed, source, caps, [])
    thinking = supports_thinking(template)
    variables = template_variables(request, thinking)
    enable_thinking = bool(variables.pop("enable_thinking"))
    extra = dict(variables)
    if "enable_thinking" in request.kwargs:
        extra["enable_thinking"] = request.kwargs["enable_thinking"]
    tools = parse_tools(request.tools)
    inputs = ParseInputs(
        template=template,
        messages=messages,
        tools=tools,
        tool_choice="auto",
        parallel_tool_calls=bool(caps.get("supports_parallel_tool_calls")),
        reasoning_format=reasoning_format,
        enable_thinking=enable_thinking,
        add_generation_prompt=continuation == "none",
        continue_final_message=continuation,
        continue_msg=continue_msg,
        extra_context=extra,
        add_bos=request.add_bos_token,
        add_eos=request.add_eos_token,
    )
    return dataclasses.replace(inputs, **overrides) if overrides else inputs


def derive_params(inputs: ParseInputs) -> tuple[ChatParams, str]:
    """The params and who derived them (a handler's NAME, or "autoparser")."""
    module = handlers.select(inputs.source)
    if module is not None:
        try:
            return module.params(inputs.source, inputs), str(module.NAME)
        except TemplateProblem as problem:
            if problem.limit:
                raise  # the playground's own limit, not llama.cpp's answer
            raise HandlerFailed(str(module.NAME), problem) from problem
        except Exception as error:
            raise HandlerFailed(str(module.NAME), error) from error
    engine_handler = engine_handlers.select_handler(inputs.source)
    if engine_handler is not None:
        raise HandlerMissing(engine_handler.name)
    return generate_params(inputs, analysis_for(inputs.template)), "autoparser"
