"""Render a conversation through a chat template exactly as transformers does.

This mirrors `PreTrainedTokenizerBase.apply_chat_template(..., tokenize=False)` and
`transformers.utils.chat_template_utils.render_jinja_template`: the same input
normalisation, the same variables, the same `continue_final_message` handling and the
same errors. It runs inside a sandbox worker (see `pool.py`); it never imports Flask.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.render.environment import compile_template, pinned_clock, shared_environment
from app.render.limits import RenderLimits
from app.render.problems import TemplateProblem, limit_exceeded, problem_from_exception

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


@dataclass(frozen=True)
class RenderRequest:
    """Everything a render depends on; the same fields as the `/api/render` body."""

    template: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    documents: list[dict[str, Any]] | None = None
    add_generation_prompt: bool = False
    continue_final_message: bool | str = False
    special_tokens: dict[str, str] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)
    now: datetime | None = None
    #: "transformers" (Python, the reference) or "llama.cpp" (what llama-server sends).
    engine: str = "transformers"
    #: Whether the vocabulary adds BOS/EOS itself (llama.cpp strips them from the text).
    add_bos_token: bool = False
    add_eos_token: bool = False


#: The render engines a request can ask for.
ENGINES = ("transformers", "llama.cpp")


@dataclass(frozen=True)
class Rendered:
    """A prompt, the spans of its `{% generation %}` blocks, and any engine rewrites."""

    prompt: str
    generation_spans: list[tuple[int, int]]
    rewrites: list[str] = field(default_factory=list)


#: Limits for callers that give none.
DEFAULT_LIMITS = RenderLimits()


def render_chat(request: RenderRequest, limits: RenderLimits = DEFAULT_LIMITS) -> Rendered:
    """Render `request`, raising `TemplateProblem` for anything the template or input does."""
    try:
        return _render(request, limits)
    except TemplateProblem:
        raise
    except Exception as error:
        raise problem_from_exception(error) from None


def _render(request: RenderRequest, limits: RenderLimits) -> Rendered:
    template_size = len(request.template.encode("utf-8", "surrogatepass"))
    if template_size > limits.template_bytes:
        raise limit_exceeded(
            "template_bytes",
            f"The template is {template_size:,} bytes; the limit is {limits.template_bytes:,}.",
        )
    variables = _template_variables(request)
    messages = _normalised_messages(request)
    compiled = compile_template(request.template)
    _check_documents(request.documents)
    messages = [_alias_reasoning(m) for m in messages]
    messages, continued = _tag_final_message(request, messages)
    prompt, spans = _generate(compiled, messages, variables, request, limits)
    if continued is not None:
        prompt = _cut_at_continue_tag(prompt, continued)
    return Rendered(prompt, [(start, min(end, len(prompt))) for start, end in spans])


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


def _template_variables(request: RenderRequest) -> dict[str, Any]:
    """Special tokens, then kwargs on top of them: kwargs win, as in transformers."""
    clashes = sorted(RESERVED_KWARGS & request.kwargs.keys())
    if clashes:
        raise TypeError(f"got multiple values for keyword argument {clashes[0]!r}")
    return {**request.special_tokens, **request.kwargs}


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
    compiled: Any,
    messages: list[dict[str, Any]],
    variables: dict[str, Any],
    request: RenderRequest,
    limits: RenderLimits,
) -> tuple[str, list[tuple[int, int]]]:
    """Stream the render, stopping as soon as the output passes its limit."""
    blocks: list[str] = []
    output_length = [0]
    spans: list[tuple[int, int]] = []
    context = dict(
        messages=messages,
        tools=request.tools,
        documents=request.documents,
        add_generation_prompt=request.add_generation_prompt,
        **variables,
    )
    tracker = shared_environment().track_generation
    with pinned_clock(request.now), tracker(output_length, spans):
        for block in compiled.generate(**context):
            blocks.append(block)
            output_length[0] += len(block)
            if output_length[0] > limits.output_chars:
                raise limit_exceeded(
                    "output_chars",
                    f"The template wrote more than {limits.output_chars:,} characters.",
                )
    return "".join(blocks), spans


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
