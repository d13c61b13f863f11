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

from app.render.render_request import RenderRequest


def renderer(request: RenderRequest) -> str | None:
    """The RENDERER the loaded Modelfile names, if any."""
    return request.model.renderer if request.model is not None else None


def family(request: RenderRequest) -> str | None:
    """The loaded model's family (a GGUF's architecture, a registry config's
    model_family), if known."""
    return request.model.family if request.model is not None else None


def with_model(request: RenderRequest) -> tuple[RenderRequest, list[str]]:
    """The request with the model's messages and SYSTEM put where /api/chat puts them,
    and the sentences saying so (none when the model adds nothing)."""
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
