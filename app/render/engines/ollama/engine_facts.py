"""What a loaded Modelfile says of the model that changes the prompt: its RENDERER picks
Ollama's renderer path, and its SYSTEM opens a chat without a system message of its own
(`server/routes.go`, ChatHandler, at ollama/ollama fb30760). The pipeline binds them to
the request (`RenderRequest.model`).
"""

from __future__ import annotations

from dataclasses import replace

from app.render.render_request import RenderRequest


def renderer(request: RenderRequest) -> str | None:
    """The RENDERER the loaded Modelfile names, if any."""
    return request.model.renderer if request.model is not None else None


def with_system(request: RenderRequest) -> RenderRequest:
    """The request with the Modelfile's SYSTEM first, as /api/chat puts it when the chat
    does not open with a system message of its own (an empty chat gets none)."""
    system = request.model.system if request.model is not None else None
    messages = request.messages
    if not system or not messages or messages[0].get("role") == "system":
        return request
    return replace(request, messages=[{"role": "system", "content": system}, *messages])
