"""The Ollama engine: the prompt Ollama's /api/chat sends a model.

Ollama (read at commit fb30760996871fa9460115c753afd2c60d4ab0f7, 2026-08-21) renders a
model one of three ways (`choice.decide`): a Go TEMPLATE on Go's text/template with its
own data and functions (`gotemplate/`), the GGUF's Jinja through llama-server (the
llama.cpp engine, with the `chat_template_kwargs` Ollama passes), or a renderer written in
Go for the model's family (`renderers/`). A request whose `template_kind` is "go" is a
Modelfile's TEMPLATE and takes the first way; a Jinja template is what `ollama create`
reads from a GGUF, and the choice says which way a model made from it renders.
`kwargs.enable_thinking` (or `reasoning_effort`, a level) is Ollama's `think`. A loaded
Modelfile's facts come in `request.model`: its RENDERER picks the renderer path, its
MESSAGE commands come before the chat, and its SYSTEM opens a chat that does not start
with a system message (`engine_facts`, `server/routes.go`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.problems import TemplateProblem
from app.render.core import Engine, EngineInfo, Rendered, RenderRequest, render_with
from app.render.engines.llamacpp import LlamaCppEngine
from app.render.engines.ollama import choice
from app.render.engines.ollama import commands as ollama_commands
from app.render.engines.ollama.answers import OllamaReader
from app.render.engines.ollama.chat_checks import THINK_LEVELS, chat_think
from app.render.engines.ollama.engine_facts import (
    capabilities,
    family,
    renderer,
    renderer_reasons,
    thinking_because,
    with_model,
)
from app.render.engines.ollama.family import harmony_think, uses_harmony
from app.render.engines.ollama.gotemplate.runner import render_go, today
from app.render.engines.ollama.hub.shown import hub_shown
from app.render.engines.ollama.messages import api_messages, think_value
from app.render.engines.ollama.renderers import RENDERERS
from app.render.limits import RenderLimits

#: The llama.cpp engine, which renders the llama-server path.
LLAMA_SERVER = LlamaCppEngine()


class OllamaEngine(Engine):
    """Ollama's chat rendering: a Go template, llama-server's Jinja, or a Go renderer."""

    info = EngineInfo(
        id="ollama",
        name="Ollama (/api/chat)",
        version="fb30760",
        description=(
            "What Ollama (commit fb30760) sends the model for /api/chat: a Go template run on "
            "Go's text/template with Ollama's data and functions, the GGUF's Jinja through "
            "llama-server, or one of its own renderers."
        ),
    )
    commands = ollama_commands.WRITER
    template_kinds = ("jinja", "go")
    reader = OllamaReader()

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Render the way Ollama would; raises `TemplateProblem`. A Jinja template also
        gets the way `ollama run hf.co/...` takes (`hub/`) in its details and reasons."""
        request, from_model = with_model(request)
        taken = choice.decide(
            request.template,
            request.template_kind,
            renderer(request),
            family=family(request),
            renderer_reasons=tuple(renderer_reasons(request)),
        )
        rendered = _rendered(taken, request, limits)
        shown: dict[str, Any] = {
            "path": taken.path,
            "name": taken.name,
            "distance": taken.distance,
            "harmony": taken.harmony,
        }
        said: list[str] = []
        if request.template_kind == "jinja" and taken.path != choice.RENDERER and request.template:

            def prompt_of(path: str, go_template: str | None) -> str:
                """The prompt another way sends (this render's, when it is this way)."""
                if (path, go_template) == (taken.path, taken.go_template):
                    return rendered.prompt
                other = replace(taken, path=path, go_template=go_template)
                return _rendered(other, request, limits).prompt

            shown["hub"], said = hub_shown(request, limits, prompt_of, rendered.prompt)
        return Rendered(
            rendered.prompt,
            rendered.generation_spans,
            [*from_model, *rendered.rewrites, *said],
            {"ollama": shown},
        )


def _rendered(taken: choice.OllamaPath, request: RenderRequest, limits: RenderLimits) -> Rendered:
    """The prompt the path `taken` sends, with the sentences saying why."""
    reasons = list(taken.reasons)
    if taken.path == choice.LLAMA_SERVER:
        rendered = render_with(LLAMA_SERVER, llama_server_request(request), limits)
        return Rendered(rendered.prompt, rendered.generation_spans, [*reasons, *rendered.rewrites])
    data = go_data(request)
    if taken.path == choice.RENDERER:
        chosen = _renderer(taken.name, " ".join(taken.reasons[:-1]))
        prompt = chosen(data["messages"], data["tools"], data["think"])
        return Rendered(prompt, [], reasons)
    assert taken.go_template is not None
    listed = capabilities(request)
    data["think"] = chat_think(taken.go_template, request.tools, data["think"], limits, listed)
    if data["think"] is not None and think_value(request.kwargs) is None:
        reasons.append(f"Ollama turns thinking on: {thinking_because(request)} thinking-capable.")
    if uses_harmony(family(request), taken.go_template):
        data["think"] = harmony_think(data["think"])
    return Rendered(render_go(taken.go_template, data, limits), [], reasons)


def go_data(request: RenderRequest) -> dict[str, Any]:
    """What Ollama's template package receives: api.Message and api.Tool values, think and
    the day `currentDate` writes."""
    return {
        "messages": api_messages(request.messages),
        "tools": request.tools,
        "think": think_value(request.kwargs),
        "today": today(request.now),
    }


def llama_server_request(request: RenderRequest) -> RenderRequest:
    """The request Ollama sends llama-server: the chat, always with the generation prompt,
    and `chat_template_kwargs` from `think` only (enable_thinking, reasoning_effort)."""
    think = think_value(request.kwargs)
    kwargs: dict[str, Any] = {}
    if think is not None:
        # api.ThinkValue.Bool: true, or one of the levels Ollama knows.
        kwargs["enable_thinking"] = think is True or think in THINK_LEVELS
        if isinstance(think, str):
            kwargs["reasoning_effort"] = think
    return replace(
        request,
        engine=LLAMA_SERVER.info.id,
        kwargs=kwargs,
        add_generation_prompt=True,
        continue_final_message=False,
    )


def _renderer(name: str | None, why: str = "") -> Any:
    """The renderer Ollama names `name`, or a problem saying it is not modelled (and
    `why` the model has it)."""
    renderer = RENDERERS.get(name or "")
    if renderer is None:
        raise TemplateProblem(
            "UnknownRenderer", f"Ollama's renderer {name!r} is not modelled here yet. " + why
        )
    return renderer
