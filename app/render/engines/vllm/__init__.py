"""The vllm engine: vLLM's request normalisation (`engine`, `options`, `messages`, `parts`,
`roles`), then transformers' render; `contract` holds what differs per server, so the
edge-llm engine reuses it all."""

from app.render.engines.vllm.engine import VllmEngine

__all__ = ["VllmEngine"]
