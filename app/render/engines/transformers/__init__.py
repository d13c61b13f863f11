"""The transformers engine: `apply_chat_template(..., tokenize=False)` in Python."""

from app.render.engines.transformers.engine import TransformersEngine

__all__ = ["TransformersEngine"]
