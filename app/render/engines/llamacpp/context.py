"""One llama.cpp render: its variables, the render itself and the generation prompt.

`common_chat_template_direct_apply_impl` (common/chat.cpp) builds the template's
variables — the messages, `bos_token`/`eos_token`, `enable_thinking`, the tools when
there are any, the extra context (`datetime`, `date_string`, the kwargs) and
`add_generation_prompt` only when it is true — renders, and cuts a BOS at the start
and an EOS at the end when the vocabulary adds them anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.render.bounded import generate_bounded
from app.render.core import RenderRequest
from app.render.engines.llamacpp.jinja import compile_llamacpp
from app.render.engines.llamacpp.messages import LlamaCppInputError
from app.render.environment import pinned_clock
from app.render.limits import RenderLimits


@dataclass
class RenderContext:
    """What one render needs besides the messages."""

    source: str
    tools: list[dict[str, Any]] | None
    variables: dict[str, Any]
    bos: str
    eos: str
    add_bos: bool
    add_eos: bool
    limits: RenderLimits
    now: datetime | None


def template_variables(request: RenderRequest, thinking: bool) -> dict[str, Any]:
    """enable_thinking, the dates of common_chat_extra_context, then the kwargs.

    llama-server enables thinking by default only where the template supports it
    (`common_chat_templates_support_enable_thinking`: a handler that thinks, or
    reasoning tags the autoparser found).
    """
    now = request.now or datetime.now()
    variables: dict[str, Any] = {
        "enable_thinking": thinking,
        "datetime": now.strftime("%b %d %Y"),
        "date_string": now.strftime("%d %b %Y"),
    }
    requested = request.kwargs.get("enable_thinking")
    if isinstance(requested, str):
        raise LlamaCppInputError(
            'invalid type for "enable_thinking" (expected boolean, got string)'
        )
    variables.update(request.kwargs)
    if isinstance(requested, bool):
        variables["enable_thinking"] = requested
    effort = variables.get("reasoning_effort")
    if isinstance(effort, str) and effort:
        # caps_apply_reasoning_effort: the level is offered under both names.
        variables.setdefault("reasoning_strength", effort)
    keep = variables.get("preserve_reasoning")
    if isinstance(keep, bool):
        # caps_apply_preserve_reasoning: every switch templates use for it.
        for name in ("preserve_thinking",):
            variables.setdefault(name, keep)
        for name in ("clear_thinking", "truncate_history_thinking", "drop_thinking"):
            variables.setdefault(name, not keep)
    return variables


def render_messages(
    context: RenderContext,
    messages: list[dict[str, Any]],
    add_generation_prompt: bool,
    rewrites: list[str] | None = None,
) -> str:
    """common_chat_template_direct_apply_impl: render, then cut what the vocabulary adds."""
    variables: dict[str, Any] = {
        "messages": messages,
        "bos_token": context.bos,
        "eos_token": context.eos,
        "enable_thinking": context.variables["enable_thinking"],
    }
    if context.tools:
        variables["tools"] = context.tools
    # The extra context (dates, kwargs) overwrites, as in llama.cpp; the prompt flag last.
    variables.update(context.variables)
    if add_generation_prompt:
        variables["add_generation_prompt"] = True
    prompt = _generate(context, variables)
    if context.add_bos and prompt.startswith(context.bos):
        prompt = prompt[len(context.bos) :]
        if context.bos and rewrites is not None:
            rewrites.append("leading BOS stripped: the vocabulary adds it")
    if context.add_eos and prompt.endswith(context.eos):
        prompt = prompt[: len(prompt) - len(context.eos)]
        if context.eos and rewrites is not None:
            rewrites.append("trailing EOS stripped: the vocabulary adds it")
    return prompt


def _generate(context: RenderContext, variables: dict[str, Any]) -> str:
    compiled = compile_llamacpp(context.source)
    with pinned_clock(context.now):
        return generate_bounded(compiled, variables, context.limits.output_chars)


def generation_prompt(context: RenderContext, messages: list[dict[str, Any]]) -> str:
    """common_chat_template_generation_prompt_impl: what add_generation_prompt adds."""
    without = render_messages(context, messages, False)
    with_prompt = render_messages(context, messages, True)
    common = 0
    while common < min(len(without), len(with_prompt)) and without[common] == with_prompt[common]:
        common += 1
    return with_prompt[common:]
