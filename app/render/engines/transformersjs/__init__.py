"""The transformers.js engine: @huggingface/jinja run in a bounded Node process."""

from app.render.engines.transformersjs.engine import TransformersJsEngine

__all__ = ["TransformersJsEngine"]
