"""Ollama's model-specific renderers (a Modelfile's RENDERER), by the name Ollama gives them.

A stand-in until the renderers are written: no renderer yet, so a request that names one
is refused in words by the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: A renderer: (messages as api.Message dicts, tools as api.Tool dicts or None, think:
#: None, a bool or a level) -> the prompt.
Renderer = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None, bool | str | None], str]

RENDERERS: dict[str, Renderer] = {}
