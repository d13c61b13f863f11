"""Ollama's model-specific parsers, by the name a Modelfile's `PARSER` gives them.

Each reads a whole answer (with the request's tools and `think` value) into an
`OllamaMessage`, as `model/parsers/` does at ollama/ollama fb30760 (`ParserForName`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.render.engines.ollama.parsers import (
    cohere,
    deepseek3,
    gemma4,
    glm46,
    harmony,
    lfm2,
    olmo3,
    qwen3,
    qwen3coder,
    qwen35,
)
from app.render.engines.ollama.parsers.message import OllamaMessage

Parser = Callable[[str, list[dict[str, Any]] | None, bool | str | None], OllamaMessage]

PARSERS: dict[str, Parser] = {
    "qwen3": qwen3.make(thinking_support=False, default_thinking=False),
    "qwen3-thinking": qwen3.make(thinking_support=True, default_thinking=True),
    "qwen3-coder": qwen3coder.parse,
    "qwen3.5": qwen35.parse,
    "glm-4.7": glm46.make(start_thinking=True),
    "harmony": harmony.parse,
    "deepseek3": deepseek3.parse,
    "gemma4": gemma4.make(thinking_support=True),
    "gemma4-no-thinking": gemma4.make(thinking_support=False),
    "lfm2": lfm2.make(thinking_support=False),
    "lfm2-thinking": lfm2.make(thinking_support=True),
    "cohere": cohere.parse,
    "olmo3": olmo3.parse,
    "olmo3-think": olmo3.parse_think,
    # Ollama's passthrough: the answer is the content, as it came.
    "passthrough": lambda text, tools, think=None: OllamaMessage(content=text),
}

__all__ = ["PARSERS", "OllamaMessage", "Parser"]
