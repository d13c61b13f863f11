"""The prompt `common_chat_templates_apply` yields: the template rendered, as llama.cpp
renders it for the template's handler or the autoparser.

A handler matters for the prompt in three ways (`hooks`): it may adjust the messages
before rendering, patch the rendered prompt, and write the continuation of a final
assistant message itself (prefill). Without one, the autoparser's prefill
(`generator.continuation_prompt`) writes the generation prompt up to the reasoning start
tag, the tag, the reasoning and — when the content is continued — the end tag and the
content. A BOS at the start and an EOS at the end are cut when the vocabulary adds them.
"""

from __future__ import annotations

import copy
import functools

from app.render.engines.llamacpp.apply.autoparser_cache import reasoning_for
from app.render.engines.llamacpp.apply.types import ChatTemplate, ParseInputs
from app.render.engines.llamacpp.autoparser.generator import continuation_prompt
from app.render.engines.llamacpp.context import generation_prompt, render_messages
from app.render.engines.llamacpp.hooks import Continued, PromptHooks
from app.render.engines.llamacpp.messages import ChatMessage


def build_prompt(
    template: ChatTemplate,
    inputs: ParseInputs,
    handler: PromptHooks | None,
    continued: ChatMessage | None,
    rewrites: list[str],
) -> str:
    """The prompt for the inputs; each rewrite on the way is appended to `rewrites`."""
    context = template.context(inputs)
    # The inputs are shared with the answer side: a handler adjusts a copy.
    messages = copy.deepcopy(inputs.messages)
    add_generation_prompt = inputs.add_generation_prompt
    if handler is not None and handler.adjust is not None:
        messages = handler.adjust(messages, rewrites)
    prompt = render_messages(context, messages, add_generation_prompt, rewrites)
    if handler is not None and handler.patch is not None:
        prompt = handler.patch(prompt, add_generation_prompt, rewrites)
    if continued is None or continued.is_empty():
        return prompt
    content = inputs.continue_final_message == "content"
    # The generation prompt takes two renders: made only when asked for.
    gen = functools.partial(generation_prompt, context, messages)
    if handler is None:
        text = continued.render_content() if content else None
        prompt += continuation_prompt(
            gen(), reasoning_for(template), continued.reasoning_content, text
        )
    elif handler.continuation is not None:
        prompt += handler.continuation(Continued(continued, content, prompt, gen))
    rewrites.append(
        "final assistant message continued (prefill): it is written after the "
        "template's opening of the turn, left open"
    )
    return prompt
