"""What common_chat_templates_init does to a template before any use: its two source
patches, and the capabilities llama.cpp detects for it (cached per process).

Read by the render (`render`) and by the answer parser (`apply.templates_apply`) alike.
"""

from __future__ import annotations

from functools import lru_cache

from app.render.engines.llamacpp.capabilities import detect_capabilities
from app.render.environment import template_hash
from app.render.limits import DEFAULT_LIMITS, RenderLimits


@lru_cache(maxsize=128)
def _caps_by_hash(digest: str, source: str, max_chars: int) -> dict[str, bool]:
    return detect_capabilities(source, RenderLimits(output_chars=max_chars))


def template_capabilities(source: str, limits: RenderLimits = DEFAULT_LIMITS) -> dict[str, bool]:
    """The capabilities llama.cpp detects for `source`, cached per process."""
    return _caps_by_hash(template_hash(source), source, limits.output_chars)


def patched_source(source: str) -> str:
    """The two source patches of common_chat_templates_init, applied before anything else."""
    if "<|channel|>" in source and "in message.content or" in source:
        source = source.replace(
            '{%- if "<|channel|>analysis<|message|>" in message.content or '
            '"<|channel|>final<|message|>" in message.content %}',
            "{%- if false %}",
        )
    if "[TOOL_CALLS]" in source and "if (message['content'] is none or" in source:
        source = source.replace(
            "{%- if (message['content'] is none or message['content'] == '' or "
            "message['content']|length == 0) and (message['tool_calls'] is not defined or "
            "message['tool_calls'] is none or message['tool_calls']|length == 0) %}",
            "{%- if false %}",
        )
    return source
