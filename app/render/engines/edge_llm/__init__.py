"""The edge-llm engine: TensorRT Edge-LLM's chat template code and its patched Inja."""

from app.render.engines.edge_llm.engine import EdgeLlmEngine

__all__ = ["EdgeLlmEngine"]
