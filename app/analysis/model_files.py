"""What a loaded model's files say of it, for the engines whose program reads them: a
Hugging Face model's template files (`Engine.model_refusal`), or what a Modelfile (or a
registry model's layers) sets beside its TEMPLATE (bound to the render request)."""

from __future__ import annotations

from app.render.core import ModelFiles
from app.sources.hf import PROCESSOR_TEMPLATE
from app.sources.source import Source


def model_files(source: Source | None) -> ModelFiles | None:
    """The Hugging Face model's named templates (every template besides the default one
    and `chat_template.json`'s, `processor`, oversized ones included) and whether a
    `chat_template.json` holds one; a Modelfile's renderer, parser, stop strings and
    system message; None without a source, or for a GGUF file, which says nothing more
    than its template."""
    if source is None:
        return None
    if source.ollama is not None:
        said = source.ollama
        return ModelFiles(
            renderer=said.renderer, parser=said.parser, stop=said.stop, system=said.system
        )
    if source.kind != "hf":
        return None
    names = [*source.templates, *source.oversized_templates]
    named = tuple(name for name in names if name not in ("default", PROCESSOR_TEMPLATE))
    return ModelFiles(named, PROCESSOR_TEMPLATE in names)
