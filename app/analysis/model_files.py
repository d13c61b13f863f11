"""What a loaded model's files say of it, for the engines whose program reads them: a
Hugging Face model's template files (`Engine.model_refusal`), or what a Modelfile (or a
registry model's layers) sets beside its TEMPLATE (bound to the render request)."""

from __future__ import annotations

from app.render.core import ModelFiles
from app.sources.hf import PROCESSOR_TEMPLATE
from app.sources.ollama_source import OLLAMA
from app.sources.source import Source

#: What an Ollama source (`OllamaModel`) says of its model, by the same names.
OLLAMA_FIELDS = ("renderer", "parser", "stop", "system", "messages", "family", "capabilities")


def model_files(source: Source | None) -> ModelFiles | None:
    """The Hugging Face model's named templates (every template besides the default one
    and `chat_template.json`'s, `processor`, oversized ones included) and whether a
    `chat_template.json` holds one; a Modelfile's renderer, parser, stop strings, system
    message, stored messages and model family; a GGUF file's architecture (its model
    family) and parameter count; None without a source."""
    if source is None:
        return None
    if source.ollama is not None:
        fields = {name: getattr(source.ollama, name) for name in OLLAMA_FIELDS}
        return ModelFiles(**fields, name=_registry_name(source))
    if source.kind == "gguf":
        architecture = source.metadata.get("architecture")
        architecture = architecture if isinstance(architecture, str) else None
        count = source.metadata.get("parameter_count")
        count = count if type(count) is int and count >= 0 else None
        return ModelFiles(family=architecture, architecture=architecture, parameter_count=count)
    if source.kind != "hf":
        return None
    names = [*source.templates, *source.oversized_templates]
    named = tuple(name for name in names if name not in ("default", PROCESSOR_TEMPLATE))
    return ModelFiles(named, PROCESSOR_TEMPLATE in names)


def _registry_name(source: Source) -> str | None:
    """A registry model's name (a Modelfile's model is named when it is created)."""
    name = source.metadata.get("name")
    return name if source.kind == OLLAMA and isinstance(name, str) else None
