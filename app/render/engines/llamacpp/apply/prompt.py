"""The prompt `common_chat_templates_apply` yields: the template rendered, as llama.cpp
renders it for the template's family or the autoparser.

A family's handler may adjust the messages before rendering and patch the rendered
prompt (`hooks`). A continued final assistant message (prefill) is written after the
prompt as llama.cpp writes it: the chat params' generation prompt, which the family's
params or the autoparser's generator end with the continuation (chat.cpp:
`data.prompt += data.generation_prompt`). A BOS at the start and an EOS at the end are
cut when the vocabulary adds them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from app.render.engines.llamacpp.apply.types import ChatTemplate, ParseInputs
from app.render.engines.llamacpp.context import render_messages
from app.render.engines.llamacpp.hooks import PromptHooks
from app.render.engines.llamacpp.messages import ChatMessage


def build_prompt(
    template: ChatTemplate,
    inputs: ParseInputs,
    hooks: PromptHooks | None,
    continued: ChatMessage | None,
    prefill: Callable[[], str],
    rewrites: list[str],
) -> str:
    """The prompt for the inputs, with `prefill()` after it when a non-empty final
    message is continued; each rewrite on the way is appended to `rewrites`."""
    # The inputs are shared with the answer side: a handler adjusts a copy.
    messages = copy.deepcopy(inputs.messages)
    add_generation_prompt = inputs.add_generation_prompt
    if hooks is not None and hooks.adjust is not None:
        messages = hooks.adjust(messages, rewrites)
    prompt = render_messages(template.context(inputs), messages, add_generation_prompt, rewrites)
    if hooks is not None and hooks.patch is not None:
        prompt = hooks.patch(prompt, add_generation_prompt, rewrites)
    if continued is None or continued.is_empty():
        return prompt
    rewrites.append(
        "final assistant message continued (prefill): it is written after the "
        "template's opening of the turn, left open"
    )
    return prompt + prefill()
