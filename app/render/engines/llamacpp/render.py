"""Render a conversation exactly as llama-server's `POST /apply-template` does.

The render is the prompt of llama.cpp's `common_chat_templates_apply`, ported once in
`apply.templates_apply` (the steps, in llama.cpp's order, are listed there): the same result
the answer parser reads its parser from. A request llama-server refuses raises
`LlamaCppInputError`; every rewrite that changes the prompt is reported as a sentence in
`rewrites`.
"""

from __future__ import annotations

from app.render.core import Rendered, RenderRequest
from app.render.engines.llamacpp.apply.templates_apply import apply
from app.render.limits import RenderLimits


def render_prompt(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """The prompt common_chat_templates_apply yields, and the rewrites that shaped it."""
    applied = apply(request, limits)
    return Rendered(applied.prompt, [], list(applied.rewrites))
