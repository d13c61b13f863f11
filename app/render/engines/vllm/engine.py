"""vLLM's server: it normalises a chat request the vLLM way, then renders with
transformers.

The steps, in vLLM's order (vllm/renderers/hf.py `HfRenderer.render_messages`):

1. the request's flags and options are checked and merged (`options`);
2. the content format is resolved: the request's, or vLLM's `auto` detection
   (`content_format`);
3. the messages are parsed into vLLM's conversation (`messages`, `parts`);
4. developer and system messages are consolidated for templates without a developer
   role (`roles`);
5. transformers renders the result (`app.render.engines.transformers`), unchanged.

Every rule that changes the request is reported as a sentence in `rewrites`.
"""

from __future__ import annotations

from typing import ClassVar

from app.render.core import Engine, EngineInfo, Rendered, RenderRequest
from app.render.engines.transformers import TransformersEngine
from app.render.engines.vllm import commands as vllm_commands
from app.render.engines.vllm.answers import READER
from app.render.engines.vllm.content_format import detect_content_format
from app.render.engines.vllm.contract import VLLM, Contract
from app.render.engines.vllm.paths import other_paths
from app.render.engines.vllm.render import PINNED_TRANSFORMERS
from app.render.engines.vllm.render import render as server_render
from app.render.limits import RenderLimits

#: The vLLM release the rules follow, checked against what it renders
#: (tests/test_vllm_real.py, recorded by oracles/vllm/record.py).
VLLM_VERSION = "0.33.0"


class ServerEngine(Engine):
    """A server that reshapes the request under its `contract`, then renders with
    `transformers` (one instance serves every request)."""

    contract: ClassVar[Contract]
    transformers: ClassVar[TransformersEngine] = TransformersEngine()

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Normalise as the server does, then render as transformers does (`render`)."""
        return server_render(request, limits, self.contract, self.transformers)


class VllmEngine(ServerEngine):
    """vLLM's OpenAI-compatible server: its request rules, then transformers."""

    info = EngineInfo(
        id="vllm",
        name="vLLM (OpenAI server)",
        version=VLLM_VERSION,
        description=(
            f"What vLLM {VLLM_VERSION}'s /v1/chat/completions renders for a Hugging Face "
            "tokenizer: its request rules (content format, message keys, tool-call arguments, "
            "reasoning, developer and system messages, kwargs, tools), then transformers' "
            "apply_chat_template as vLLM installs it. Not modelled: gpt-oss models, which vLLM "
            "renders through Harmony, not the template; Mistral models served with Mistral's "
            "own tokenizer (tekken.json or tokenizer.model.v*, unless --tokenizer-mode hf); the "
            "renderers vLLM picks for some architectures (DeepSeek V3.2, V4 and V4.1, Kimi K3, "
            "Inkling); and Cohere's melody renderer (--tokenizer-mode cohere)."
        ),
        openai_server=True,
    )
    reader = READER
    contract = VLLM
    transformers = PINNED_TRANSFORMERS
    commands = vllm_commands.WRITER

    #: What `--chat-template-content-format auto` decides for a template.
    content_format = staticmethod(detect_content_format)
    #: The models vLLM renders another way than with the template.
    caveats = staticmethod(other_paths)
