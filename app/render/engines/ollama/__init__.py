"""The Ollama engine: what Ollama's /api/chat sends a model, from the template it picks."""

from app.render.engines.ollama.engine import OllamaEngine

__all__ = ["OllamaEngine"]
