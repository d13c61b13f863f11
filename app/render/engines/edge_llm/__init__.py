"""The edge-llm engine: TensorRT Edge-LLM's request contract on vLLM's normalisation."""

from app.render.engines.edge_llm.engine import EdgeLlmEngine

__all__ = ["EdgeLlmEngine"]
