"""The transformers engine: `apply_chat_template(..., tokenize=False)` in Python."""

from app.render.engines.transformers.chat import TransformersEngine

__all__ = ["TransformersEngine"]
