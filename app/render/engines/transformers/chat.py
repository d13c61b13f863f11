"""Render a conversation through a chat template exactly as transformers does.

This mirrors `PreTrainedTokenizerBase.apply_chat_template(..., tokenize=False)` and
`transformers.utils.chat_template_utils.render_jinja_template`: the same input
normalisation, the same variables, the same `continue_final_message` handling and the
same errors. It runs inside a sandbox worker (see `app.render.pool`); it never imports Flask.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from app.render.bounded import generate_bounded
from app.render.core import Rendered, RenderRequest
from app.render.environment import compile_template, pinned_clock, shared_environment
from app.render.limits import RenderLimits

#: What names a message's reasoning before the template sees it (see `aliased`).
Alias = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]

#: Names a message's reasoning is passed under; the first is the one templates read.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

#: What transformers appends to the continued text to find where it ends.
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "

#: Keyword arguments of transformers' own functions: a template kwarg with one of these
#: names collides with them and raises there, so it must here too.
RESERVED_KWARGS = frozenset(
    {
        "conversation", "conversations", "tools", "documents", "chat_template",
        "add_generation_prompt", "continue_final_message", "tokenize", "padding",
        "truncation", "max_length", "return_tensors", "return_dict",
        "return_assistant_tokens_mask", "tokenizer_kwargs", "messages",
    }
)  # fmt: skip

#: Arguments of transformers' `render_jinja_template` and of the template's `render`: a
#: special token with one of these names (possible through `extra_special_tokens`)
#: collides with them, since special tokens are passed as keyword arguments too.
RESERVED_SPECIAL_TOKENS = frozenset(
    {
        "conversations", "tools", "documents", "chat_template", "return_assistant_tokens_mask",
        "continue_final_message", "add_generation_prompt", "messages",
    }
)  # fmt: skip


def prepare(request: RenderRequest) -> RenderRequest:
    """The checks and rewrites apply_chat_template makes before compiling, in its order."""
    _check_kwargs(request)
    messages = _normalised_messages(request)
    _check_special_tokens(request)
    return replace(request, messages=messages)


def render(request: RenderRequest, limits: RenderLimits, alias: Alias | None = None) -> Rendered:
    """Compile and render a prepared request; `alias` names the messages' reasoning
    (`aliased` unless given: a pinned older transformers leaves it as it is)."""
    compiled = compile_template(request.template)
    _check_documents(request.documents)
    messages = (alias or aliased)(request.messages)
    messages, continued = _tag_final_message(request, messages)
    prompt, spans = _generate(compiled, messages, request, limits)
    if continued is not None:
        prompt = _cut_at_continue_tag(prompt, continued)
    return Rendered(prompt, [(start, min(end, len(prompt))) for start, end in spans])


def aliased(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with their reasoning under every name templates read (transformers
    5.21 and later: `reasoning_content`, and `thinking` for gpt-oss templates)."""
    return [_alias_reasoning(m) for m in messages]


def _normalised_messages(request: RenderRequest) -> list[dict[str, Any]]:
    """The checks and rewrites apply_chat_template makes before compiling, in its order."""
    if not request.messages:
        raise ValueError(
            "Cannot apply chat template to an empty conversation. Provide at least one message."
        )
    # Drop keys whose value is None: APIs send `content: null` that templates mishandle.
    messages = [{k: v for k, v in m.items() if v is not None} for m in request.messages]
    if request.continue_final_message and request.add_generation_prompt:
        raise ValueError(
            "continue_final_message and add_generation_prompt are not compatible. Use "
            "continue_final_message when you want the model to continue the final message, "
            "and add_generation_prompt when you want to add a header that will prompt it to "
            "start a new assistant message instead."
        )
    # The render mutates the final message, so it works on its own copy.
    return copy.deepcopy(messages)


def _check_documents(documents: list[Any] | None) -> None:
    for document in documents or []:
        if not isinstance(document, dict):
            raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")


