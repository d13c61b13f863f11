"""The render request: everything a render depends on, read by every engine.

Below `app.render.core` (the engine interface) and `app.render.answer` (a completion to
read continues a render request), which both build on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: The values `RenderRequest.content_format` takes, as vLLM's server flag does.
CONTENT_FORMATS = ("auto", "string", "openai")
#: The values `RenderRequest.tool_arguments` takes (see `app.render.client`).
TOOL_ARGUMENT_FORMS = ("as_written", "json_text", "objects")
#: The values `RenderRequest.template_kind` takes: a Jinja chat template, or a Go template
#: (a Modelfile's TEMPLATE), which only engines that say so render.
TEMPLATE_KINDS = ("jinja", "go")


@dataclass(frozen=True)
class ModelFiles:
    """What the loaded source says of its model, for the engines whose program reads it:
    a Hugging Face model's template files (`Engine.model_refusal`), or what a Modelfile
    (or a registry model's layers) sets beside its TEMPLATE (the pipeline binds it to the
    request: `RenderRequest.model`)."""

    #: Its named templates besides the default one: `additional_chat_templates/NAME.jinja`
    #: files, or the names of a `chat_template` list in tokenizer_config.json.
    named_templates: tuple[str, ...] = ()
    #: Whether a `chat_template.json` holds a template (a processor's).
    json_template: bool = False
    #: A Modelfile's RENDERER and PARSER: the names of the Go code that writes the prompt
    #: and reads the answer for that model family (None: not named).
    renderer: str | None = None
    parser: str | None = None
    #: Its `PARAMETER stop` strings, in order, and its SYSTEM message (None: none).
    stop: tuple[str, ...] = ()
    system: str | None = None
    #: Its stored messages (a Modelfile's MESSAGE commands): (role, content), in order.
    messages: tuple[tuple[str, str], ...] = ()
    #: The model's family: a GGUF's `general.architecture`, or a registry model's
    #: `model_family` (None: not known). Ollama picks some behaviour by it.
    family: str | None = None
    #: The capabilities its config lists (a registry model's: "tools", "thinking" ...).
    capabilities: tuple[str, ...] = ()
    #: The model's name as its source gives it (a registry model's; None: not known).
    name: str | None = None
    #: A GGUF's `general.architecture` and `general.parameter_count`, which a program that
    #: makes a model from the GGUF may read (None: the source is no GGUF, or says none).
    architecture: str | None = None
    parameter_count: int | None = None


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
    #: The id of a registered engine (`app.render.engines`); None: the reference engine.
    engine: str | None = None
    #: Whether the vocabulary adds BOS/EOS itself (llama.cpp strips them from the text).
    add_bos_token: bool = False
    add_eos_token: bool = False
    #: How vLLM-style engines shape message content (`--chat-template-content-format`):
    #: "auto" detects it from the template, "string" or "openai" force it.
    content_format: str = "auto"
    #: How the caller sends tool-call arguments (`app.render.client`): "as_written" (the
    #: messages exactly as given), "json_text" (as OpenAI clients send them) or "objects"
    #: (as library callers pass them). The same for every engine.
    tool_arguments: str = "as_written"
    #: What language `template` is in (`TEMPLATE_KINDS`): "jinja", or "go" for a Go
    #: template (`Engine.template_kinds` says which engines render one).
    template_kind: str = "jinja"
    #: What the loaded source says of its model (`ModelFiles`; None: no source, or one
    #: that says nothing): bound by the pipeline, never read from a body or saved.
    model: ModelFiles | None = None
