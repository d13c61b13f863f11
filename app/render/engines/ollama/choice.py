"""Which way Ollama writes the prompt for a model made from a template, and why.

Facts read in ollama/ollama at fb30760996871fa9460115c753afd2c60d4ab0f7 (2026-08-21):
`server/images.go` (`GetModel`, `shouldPreferChatTemplate`), `server/routes.go`
(`usesOllamaRenderedChat`, `shouldUseGoTemplate`, `shouldUseHarmony`), `server/prompt.go`,
`server/model.go` (`detectChatTemplate`), `envconfig/config.go` (`OLLAMA_GO_TEMPLATE`).

- A RENDERER wins (the Modelfile's, or the one `ollama create` sets by the GGUF's
  architecture, `create.py`): Ollama's Go code for that family writes the prompt.
- Otherwise a Go TEMPLATE is rendered by Ollama itself, unless the GGUF's chat template
  has more capabilities (`capabilities.prefers_chat_template`); `OLLAMA_GO_TEMPLATE` set
  overrides that comparison (1: the TEMPLATE, 0: the chat template).
- A model whose family is gpt-oss and whose TEMPLATE has "<|start|>" and "<|end|>" uses
  Harmony (`family.py`): the same TEMPLATE writes the prompt, even where the chat
  template has more capabilities, and Ollama's Harmony parser reads the answer.
- Without a TEMPLATE the conversation goes to llama-server, which renders the GGUF's own
  chat template (since ollama#16031, 2026-05-29).
- A model starts with the TEMPLATE `{{ .Prompt }}`; an empty TEMPLATE leaves it.
- `ollama create` from a GGUF writes a TEMPLATE only when `template.Named` adopts an
  index entry (`template/named.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from app.render.engines.ollama.capabilities import (
    chat_template_capabilities,
    go_template_capabilities,
    listed,
    prefers_chat_template,
)
from app.render.engines.ollama.family import harmony_reasons, uses_harmony
from app.render.engines.ollama.template.named import (
    Match,
    TemplatesFolderError,
    load_index,
    named,
    templates_folder,
    unavailable,
)

GO_TEMPLATE, LLAMA_SERVER, RENDERER = "go-template", "llama-server", "renderer"
#: The TEMPLATE every Ollama model starts with (`template.DefaultTemplate`).
DEFAULT_TEMPLATE = "{{ .Prompt }}"
KINDS = ("jinja", "go")
_EMPTY_TEMPLATE = (
    "An empty TEMPLATE sets none: the model keeps Ollama's default `{{ .Prompt }}`, which "
    "writes the messages' text with no turn markers."
)
_NOT_ADOPTED = (
    "`ollama create` adopts no TEMPLATE: none of its templates is within Levenshtein "
    "distance 100 of this chat template."
)
_NO_CHAT_TEMPLATE = (
    "The GGUF has no chat template: `ollama create` adopts no TEMPLATE, and Ollama sends the "
    "conversation to llama-server, which falls back to its own default."
)


@dataclass(frozen=True)
class OllamaPath:
    """The way Ollama writes the prompt, and the sentences saying why."""

    path: str  # "go-template" | "llama-server" | "renderer"
    name: str | None  # the index entry, or the renderer, or None
    distance: int | None  # template.Named's Levenshtein distance, or None
    go_template: str | None  # the Go template the path renders with (go-template path)
    reasons: tuple[str, ...]  # sentences: why Ollama takes this path
    harmony: bool = False  # whether Ollama uses Harmony (`family.uses_harmony`)


def decide(
    template: str,
    template_kind: str,
    renderer: str | None = None,
    force_go_template: bool = False,
    family: str | None = None,
    renderer_reasons: tuple[str, ...] = (),
) -> OllamaPath:
    """The path Ollama takes for a model made from `template` (a GGUF's Jinja chat
    template, or a Modelfile's Go TEMPLATE), with `renderer` its RENDERER,
    `force_go_template` standing for `OLLAMA_GO_TEMPLATE=1` and `family` the model's
    family (None: not known); `renderer_reasons` say where the RENDERER came from when
    not from the Modelfile (`engine_facts.renderer_reasons`)."""
    if template_kind not in KINDS:
        raise ValueError(f"template_kind must be one of {', '.join(KINDS)}, not {template_kind!r}")
    if renderer:
        reasons = renderer_reasons or (_renderer_reason(renderer),)
        return OllamaPath(RENDERER, renderer, None, None, (*reasons, _renderer_wins(renderer)))
    if template_kind == "go":
        return _from_go_template(template, force_go_template, family)
    return _from_chat_template(template, force_go_template, family)


def _renderer_reason(renderer: str) -> str:
    """Where the RENDERER came from: the Modelfile."""
    return f"The Modelfile names RENDERER {renderer}."


def _renderer_wins(renderer: str) -> str:
    """What a RENDERER does."""
    return (
        f"With the renderer {renderer}, Ollama writes the prompt with its own Go code for that "
        "model family, and neither TEMPLATE nor the GGUF's chat template is used."
    )


def _from_go_template(template: str, forced: bool, family: str | None) -> OllamaPath:
    """A Modelfile's TEMPLATE: Ollama renders it (no GGUF chat template to weigh here)."""
    if template == "":
        return OllamaPath(GO_TEMPLATE, None, None, DEFAULT_TEMPLATE, (_EMPTY_TEMPLATE,))
    reasons = [
        "This is a Go TEMPLATE: Ollama renders it itself with Go's text/template and its own "
        "data (.Messages, .Tools, .System ...)."
    ]
    harmony = uses_harmony(family, template)
    if forced:
        reasons.append("OLLAMA_GO_TEMPLATE=1 keeps it whatever the GGUF's chat template offers.")
    elif not harmony:
        reasons.append(
            "Were the model's GGUF to carry a chat template with more capabilities (tools, "
            "thinking, a tool round trip), Ollama would send the conversation to llama-server "
            "with that template instead, unless OLLAMA_GO_TEMPLATE is set."
        )
    reasons += harmony_reasons(family, template)
    return OllamaPath(GO_TEMPLATE, None, None, template, tuple(reasons), harmony)


def _from_chat_template(jinja: str, forced: bool, family: str | None) -> OllamaPath:
    """A GGUF's chat template: what `ollama create` adopts, then which one Ollama uses."""
    if jinja == "":
        return OllamaPath(LLAMA_SERVER, None, None, None, (_NO_CHAT_TEMPLATE,))
    match, why_not = adoption(jinja)
    if match is not None:
        return _adopted(jinja, match, forced, family)
    return OllamaPath(LLAMA_SERVER, None, None, None, (why_not, _llama_server_reason()))


def adoption(jinja: str) -> tuple[Match | None, str]:
    """The entry `template.Named` adopts for a GGUF's chat template, or None and why:
    no entry is near enough, or the folder is not set, or not Ollama's."""
    folder, reason = templates_folder(), unavailable()
    if folder is None or reason:
        return None, f"{reason} This assumes `ollama create` adopts no TEMPLATE."
    try:
        match = _named(jinja, str(folder))
    except TemplatesFolderError as error:
        return None, f"{error}. This assumes `ollama create` adopts no TEMPLATE."
    return match, "" if match else _NOT_ADOPTED


@lru_cache(maxsize=4)
def _named(jinja: str, folder: str) -> Match | None:
    """The match, kept for the few templates a request asks about more than once (its
    render, its command lines and its findings each decide)."""
    return named(jinja, load_index(Path(folder)))


def _llama_server_reason() -> str:
    return (
        "Without a TEMPLATE, Ollama sends the conversation to llama-server, which renders "
        "the GGUF's own chat template."
    )


def _adopted(jinja: str, match: Match, forced: bool, family: str | None) -> OllamaPath:
    """An adopted index entry: its TEMPLATE, unless the chat template can do more (and
    the model does not use Harmony)."""
    entry, distance = match.entry, match.distance
    chat, go = chat_template_capabilities(jinja), go_template_capabilities(entry.go_template)
    reasons = [
        f"`ollama create` adopts its template {entry.name} as the TEMPLATE: it is at "
        f"Levenshtein distance {distance} from this chat template (under 100)."
    ]
    compared = f"This chat template supports {listed(chat)}; {entry.name} supports {listed(go)}."
    harmony = uses_harmony(family, entry.go_template)
    if forced:
        reasons += [compared, "OLLAMA_GO_TEMPLATE=1 makes Ollama render the TEMPLATE anyway."]
    elif harmony:
        reasons.append(compared)
    elif prefers_chat_template(jinja, entry.go_template):
        reasons += [
            compared + " The chat template can do more, so Ollama prefers it and sends the "
            "conversation to llama-server (OLLAMA_GO_TEMPLATE=1 would force the TEMPLATE).",
        ]
        return OllamaPath(LLAMA_SERVER, entry.name, distance, None, tuple(reasons))
    else:
        reasons += [compared + " The chat template can do no more, so Ollama renders the TEMPLATE."]
    reasons += harmony_reasons(family, entry.go_template)
    return OllamaPath(GO_TEMPLATE, entry.name, distance, entry.go_template, tuple(reasons), harmony)
