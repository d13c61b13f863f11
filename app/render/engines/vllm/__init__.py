"""The vllm engine: vLLM's request normalisation (`engine`, `options`, `messages`, `parts`,
`roles`), then transformers' render; `contract` holds what its rules read."""

from app.render.engines.vllm.engine import VllmEngine

__all__ = ["VllmEngine"]
