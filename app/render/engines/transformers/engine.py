"""The transformers engine: what it is, and its hooks (rendering in `chat`, reading an
answer in `answers`, command lines in `commands`)."""

from __future__ import annotations

from app.render.core import Engine, EngineInfo, Rendered, RenderRequest
from app.render.engines.transformers import chat
from app.render.engines.transformers import commands as transformers_commands
from app.render.engines.transformers.answers import TransformersReader
from app.render.limits import RenderLimits


class TransformersEngine(Engine):
    """Python's Jinja, as transformers' `apply_chat_template` (and vLLM, SGLang) run it."""

    info = EngineInfo(
        id="transformers",
        name="transformers (Python, SGLang)",
        #: The version the conformance tests render against (pyproject's test extras).
        version="5.23.0",
        description=(
            "What transformers' apply_chat_template(..., tokenize=False) returns: Python's "
            "Jinja in transformers' sandbox, as vLLM and SGLang render too."
        ),
    )
    reader = TransformersReader()
    commands = transformers_commands.WRITER

    #: The checks and rewrites apply_chat_template makes before compiling.
    prepare = staticmethod(chat.prepare)
    #: The messages with their reasoning under every name templates read.
    aliased = staticmethod(chat.aliased)

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Compile and render a prepared request (`chat`), its reasoning named by `aliased`."""
        return chat.render(request, limits, self.aliased)
