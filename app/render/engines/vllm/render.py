"""What vLLM's server renders: its request rules (`normalise`), then transformers as
vLLM installs it. The engine (`engine`) renders with it, and so does the answer reader
(`answers`), for the prompt a completion continues.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.problems import TemplateProblem
from app.render.core import Rendered, RenderRequest
from app.render.engines.transformers import TransformersEngine
from app.render.engines.vllm.content_format import detect_content_format
from app.render.engines.vllm.contract import VLLM, Contract, Refused
from app.render.engines.vllm.messages import parse_messages
from app.render.engines.vllm.options import check_flags, merged_options
from app.render.engines.vllm.roles import consolidate_system
from app.render.limits import RenderLimits


class PinnedTransformers(TransformersEngine):
    """transformers as vLLM 0.33.0 installs it (it requires < 5.21; 5.20.2 recorded):
    messages reach the template with the reasoning keys vLLM gave them, since only
    transformers 5.21 started copying reasoning under `thinking`."""

    def aliased(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages


#: The transformers vLLM renders with (one instance serves every request).
PINNED_TRANSFORMERS = PinnedTransformers()


def render(
    request: RenderRequest,
    limits: RenderLimits,
    contract: Contract = VLLM,
    transformers: TransformersEngine = PINNED_TRANSFORMERS,
) -> Rendered:
    """Normalise as a server under `contract` does, then render as `transformers` does;
    by default, as vLLM's server renders."""
    normalised, rewrites = checked(request, contract)
    rendered = transformers.render(transformers.prepare(normalised), limits)
    return replace(rendered, rewrites=rewrites)


def checked(request: RenderRequest, contract: Contract = VLLM) -> tuple[RenderRequest, list[str]]:
    """`normalise`, with a request the server refuses raised as its 400 (an
    `InvalidRequest` in the server's words): before it renders, and so before any answer
    exists to be read."""
    try:
        return normalise(request, contract)
    except Refused as error:
        raise TemplateProblem("InvalidRequest", str(error)) from None


def normalise(request: RenderRequest, contract: Contract) -> tuple[RenderRequest, list[str]]:
    """The request as the server hands it to transformers, and the rewrites it made."""
    rewrites: list[str] = []
    check_flags(request)
    kwargs, documents, tools = merged_options(request, rewrites)
    content_format, decided = resolved_content_format(request)
    messages = parse_messages(request.messages, content_format == "openai", contract, rewrites)
    pairs = zip(request.messages, messages, strict=True)
    if any(original.get("content") != parsed["content"] for original, parsed in pairs):
        shape = "typed blocks" if content_format == "openai" else "text joined by newlines"
        rewrites.insert(0, f"content as {shape}: content format {content_format} ({decided})")
    messages = consolidate_system(messages, request.template, rewrites)
    normalised = replace(
        request,
        messages=messages,
        tools=tools,
        documents=documents,
        kwargs=kwargs,
        content_format=content_format,
    )
    return normalised, rewrites


def resolved_content_format(request: RenderRequest) -> tuple[str, str]:
    """The request's content format, or the one vLLM's `auto` detects in the template;
    and how it was decided."""
    if request.content_format != "auto":
        return request.content_format, "set by the request"
    detected = detect_content_format(request.template)
    reads = "loops over" if detected == "openai" else "does not loop over"
    return detected, f"detected: the template {reads} message content"
