"""What vLLM's server accepts: the data its request rules read (`messages`, `parts`).
(TensorRT Edge-LLM once shared these rules; its engine now follows Edge-LLM's own chat
template code, `app.render.engines.edge_llm`, and the fields only it read are gone.)
"""

from __future__ import annotations

from dataclasses import dataclass


class Refused(ValueError):
    """A request the server answers with HTTP 400 before any template code runs."""


@dataclass(frozen=True)
class Contract:
    """The request contract of one server, as the shared rules read it."""

    #: How rewrites and refusals name the server.
    server: str
    #: Message keys an assistant's reasoning is read from, in order of preference.
    reasoning_keys: tuple[str, ...]


#: vLLM's OpenAI-compatible server (`vllm serve`) at the release the engine follows
#: (`VLLM_VERSION`), read from vllm/renderers and vllm/entrypoints/openai/chat_completion.
VLLM = Contract(
    server="vLLM",
    # The request model renames a client's `reasoning_content` to `reasoning` unless
    # `reasoning` is set (ChatCompletionRequest._normalize_messages_before).
    reasoning_keys=("reasoning", "reasoning_content"),
)
