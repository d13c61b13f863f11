"""The transformers.js engine: `apply_chat_template(..., {tokenize: false})` in JavaScript.

transformers.js (and Hugging Face's chat-template playground) compile templates with
@huggingface/jinja, a JavaScript reimplementation of Jinja, and pass the conversation as
the caller gave it: no keys dropped, no reasoning aliases, no `continue_final_message`
(an unknown option is just one more template variable). This module builds the template
variables as `PreTrainedTokenizer.apply_chat_template` does; `node.py` renders them in a
bounded Node process.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.render.core import Engine, EngineInfo, Help, Rendered, RenderRequest
from app.render.engines.transformersjs.node import node_renderer
from app.render.limits import RenderLimits

#: The special tokens transformers.js reads from the tokenizer config and passes to the
#: template (its SPECIAL_TOKEN_ATTRIBUTES); others, such as Gemma 3's `boi_token`, are not.
SPECIAL_TOKEN_NAMES = (
    "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
)  # fmt: skip

#: Options apply_chat_template takes out of its options object before the rest become
#: template variables: a kwarg of one of these names is an option, never a variable.
OPTION_NAMES = frozenset(
    {
        "tools", "documents", "chat_template", "add_generation_prompt", "tokenize", "padding",
        "truncation", "max_length", "return_tensor", "return_dict", "tokenizer_kwargs",
    }
)  # fmt: skip


class TransformersJsEngine(Engine):
    """@huggingface/jinja in Node, with the variables transformers.js passes.

    It checks nothing before rendering (`Engine.prepare`): transformers.js renders even
    an empty conversation, and lets a template read null values.
    """

    info = EngineInfo(
        id="transformers.js",
        name="transformers.js (@huggingface/jinja)",
        #: The @huggingface/jinja release package-lock.json pins (a test checks they agree).
        version="0.5.11",
        description=(
            "What transformers.js's apply_chat_template(..., {tokenize: false}) returns: "
            "@huggingface/jinja 0.5.11 run in Node, as Hugging Face's chat-template playground "
            "renders too."
        ),
        help=Help(
            no_command=(
                "transformers.js, which renders in your own JavaScript "
                "(tokenizer.apply_chat_template)"
            ),
            no_parser=(
                "transformers.js has no chat-completion parser: the text its generate() decodes "
                "is the application's to read, markup and all."
            ),
        ),
    )

    def render(self, request: RenderRequest, limits: RenderLimits) -> Rendered:
        """Render in this process's Node child; raises `TemplateProblem`."""
        context, rewrites = chat_context(request)
        prompt = node_renderer(limits).render(request.template, context, clock_fields(request.now))
        return Rendered(prompt, [], rewrites)


def chat_context(request: RenderRequest) -> tuple[dict[str, Any], list[str]]:
    """The template variables apply_chat_template passes, and what differs from the request.

    Its order: messages, add_generation_prompt, tools, documents, then the special tokens
    that are set, then the remaining options (kwargs), which win over the tokens.
    """
    rewrites: list[str] = []
    context: dict[str, Any] = {
        "messages": request.messages,
        "add_generation_prompt": request.add_generation_prompt,
        "tools": request.tools,
        "documents": request.documents,
    }
    for name in SPECIAL_TOKEN_NAMES:
        if request.special_tokens.get(name):  # an empty token is left out, as in JS
            context[name] = request.special_tokens[name]
    ignored = sorted(set(request.special_tokens) - set(SPECIAL_TOKEN_NAMES))
    if ignored:
        rewrites.append(
            "special tokens transformers.js does not pass to templates: " + ", ".join(ignored)
        )
    options = sorted(OPTION_NAMES & request.kwargs.keys())
    if options:
        rewrites.append(
            "kwargs taken as apply_chat_template options, not template variables: "
            + ", ".join(options)
        )
    context.update({k: v for k, v in request.kwargs.items() if k not in OPTION_NAMES})
    if request.continue_final_message:
        # transformers.js has no such option: like any unknown option it becomes a variable.
        context["continue_final_message"] = request.continue_final_message
        rewrites.append(
            "continue_final_message: transformers.js does not continue the final message; "
            "it passes the flag to the template as a variable"
        )
    return context, rewrites


def clock_fields(now: datetime | None) -> list[int] | None:
    """The local time fields `strftime_now` reads, or None for the real clock."""
    if now is None:
        return None
    return [now.year, now.month, now.day, now.hour, now.minute, now.second, now.microsecond // 1000]
