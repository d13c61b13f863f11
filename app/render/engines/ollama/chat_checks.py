"""/api/chat's capability checks for a Go template (server/routes.go and images.go at
fb30760): a model supports tools when its template mentions .Tools, and thinking when
Ollama infers thinking tags in it (`gotemplate.runner.thinking_tags`); `Capabilities`
(server/images.go) adds the capabilities its config lists (`configCapabilities`) and
thinking for a gpt-oss family (`modelFamilyCapabilities`)."""

from __future__ import annotations

from app.problems import TemplateProblem
from app.render.engines.ollama.capabilities import THINKING, TOOLS
from app.render.engines.ollama.gotemplate.runner import template_vars, thinking_tags
from app.render.limits import RenderLimits

#: The think levels Ollama takes as thinking on (api.ThinkValue.Bool).
THINK_LEVELS = ("low", "medium", "high", "max")
#: How Ollama's errors name the model (a request here names none).
MODEL = "model"


def chat_think(
    template: str,
    tools: list | None,
    think: bool | str | None,
    limits: RenderLimits,
    listed: tuple[str, ...] = (),
) -> bool | str | None:
    """/api/chat's capability checks for a Go template: tools need a template that
    mentions .Tools or a model that has the capability otherwise (`listed`: its config's
    capabilities, and thinking for a gpt-oss family); a thinking-capable model (its
    template's `thinking_tags`, or thinking listed) turns thinking on when the request
    does not say, and any other refuses thinking asked for."""
    if tools and TOOLS not in listed and "tools" not in template_vars(template, limits):
        raise TemplateProblem("InvalidRequest", f'"{MODEL}" does not support tools')
    if THINKING in listed or thinking_tags(template, limits) is not None:
        return True if think is None else think
    if think is True or think in THINK_LEVELS:
        raise TemplateProblem("InvalidRequest", f'"{MODEL}" does not support thinking')
    return think
