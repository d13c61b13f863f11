"""The llama.cpp engine: llama-server's rendering (`render`), its capabilities, command
lines and answer parser, behind the engine interface."""

from __future__ import annotations

from app.problems import TemplateProblem
from app.render.core import Engine, EngineInfo, Rendered, RenderRequest
from app.render.engines.llamacpp import commands as llamacpp_commands
from app.render.engines.llamacpp.answers import LlamaCppReader
from app.render.engines.llamacpp.messages import LlamaCppInputError
from app.render.engines.llamacpp.render import render_prompt
from app.render.engines.llamacpp.templates_init import template_capabilities
from app.render.limits import RenderLimits, check_template_size


class LlamaCppEngine(Engine):
    """llama-server's `/apply-template`: its rewrites, variables and Jinja engine."""

    info = EngineInfo(
        id="llama.cpp",
        name="llama.cpp (llama-server)",
        #: The llama-server build whose recorded renders the tests compare against.
        version="b11434",
        description=(
            "What llama-server (build b11434) returns from /apply-template: its message "
            "rewrites, its template variables and the semantics of its own Jinja engine."
        ),
        program="llama-server",
        openai_server=True,
    )
    reader = LlamaCppReader()
    commands = llamacpp_commands.WRITER

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Render as llama-server would; a request it refuses is an `InvalidRequest`."""
        try:
            return render_prompt(request, limits)
        except LlamaCppInputError as error:
            raise TemplateProblem("InvalidRequest", str(error)) from None

    def capabilities(self, template: str, limits: RenderLimits) -> dict[str, bool]:
        """llama-server's `chat_template_caps`, detected by its probes."""
        check_template_size(template, limits)
        return template_capabilities(template, limits)
