"""One port of llama.cpp's `common_chat_templates_apply`: what a request yields.

From the request, as tools/server/server-common.cpp `oaicompat_chat_params_parse`
checks it and common/chat.cpp `common_chat_templates_apply_jinja` prepares it:

1. the messages are parsed into llama.cpp's own (`messages`); a final assistant message
   is continued (prefill), not closed: it is taken out and kept apart;
2. StepFun templates get their message texts trimmed; the capability-dependent
   rewrites run (developer→system, system merge, object arguments, ...);
3. `enable_thinking` defaults to whether the template thinks (`autoparser_cache`),
   beside the dates and the kwargs as extra context.

The result, `Applied`, is everything the apply yields: the generation params a
handler or the autoparser reads (`inputs`), the thinking default, the prompt and the
rewrites that made it (`prompt`, rendered on first use), and the chat params — format,
parser, generation prompt — derived from the same inputs (`params`, on first use).
The engine's render is its prompt; reading an answer is parsing with its parser.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from app.problems import TemplateProblem
from app.render.core import RenderRequest
from app.render.engines.llamacpp.apply.autoparser_cache import supports_thinking
from app.render.engines.llamacpp.apply.derive import (
    AUTOPARSER_FAILED,
    HandlerFailed,
    chat_template,
    derive_params,
)
from app.render.engines.llamacpp.apply.prompt import build_prompt
from app.render.engines.llamacpp.apply.types import ChatParams, ChatTemplate, ParseInputs
from app.render.engines.llamacpp.context import template_variables
from app.render.engines.llamacpp.families import family_of
from app.render.engines.llamacpp.families.family import Family
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
from app.render.limits import RenderLimits

_STEPFUN = "You have access to the following functions in JSONSchema format"


@dataclass(frozen=True)
class Applied:
    """common_chat_params for one request, with the inputs it was derived from."""

    template: ChatTemplate
    #: autoparser::generation_params: what a handler or the autoparser reads.
    inputs: ParseInputs
    #: The template's family (None: the autoparser reads it).
    family: Family | None
    #: common_chat_templates_support_enable_thinking: enable_thinking's default.
    thinking: bool
    #: The final assistant message being continued, as parsed (None: none is).
    continued: ChatMessage | None
    #: The rewrites made on the request before rendering, as sentences.
    rewrites_before: tuple[str, ...] = ()

    @cached_property
    def rendered(self) -> tuple[str, tuple[str, ...]]:
        """The prompt and every rewrite that shaped it (rendered on first use)."""
        rewrites = list(self.rewrites_before)
        hooks = self.family.hooks(self.template.source) if self.family else None
        prompt = build_prompt(
            self.template, self.inputs, hooks, self.continued, self._prefill, rewrites
        )
        return prompt, tuple(dict.fromkeys(rewrites))

    @property
    def prompt(self) -> str:
        """The prompt llama-server renders (`/apply-template`'s answer)."""
        return self.rendered[0]

    @property
    def rewrites(self) -> tuple[str, ...]:
        """What llama.cpp changed on the way to the prompt, once each."""
        return self.rendered[1]

    @cached_property
    def params(self) -> tuple[ChatParams, str]:
        """The format, parser and generation prompt, and who derived them (a family's
        key or "autoparser"); raises `derive`'s HandlerMissing / HandlerFailed."""
        return derive_params(self.inputs)

    def _prefill(self) -> str:
        """The continued message's prefill: the params' generation prompt, or, for a
        family whose params are not reproduced, what its prompt hooks write. A failure
        to derive the params is the request's, as llama-server refuses it."""
        family = self.family
        if family is not None and family.params is None:
            continuation = family.hooks(self.template.source).continuation
            content = self.inputs.continue_final_message == "content"
            if continuation is None or self.continued is None:
                return ""
            return continuation(Continued(self.continued, content))
        try:
            return self.params[0].generation_prompt
        except HandlerFailed as failed:
            if isinstance(failed.error, TemplateProblem):
                raise failed.error from None  # the template's own error, as it is
            raise LlamaCppInputError(str(failed)) from failed
        except (TemplateProblem, LlamaCppInputError):
            raise
        except Exception as error:
            raise LlamaCppInputError(f"{AUTOPARSER_FAILED}{error}") from error


def apply(
    request: RenderRequest,
    limits: RenderLimits,
    reasoning_format: str = "auto",
    overrides: dict[str, Any] | None = None,
) -> Applied:
    """common_chat_templates_apply for `request`; raises LlamaCppInputError for a request
    llama-server refuses. `overrides` sets ParseInputs fields llama-server takes from the
    request body or its flags (`enable_thinking`, `parallel_tool_calls`, `tool_choice`,
    `json_schema`), as llama.cpp's tests do."""
    rewrites: list[str] = []
    template = chat_template(request, limits)
    if template.source != request.template:
        rewrites.append("template patched as llama.cpp patches it before use")
    parsed = parse_messages(request.messages)
    add_generation_prompt, continuation = _continuation_mode(request, parsed, rewrites)
    messages, continued, continuation = _messages(template, parsed, continuation, rewrites)
    thinking = supports_thinking(template)
    variables = template_variables(request, thinking)
    enable_thinking = bool(variables.pop("enable_thinking"))
    if "enable_thinking" in request.kwargs:
        variables["enable_thinking"] = request.kwargs["enable_thinking"]
    inputs = ParseInputs(
        template=template,
        messages=messages,
        tools=parse_tools(request.tools),
        tool_choice="auto",
        parallel_tool_calls=bool(template.caps.get("supports_parallel_tool_calls")),
        reasoning_format=reasoning_format,
        enable_thinking=enable_thinking,
        add_generation_prompt=add_generation_prompt,
        continue_final_message=continuation,
        continue_msg=_as_json(continued, template.caps),
        extra_context=variables,
        add_bos=request.add_bos_token,
        add_eos=request.add_eos_token,
    )
    if overrides:
        inputs = dataclasses.replace(inputs, **overrides)
    family = family_of(template.source)
    return Applied(template, inputs, family, thinking, continued, tuple(rewrites))


def _messages(
    template: ChatTemplate, parsed: list[ChatMessage], continuation: str, rewrites: list[str]
) -> tuple[list[dict[str, Any]], ChatMessage | None, str]:
    """The messages to render as JSON, after the workarounds; the continued message taken
    out (None: none is); the continuation mode with "auto" resolved."""
    caps = template.caps
    rendered = _trimmed(parsed, rewrites) if _STEPFUN in template.source else parsed
    messages = normalise_content([to_json(m) for m in rendered], caps, rewrites)
    continued: ChatMessage | None = None
    if continuation != "none" and parsed:
        continued = parsed[-1]
        messages.pop()
        if continuation == "auto":
            only_reasoning = continued.reasoning_content and not (
                continued.content or continued.parts
            )
            continuation = "reasoning" if only_reasoning else "content"
    messages = apply_workarounds(messages, parsed, template.source, caps, rewrites)
    return messages, continued, continuation


def _as_json(message: ChatMessage | None, caps: dict[str, bool]) -> dict[str, Any] | None:
    """The continued message as JSON: the request's own, untrimmed (C++:
    `inputs.messages.back()`)."""
    return None if message is None else normalise_content([to_json(message)], caps, [])[0]


def apply_for_completion(
    request: RenderRequest,
    limits: RenderLimits,
    reasoning_format: str = "auto",
    overrides: dict[str, Any] | None = None,
) -> Applied:
    """`apply` as llama-server's chat completions do it, for reading their answer: the
    completion follows the generation prompt (added by default) unless a final message
    is continued."""
    continuing = request.continue_final_message in (True, "content", "reasoning_content")
    answered = dataclasses.replace(request, add_generation_prompt=not continuing)
    return apply(answered, limits, reasoning_format, overrides)


def _continuation_mode(
    request: RenderRequest, parsed: list[ChatMessage], rewrites: list[str]
) -> tuple[bool, str]:
    """oaicompat_chat_params_parse: prefill a final assistant message (prefill_assistant).
    The mode is "none", "auto", "content" or "reasoning"."""
    add_generation_prompt = request.add_generation_prompt
    continuation = "none"
    requested = request.continue_final_message
    if requested is True:
        continuation = "auto"
    elif requested in ("content", "reasoning_content"):
        continuation = "content" if requested == "content" else "reasoning"
    if continuation == "none" and parsed and parsed[-1].role == "assistant":
        if len(parsed) >= 2 and parsed[-2].role == "assistant":
            raise LlamaCppInputError(
                "Cannot have 2 or more assistant messages at the end of the list."
            )
        continuation, add_generation_prompt = "auto", False
        if request.add_generation_prompt:
            rewrites.append(
                "add_generation_prompt ignored: the final assistant message is continued"
            )
    if continuation != "none" and add_generation_prompt:
        raise LlamaCppInputError(
            "Cannot set both add_generation_prompt and continue_final_message to true."
        )
    if continuation != "none":
        refuse_continued_tool_calls(parsed)
    return add_generation_prompt, continuation


def _trimmed(parsed: list[ChatMessage], rewrites: list[str]) -> list[ChatMessage]:
    """workaround::trim_all_content: copies with their text trimmed (content, reasoning
    and text parts); the continued message keeps its own, as in chat.cpp."""
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
