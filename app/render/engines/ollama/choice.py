"""Which way Ollama renders a model made from a template (a stand-in).

The full choice (a RENDERER, the Go TEMPLATE `ollama create` picks from its index,
shouldPreferChatTemplate, OLLAMA_GO_TEMPLATE) is not written yet: this stand-in takes a
named renderer when one is given, and otherwise the GGUF's own Jinja through
llama-server, and says so in its reasons.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OllamaPath:
    """The way Ollama renders: a Go template, llama-server with the Jinja, or a renderer."""

    #: "go-template", "llama-server" or "renderer".
    path: str
    #: The index entry, or the renderer, or None.
    name: str | None
    #: template.Named's Levenshtein distance to the index entry, or None.
    distance: int | None
    #: The Go template the go-template path renders with.
    go_template: str | None
    #: Why Ollama takes this path, in sentences.
    reasons: tuple[str, ...]


def decide(
    template: str, template_kind: str, renderer: str | None = None, force_go_template: bool = False
) -> OllamaPath:
    """The path Ollama takes for a model made from `template` (stand-in: see the module)."""
    if template_kind == "go":
        return OllamaPath("go-template", None, None, template, ("The template is a Go template.",))
    if renderer:
        return OllamaPath(
            "renderer", renderer, None, None, (f"The Modelfile names RENDERER {renderer}.",)
        )
    reasons = (
        "Ollama renders the GGUF's own Jinja template through llama-server "
        "(which Go template ollama create would pick is not shown yet).",
    )
    return OllamaPath("llama-server", None, None, None, reasons)
