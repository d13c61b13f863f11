"""Engines for servers that normalise a chat request the vLLM way, then render with
transformers: vLLM itself, and TensorRT Edge-LLM's contract (`app.render.engines.edge_llm`).

The steps, in vLLM's order (vllm/renderers/hf.py `HfRenderer.render_messages`):

1. the request's flags and options are checked and merged (`options`);
2. the content format is resolved: the request's, or vLLM's `auto` detection
   (`app.render.content_format`);
3. the messages are parsed into vLLM's conversation (`messages`, `parts`);
4. developer and system messages are consolidated for templates without a developer
   role (`roles`);
5. transformers renders the result (`app.render.engines.transformers`), unchanged.

Every rule that changes the request is reported as a sentence in `rewrites`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from app.problems import TemplateProblem
from app.render.content_format import detect_content_format
from app.render.core import Engine, Rendered, RenderRequest
from app.render.engines.transformers import TransformersEngine
from app.render.engines.vllm.contract import VLLM, Contract, Refused
from app.render.engines.vllm.messages import parse_messages
from app.render.engines.vllm.options import (
    check_flags,
    merged_options,
    visible_special_tokens,
)
from app.render.engines.vllm.roles import consolidate_system
from app.render.limits import RenderLimits

#: transformers renders what the server hands it; one instance serves every request.
_TRANSFORMERS = TransformersEngine()


class ServerEngine(Engine):
    """A server that reshapes the request under its `contract`, then renders with
    transformers."""

    contract: ClassVar[Contract]
    openai_server = True

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Normalise as the server does, then render as transformers does."""
        try:
            normalised, rewrites = normalise(request, self.contract)
        except Refused as error:
            raise TemplateProblem("InvalidRequest", str(error)) from None
        rendered = _TRANSFORMERS.render(_TRANSFORMERS.prepare(normalised), limits)
        return replace(rendered, rewrites=rewrites)


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
        special_tokens=visible_special_tokens(request.special_tokens, contract, rewrites),
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


class VllmEngine(ServerEngine):
    """vLLM's OpenAI-compatible server: its request rules, then transformers."""

    id = "vllm"
    name = "vLLM (OpenAI server)"
    #: The vLLM source the rules were read from (main branch, late 2026).
    version = "main 2026-11"
    description = (
        "What vLLM's /v1/chat/completions renders: its request rules (content format, "
        "message keys, tool-call arguments, reasoning, developer and system messages, "
        "kwargs, tools), then transformers' apply_chat_template."
    )
    contract = VLLM
