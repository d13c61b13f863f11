"""TensorRT Edge-LLM: vLLM's request normalisation with Edge-LLM's documented differences.

Edge-LLM keeps the provider's Jinja unchanged and normalises requests following vLLM's
server contract. Its differences are the `EDGE_LLM` contract's fields: every tool result
becomes a string; `reasoning_content` is read as a legacy alias of `reasoning`; an
image/video/audio part with a string-only template is refused (no processor contract);
the template sees `bos_token` and `eos_token` of the special tokens. The request fields
`tool_choice`, `parallel_tool_calls`, `enable_thinking` and `reasoning_effort` reach the
template as the kwargs of the same names. A named template set cannot occur here: a
request carries one template.

Edge-LLM renders with Pantor Inja, a C++ engine that cannot run here: this engine renders
with transformers' Python Jinja, so a construct Inja does not support, which fails
Edge-LLM's model loading, renders here.
"""

from __future__ import annotations

from app.render.engines.vllm.contract import EDGE_LLM
from app.render.engines.vllm.engine import ServerEngine


class EdgeLlmEngine(ServerEngine):
    """TensorRT Edge-LLM's request contract, rendered with Python's Jinja."""

    id = "edge-llm"
    name = "TensorRT Edge-LLM (request contract)"
    #: The documentation the contract was read from.
    version = "0.11 docs"
    description = (
        "TensorRT Edge-LLM's request contract: vLLM's normalisation with Edge-LLM's "
        "differences (tool results as strings, reasoning_content alias, media refused for "
        "string templates, bos/eos only). Its C++ Inja engine cannot run here: the render "
        "is Python Jinja's."
    )
    contract = EDGE_LLM
    no_command = "TensorRT Edge-LLM, whose documentation names no option that takes a template file"
    no_parser = (
        "TensorRT Edge-LLM hands back the generated text: the playground knows of no "
        "tool-call or reasoning parser in its runtime, so an application gets the "
        "completion as it is and reads any markup in it itself."
    )
