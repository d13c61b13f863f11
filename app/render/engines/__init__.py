"""The render engines, by id: each reproduces one program's chat-template rendering.

An engine is an `app.render.core.Engine`: its own package below this one (its class in
the package's `engine` module), and one `register` line here. Requests name it
(`"engine"`), the worker renders with it (`render`), `GET /api/engines` and the page list
it; nothing else names an engine.
"""

from __future__ import annotations

from typing import Any

from app.render.client import as_sent
from app.render.command_line import CommandWriter
from app.render.core import Engine, EngineInfo, ModelFiles, Rendered, RenderRequest, render_with
from app.render.engines import mistralrs
from app.render.engines.edge_llm import EdgeLlmEngine
from app.render.engines.llamacpp import LlamaCppEngine
from app.render.engines.ollama import OllamaEngine
from app.render.engines.tgi import TgiEngine
from app.render.engines.transformers import TransformersEngine
from app.render.engines.transformersjs import TransformersJsEngine
from app.render.engines.vllm import VllmEngine
from app.render.limits import DEFAULT_LIMITS, RenderLimits

#: Every engine by id, in the order the page lists them.
ENGINES: dict[str, Engine] = {}
#: The engine every other is compared with (the portability report, the Diff view's
#: default), and the one a request renders with when it names none.
REFERENCE_ENGINE = TransformersEngine.info.id
DEFAULT_ENGINE = REFERENCE_ENGINE
#: The server whose stated capabilities (llama-server's `chat_template_caps`) and
#: request rewrites the Analysis view reports.
STATING_ENGINE = LlamaCppEngine.info.id
#: The server whose content-format decision the Analysis view states, and which the
#: page's Content format menu sets (`Engine.content_format`).
CONTENT_FORMAT_ENGINE = VllmEngine.info.id


#: Runtimes without an engine, whose command lines the Command view lists too.
RUNTIMES: list[CommandWriter] = [mistralrs.WRITER]


def register(engine: Engine) -> None:
    """Make `engine` available under its id."""
    ENGINES[engine.info.id] = engine


register(TransformersEngine())
register(LlamaCppEngine())
register(VllmEngine())
register(EdgeLlmEngine())
register(TgiEngine())
register(TransformersJsEngine())
register(OllamaEngine())


def get_engine(engine_id: str | None) -> Engine:
    """The engine registered as `engine_id`, the reference engine for None (KeyError for
    an unknown id)."""
    return ENGINES[engine_id or REFERENCE_ENGINE]


def counterpart(engine_id: str | None) -> str:
    """The engine a comparison of engines sets against `engine_id`: the first other one."""
    return next(other for other in ENGINES if other != (engine_id or REFERENCE_ENGINE))


def named_engines() -> dict[str, EngineInfo]:
    """What the engines the page names by their part are: the reference, the stating
    engine and the content-format one (its templates print their labels)."""
    parts = {
        "reference": REFERENCE_ENGINE,
        "stating": STATING_ENGINE,
        "content_format": CONTENT_FORMAT_ENGINE,
    }
    return {part: ENGINES[engine_id].info for part, engine_id in parts.items()}


def command_writers(chosen: str | None = None) -> list[CommandWriter]:
    """Every engine and runtime that writes command lines, in the Command view's order:
    by rank, except that an engine chosen over the default comes first (a user who chose
    Ollama looks for Ollama's commands). The default engine is nobody's choice: the page's
    first paint shows the first by rank, and the order stays."""
    picked = chosen in ENGINES and chosen != DEFAULT_ENGINE
    first = ENGINES[chosen].commands if picked else None
    writers = [engine.commands for engine in ENGINES.values() if engine.commands is not None]
    return sorted([*writers, *RUNTIMES], key=lambda writer: (writer is not first, writer.rank))


def command_notes(facts: dict[str, Any]) -> dict[str, str]:
    """Every engine's notes on its command lines (`CommandWriter.notes`)."""
    notes: dict[str, str] = {}
    for engine in ENGINES.values():
        if engine.commands is not None:
            notes.update(engine.commands.notes(facts))
    return notes


def engine_list() -> list[dict[str, str]]:
    """`{id, name, version, description}` of every engine, in registry order."""
    return [engine.info.to_json() for engine in ENGINES.values()]


def model_refusals(model: ModelFiles) -> dict[str, str]:
    """Why each engine's program would not load the Hugging Face model `model` describes
    (`Engine.model_refusal`), by engine id; only the engines that would not load it."""
    refusals = {id: engine.model_refusal(model) for id, engine in ENGINES.items()}
    return {id: refusal for id, refusal in refusals.items() if refusal}


def render(request: RenderRequest, limits: RenderLimits = DEFAULT_LIMITS) -> Rendered:
    """Render `request` with the engine it names, its tool-call arguments in the form its
    caller sends them (`app.render.client`); raises `TemplateProblem`."""
    return render_with(get_engine(request.engine), as_sent(request)[0], limits)


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
        if engine.reader is None:
            continue
        options = [option.to_json() for option in engine.reader.options(blank)]
        if options:
            choices.append({"id": engine.info.id, "name": engine.info.name, "options": options})
    return choices
