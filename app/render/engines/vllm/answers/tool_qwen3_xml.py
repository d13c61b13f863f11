"""vLLM's `qwen3_xml` tool parser: in vLLM 0.33.0 the same class as `qwen3_coder`
(`Qwen3EngineToolParser`, the Qwen3 parser engine), registered under a second name."""

from __future__ import annotations

from app.render.engines.vllm.answers.tool_qwen3_coder import extract

NAME = "qwen3_xml"

__all__ = ["NAME", "extract"]
