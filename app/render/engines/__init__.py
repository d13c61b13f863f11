"""The render engines, by id: each reproduces one program's chat-template rendering.

An engine is an `app.render.core.Engine`: its own package below this one, and one
`register` line here. Requests name it (`"engine"`), the worker renders with it
(`render`), `GET /api/engines` and the page list it; nothing else names an engine.
"""

from __future__ import annotations

from typing import Any

from app.render.client import as_callers_send
from app.render.core import Engine, ModelFiles, Rendered, RenderRequest, render_with
from app.render.engines.edge_llm import EdgeLlmEngine
from app.render.engines.llamacpp import LlamaCppEngine
from app.render.engines.tgi import TgiEngine
from app.render.engines.transformers import TransformersEngine
from app.render.engines.transformersjs import TransformersJsEngine
from app.render.engines.vllm import VllmEngine
from app.render.limits import DEFAULT_LIMITS, RenderLimits

#: Every engine by id, in the order the page lists them.
ENGINES: dict[str, Engine] = {}
#: The engine every other is compared with (the portability report, the Diff view's
#: default), and the one a request renders with when it names none.
REFERENCE_ENGINE = TransformersEngine.id
DEFAULT_ENGINE = REFERENCE_ENGINE
#: The server whose stated capabilities (llama-server's `chat_template_caps`) and
#: request rewrites the Analysis view reports.
STATING_ENGINE = LlamaCppEngine.id


def register(engine: Engine) -> None:
    """Make `engine` available under its id."""
    ENGINES[engine.id] = engine


register(TransformersEngine())
register(LlamaCppEngine())
register(VllmEngine())
register(EdgeLlmEngine())
register(TgiEngine())
register(TransformersJsEngine())


def get_engine(engine_id: str | None) -> Engine:
    """The engine registered as `engine_id`, the reference engine for None (KeyError for
    an unknown id)."""
    return ENGINES[engine_id or REFERENCE_ENGINE]


def counterpart(engine_id: str | None) -> str:
    """The engine a comparison of engines sets against `engine_id`: the first other one."""
    return next(other for other in ENGINES if other != (engine_id or REFERENCE_ENGINE))


def engine_list() -> list[dict[str, str]]:
    """`{id, name, version, description}` of every engine, in registry order."""
    return [engine.info() for engine in ENGINES.values()]


def model_refusals(model: ModelFiles) -> dict[str, str]:
    """Why each engine's program would not load the Hugging Face model `model` describes
    (`Engine.model_refusal`), by engine id; only the engines that would not load it."""
    refusals = {id: engine.model_refusal(model) for id, engine in ENGINES.items()}
    return {id: refusal for id, refusal in refusals.items() if refusal}


def render(request: RenderRequest, limits: RenderLimits = DEFAULT_LIMITS) -> Rendered:
    """Render `request` with the engine it names, its tool-call arguments in the form that
    engine's callers send them (`app.render.client`); raises `TemplateProblem`."""
    engine = get_engine(request.engine)
    return render_with(engine, as_callers_send(engine, request)[0], limits)


def render_exactly(request: RenderRequest, limits: RenderLimits = DEFAULT_LIMITS) -> Rendered:
    """Render `request` with the engine it names, its arguments exactly as given."""
    return render_with(get_engine(request.engine), request, limits)


def parser_choices() -> list[dict[str, Any]]:
    """`{id, name, options}` of every engine with parser options, for the page's menus:
    the choices are the engine's own, whatever the template (which default it takes for
    a template, the Response view says)."""
    blank = RenderRequest(template="", messages=[])
    choices = []
    for engine in ENGINES.values():
        options = [option.to_json() for option in engine.answer_options(blank)]
        if options:
            choices.append({"id": engine.id, "name": engine.name, "options": options})
    return choices
