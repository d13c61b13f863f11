"""One record per template family llama.cpp hands to a specialized handler.

A family (common/chat.cpp `common_chat_try_specialized_template`, then the family's
`common_chat_params_init_*` in common/parsers/) is: how llama.cpp recognises its
template (`matches`), what its handler does to the prompt — adjusting the messages,
patching the render, writing a prefill, and whether it thinks by default
(`prompt`, `hooks.PromptHooks`) — and the chat params it derives for reading an answer
(`params`; None where only the detection and the prompt are reproduced).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.render.engines.llamacpp.apply.types import ChatParams, ParseInputs
from app.render.engines.llamacpp.hooks import PromptHooks


@dataclass(frozen=True)
class Family:
    """A specialized handler of llama.cpp: its detection, prompt hooks and parser."""

    #: The handler's id, as llama.cpp's logs and test-chat name it ("gpt_oss").
    key: str
    #: The name the page shows ("GPT-OSS").
    name: str
    #: llama.cpp's check of the template source.
    matches: Callable[[str], bool]
    #: The prompt hooks, or a function of the template source that gives them.
    prompt: PromptHooks | Callable[[str], PromptHooks]
    #: (source, inputs) -> the format, generation prompt and PEG parser; None: the
    #: parser is not reproduced.
    params: Callable[[str, ParseInputs], ChatParams] | None = None

    def hooks(self, source: str) -> PromptHooks:
        """The prompt hooks for this template source."""
        return self.prompt if isinstance(self.prompt, PromptHooks) else self.prompt(source)
