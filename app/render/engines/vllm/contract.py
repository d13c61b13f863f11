"""What vLLM's server accepts: the data its request rules read (`messages`, `parts`,
`options`). TensorRT Edge-LLM once shared these rules with its documented differences;
its engine now follows Edge-LLM's own chat template code (`app.render.engines.edge_llm`).
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
    #: Whether every tool result becomes a string (Edge-LLM), or only one made of text
    #: parts (vLLM keeps a tool result with other parts, such as `tool_reference`, a list).
    tool_results_as_strings: bool
    #: Whether an image/audio/video part is refused with a string-format template
    #: because the server has no placeholder for it (Edge-LLM without a processor
    #: contract); False: the server writes a placeholder the playground cannot know.
    media_refused_for_string_templates: bool
    #: The special tokens the template sees; None: all of them (transformers' way).
    special_tokens: tuple[str, ...] | None


#: vLLM's OpenAI-compatible server (`vllm serve`) at the release the engine follows
#: (`VLLM_VERSION`), read from vllm/renderers and vllm/entrypoints/openai/chat_completion.
VLLM = Contract(
    server="vLLM",
    # The request model renames a client's `reasoning_content` to `reasoning` unless
    # `reasoning` is set (ChatCompletionRequest._normalize_messages_before).
    reasoning_keys=("reasoning", "reasoning_content"),
    tool_results_as_strings=False,
    media_refused_for_string_templates=False,
    special_tokens=None,
)
