"""What a loaded model says that changes the prompt: its RENDERER picks Ollama's renderer
path; its stored messages (a Modelfile's MESSAGE commands) come before the chat; its
SYSTEM opens a chat without a system message of its own. The pipeline binds them to the
request (`RenderRequest.model`).

Facts (`server/routes.go`, ChatHandler, at ollama/ollama fb30760): /api/chat answers a
request without messages by loading the model and renders nothing; otherwise it sends
`append(m.Messages, req.Messages...)`, with `{"role": "system", "content": m.System}`
put first when the request's own first message is not a system message and the model
has a SYSTEM. The test is on the request's first message: a model message with the
system role does not keep SYSTEM out, and the request's system message comes after the
model's messages.
"""

from __future__ import annotations

from dataclasses import replace

from app.render.engines.ollama.capabilities import THINKING
from app.render.engines.ollama.create import created
from app.render.engines.ollama.family import is_gpt_oss
from app.render.engines.ollama.renderer_resolution import (
    LEGACY,
    human_number,
    resolve,
    resolved_said,
)
from app.render.engines.ollama.think_filter import filter_think_tags
from app.render.engines.ollama.think_filter import said as think_said
from app.render.render_request import ModelFiles, RenderRequest


def capabilities(request: RenderRequest) -> tuple[str, ...]:
    """The capabilities Ollama counts for the model besides its template's: those its
    config lists, and thinking for a gpt-oss family (`Capabilities`, server/images.go)."""
    model = request.model
    listed = model.capabilities if model is not None else ()
    return (*listed, THINKING) if is_gpt_oss(family(request)) else listed


def thinking_because(request: RenderRequest) -> str:
    """Why Ollama counts the model as thinking-capable, for the note."""
    model = request.model
    if model is not None and THINKING in model.capabilities:
        return "the model's config lists thinking among its capabilities, so it is"
    return "a gpt-oss model is" if is_gpt_oss(family(request)) else "the template is"


def model_of(request: RenderRequest) -> ModelFiles | None:
    """The loaded model as Ollama holds it: a GGUF's gets the RENDERER, PARSER and stop
    strings `ollama create` sets by its architecture (`create.py`)."""
    model = request.model
    if model is None or model.architecture is None:
        return model
    made = created(model.architecture, model.renderer, model.parser, model.stop)
    return replace(model, renderer=made.renderer, parser=made.parser, stop=made.stop)


def model_type(model: ModelFiles | None) -> str:
    """The config's model type `ollama create` writes for a GGUF: its parameter count as
    `format.HumanNumber` writes it (empty when not known)."""
    if model is None or model.architecture is None:
        return ""
    return human_number(model.parameter_count or 0)


def renderer(request: RenderRequest) -> str | None:
    """The renderer the model runs with: its RENDERER (the Modelfile's, or the one
    `ollama create` sets for its GGUF), with `gemma4` resolved as Ollama resolves it."""
    model = model_of(request)
    named = model.renderer if model is not None else None
    return resolve(named, _names(model), model_type(model))


def _names(model: ModelFiles | None) -> tuple[str, ...]:
    """The model's name, when its source gives one (a registry model's)."""
    return (model.name,) if model is not None and model.name else ()


def renderer_reasons(request: RenderRequest) -> list[str]:
    """Why the model has its renderer, when `ollama create` set it or Ollama resolved
    `gemma4` (none for a RENDERER a Modelfile names and Ollama takes as it is)."""
    model = request.model
    if model is None:
        return []
    made = created(model.architecture, model.renderer, model.parser, model.stop)
    said = [made.said] if made.said and model.architecture else []
    if made.renderer == LEGACY:
        held = model_of(request)
        said.append(resolved_said(renderer(request), _names(held), model_type(held)))
    return said


def family(request: RenderRequest) -> str | None:
    """The loaded model's family (a GGUF's architecture, a registry config's
    model_family), if known."""
    return request.model.family if request.model is not None else None


def with_model(request: RenderRequest) -> tuple[RenderRequest, list[str]]:
    """The request with the model's messages and SYSTEM put where /api/chat puts them,
    then the <think> blocks of earlier turns stripped for a model /api/chat strips them
    for (`think_filter.py`), and the sentences saying so (none when nothing changed)."""
    request, said = _with_stored(request)
    model = request.model
    family_, name = (model.family, model.name) if model is not None else (None, None)
    messages, changed = filter_think_tags(request.messages, family_, name)
    if not changed:
        return request, said
    return replace(request, messages=messages), [*said, *think_said(changed, family_, name)]


def _with_stored(request: RenderRequest) -> tuple[RenderRequest, list[str]]:
    """The request with the model's messages and SYSTEM put where /api/chat puts them,
    and the sentences saying so."""
    model = request.model
    if model is None or not request.messages:
        return request, []
    stored = [{"role": role, "content": text} for role, text in model.messages]
    opens = request.messages[0].get("role") != "system" and bool(model.system)
    system = [{"role": "system", "content": model.system}] if opens else []
    said = []
    if system:
        said.append(
            "The Modelfile's SYSTEM opens the chat, as /api/chat puts it first when the request "
            "does not open with a system message of its own."
        )
    if stored:
        count = f"{len(stored)} MESSAGE command" + ("s" if len(stored) != 1 else "")
        said.append(
            f"The Modelfile's {count} (the model's stored messages) come before the "
            "request's messages, as /api/chat prepends them to every chat."
        )
    if not said:
        return request, []
    return replace(request, messages=[*system, *stored, *request.messages]), said
