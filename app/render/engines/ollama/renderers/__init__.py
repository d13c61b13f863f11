"""Ollama's model-specific renderers, by the name a Modelfile's `RENDERER` gives them.

Each turns Ollama's api.Message dicts (role, content, thinking, tool_calls
[{"function": {"name", "arguments"}}], tool_name), api.Tool dicts and the `think`
value (None, True/False or a level "low"/"medium"/"high") into the prompt, as
`model/renderers/` does at ollama/ollama fb30760 (`rendererForName`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.render.engines.ollama.renderers import (
    cohere,
    deepseek3,
    gemma4,
    glm47,
    lfm2,
    olmo3,
    qwen3coder,
)

Renderer = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None, bool | str | None], str]

RENDERERS: dict[str, Renderer] = {
    "qwen3-coder": qwen3coder.render,
    "deepseek3.1": deepseek3.render,
    "glm-4.7": glm47.render,
    "gemma4": gemma4.make(empty_block_on_nothink=False),
    "gemma4-small": gemma4.make(empty_block_on_nothink=False),
    "gemma4-large": gemma4.make(empty_block_on_nothink=True),
    # Ollama's RenderImgTags is off unless its server turns it on.
    "lfm2": lfm2.make(thinking=False),
    "lfm2-thinking": lfm2.make(thinking=True),
    "cohere": cohere.render,
    "olmo3": olmo3.make(extended=False),
    "olmo3.1": olmo3.make(extended=True),
    "olmo3-think": olmo3.make_think(is_32b=False),
    "olmo3-32b-think": olmo3.make_think(is_32b=True),
}
