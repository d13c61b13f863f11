"""What a loaded model's template files are, for the engines whose program checks them
when it loads the model (`Engine.model_refusal`): a source's templates, read back."""

from __future__ import annotations

from app.render.core import ModelFiles
from app.sources.hf import PROCESSOR_TEMPLATE
from app.sources.source import Source


def model_files(source: Source | None) -> ModelFiles | None:
    """The Hugging Face model's named templates (every template besides the default one
    and `chat_template.json`'s, `processor`, oversized ones included) and whether a
    `chat_template.json` holds one; None without a source, or for a GGUF file, which is
    no model those programs read."""
    if source is None or source.kind != "hf":
        return None
    names = [*source.templates, *source.oversized_templates]
    named = tuple(name for name in names if name not in ("default", PROCESSOR_TEMPLATE))
    return ModelFiles(named, PROCESSOR_TEMPLATE in names)