def _alias_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    """Fill `reasoning_content` and `thinking` from whichever reasoning name was given."""
    reasoning = next(
        (message[key] for key in REASONING_FIELDS if message.get(key) is not None), None
    )
    if reasoning is None:
        return message
    return {"thinking": reasoning, **message, "reasoning_content": reasoning}


def _check_kwargs(request: RenderRequest) -> None:
    """A kwarg named like one of transformers' own arguments raises there."""
    clashes = sorted(RESERVED_KWARGS & request.kwargs.keys())
    if clashes:
        raise TypeError(f"got multiple values for keyword argument {clashes[0]!r}")


def _check_special_tokens(request: RenderRequest) -> None:
    """A special token named like an argument of the render raises there (after the
    messages are checked: transformers passes the tokens to `render_jinja_template`)."""
    clashes = [name for name in request.special_tokens if name in RESERVED_SPECIAL_TOKENS]
    if clashes:
        raise TypeError(f"got multiple values for keyword argument {clashes[0]!r}")


def _tag_final_message(
    request: RenderRequest, messages: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], Any]:
    """Append the continue tag to the final message; return the text being continued."""
    if not request.continue_final_message:
        return messages, None
    field_name = request.continue_final_message
    if not isinstance(field_name, str):
        field_name = "content"
    final = messages[-1]
    if (text := final.get(field_name)) is None:
        raise ValueError(
            f'continue_final_message is set but the final message has no "{field_name}" '
            "to continue!"
        )
    fields = [field_name]
    if field_name in REASONING_FIELDS:
        # Reasoning is copied under several names: tag every copy the template may read.
        fields = [name for name in REASONING_FIELDS if final.get(name) == text]
    if not any(name in request.template for name in fields):
        raise ValueError(
            f'continue_final_message is set to "{field_name}" but this is not an accepted '
            "field in the chat_template"
        )
    if isinstance(text, list | tuple):
        return messages, _tag_last_text_block(text)
    for name in fields:
        final[name] = final[name] + CONTINUE_TAG
    return messages, text


def _tag_last_text_block(blocks: list[Any]) -> str:
    for block in reversed(blocks):
        if "text" in block:
            text = block["text"]
            block["text"] = block["text"] + CONTINUE_TAG
            return text
    raise ValueError(
        "continue_final_message is set but we could not find any text to continue in the "
        "final message!"
    )


def _generate(
    compiled: Any, messages: list[dict[str, Any]], request: RenderRequest, limits: RenderLimits
) -> tuple[str, list[tuple[int, int]]]:
    """Stream the render within the output limit, recording `{% generation %}` spans."""
    written = [0]
    spans: list[tuple[int, int]] = []
    # Special tokens, then kwargs on top of them: kwargs win, as in transformers.
    context = dict(
        messages=messages,
        tools=request.tools,
        documents=request.documents,
        add_generation_prompt=request.add_generation_prompt,
        **{**request.special_tokens, **request.kwargs},
    )
    tracker = shared_environment().track_generation
    with pinned_clock(request.now), tracker(written, spans):
        prompt = generate_bounded(compiled, context, limits.output_chars, written)
    return prompt, spans


def _cut_at_continue_tag(prompt: str, continued: str) -> str:
    """Cut the prompt where the continued text ends, as transformers does."""
    if continued.strip() not in prompt or CONTINUE_TAG.strip() not in prompt:
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the chat "
            "after applying the chat template! This can happen if the chat template deletes "
            "portions of the final message. Please verify the chat template and final message "
            "in your chat to ensure they are compatible."
            f"Final message to continue: {continued.strip()}\nRendered chat:\n{prompt}"
        )
    tag_at = prompt.rindex(CONTINUE_TAG.strip())
    if prompt[tag_at : tag_at + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return prompt[:tag_at]
    # The template trimmed trailing spacing, so the continued text ends before it.
    return prompt[:tag_at].rstrip()
