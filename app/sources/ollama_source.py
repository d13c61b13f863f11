"""Ollama sources: a Modelfile, or the layers of a model read from an Ollama registry,
made into a `Source` whose template is a Go template (`template_kind` "go").

Both are parsed in a source worker, as uploads are (`worker.load_source`), from what the
store keeps: the Modelfile's bytes (kind `modelfile`), or the registry's layers as one
canonical JSON object (kind `ollama`: `canonical_layers`). Neither has a vocabulary.
"""

from __future__ import annotations

import json
from typing import Any

from app.sources.limits import SourceLimits
from app.sources.modelfile import ModelfileError, ModelfileLimits, OllamaModel, read_modelfile
from app.sources.source import Source, content_id, fitting, summary_over

#: The `kind` of the two stored forms.
MODELFILE, OLLAMA = "modelfile", "ollama"
#: The template's name in `Source.templates` (Ollama has one).
TEMPLATE_NAME = "default"
#: The fields of a registry model's stored JSON, and the type each may have.
LAYER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "template": (str, type(None)),
    "system": (str, type(None)),
    "params": (dict, type(None)),
    "renderer": (str, type(None)),
    "parser": (str, type(None)),
}
#: Fields added since the first stored form: a form without them is read as None.
LATER_FIELDS: dict[str, type | tuple[type, ...]] = {
    "messages": (list, type(None)),
    "family": (str, type(None)),
    "capabilities": (list, type(None)),
}


def canonical_layers(layers: dict[str, Any]) -> bytes:
    """The stored form of a registry model's layers, whose SHA-256 is the source's id."""
    return json.dumps(layers, sort_keys=True, ensure_ascii=False).encode("utf-8")


def modelfile_limits(limits: SourceLimits) -> ModelfileLimits:
    """The Modelfile bounds among a source's limits."""
    return ModelfileLimits(limits.modelfile_bytes, limits.modelfile_commands)


def load_modelfile(data: bytes, limits: SourceLimits) -> tuple[Source, int]:
    """A Modelfile's source and the bytes that rebuild it; `ModelfileError` naming the line."""
    model = read_modelfile(data, modelfile_limits(limits))
    return source_from_ollama(content_id(data), MODELFILE, model, limits), len(data)


def load_layers(data: bytes, limits: SourceLimits) -> tuple[Source, int]:
    """A registry model's source from its stored layers (`canonical_layers`)."""
    try:
        layers = json.loads(data)
    except ValueError:
        raise ModelfileError("the stored layers are not JSON") from None
    if type(layers) is not dict or not set(LAYER_FIELDS) <= set(layers) <= _ALL_FIELDS:
        raise ModelfileError("the stored layers are not those of an Ollama model")
    layers = {**dict.fromkeys(LATER_FIELDS), **layers}
    for name, kind in {**LAYER_FIELDS, **LATER_FIELDS}.items():
        if not isinstance(layers[name], kind):
            raise ModelfileError(f"the stored layers' {name} has the wrong type")
    source = source_from_ollama(content_id(data), OLLAMA, model_of_layers(layers), limits)
    # The page names a loaded model by its metadata's name, as for the other sources.
    source.metadata = {"name": layers["name"][:200]}
    return source, len(data)


_ALL_FIELDS = set(LAYER_FIELDS) | set(LATER_FIELDS)


def model_of_layers(layers: dict[str, Any]) -> OllamaModel:
    """What a registry model's layers say: its params layer's `stop` list and the other
    parameters (each value as JSON text, in a list), its stored messages, the config's
    renderer, parser, model family and capabilities."""
    params = dict(layers["params"] or {})
    stop = params.pop("stop", [])
    if type(stop) is not list or not all(type(item) is str for item in stop):
        raise ModelfileError("the params layer's stop is not a list of strings")
    parameters = {
        name: [_text(item) for item in (value if type(value) is list else [value])]
        for name, value in params.items()
    }
    return OllamaModel(
        model_from=layers["name"],
        template=layers["template"],
        system=layers["system"],
        stop=tuple(stop),
        parameters=parameters,
        renderer=layers["renderer"],
        parser=layers["parser"],
        messages=_messages(layers.get("messages")),
        family=layers.get("family"),
        capabilities=_capabilities(layers.get("capabilities")),
    )


def _capabilities(stored: list[Any] | None) -> tuple[str, ...]:
    """The config's capabilities, as stored (a list of strings)."""
    if stored is not None and not all(type(item) is str for item in stored):
        raise ModelfileError("the stored layers' capabilities are not all strings")
    return tuple(stored or ())


def _messages(stored: list[Any] | None) -> tuple[tuple[str, str], ...]:
    """The messages layer's api.Message objects as (role, content): a role and content
    that are not strings are refused; other fields (images, tool calls) are not kept."""
    messages = []
    for item in stored or []:
        if type(item) is not dict:
            raise ModelfileError("the messages layer holds something that is not a message")
        role, content = item.get("role", ""), item.get("content", "")
        if type(role) is not str or type(content) is not str:
            raise ModelfileError("a stored message's role or content is not a string")
        messages.append((role, content))
    return tuple(messages)


def _text(value: Any) -> str:
    return value if type(value) is str else json.dumps(value, ensure_ascii=False)


def source_from_ollama(
    source_id: str, kind: str, model: OllamaModel, limits: SourceLimits
) -> Source:
    """The summary of an Ollama model: its Go template (if any), stops, system, names."""
    found = {TEMPLATE_NAME: model.template} if model.template is not None else {}
    templates, oversized = fitting(found, limits.template_bytes)
    source = Source(
        id=source_id,
        kind=kind,
        templates=templates,
        special_tokens={},
        add_bos_token=None,
        add_eos_token=None,
        tokenizer=None,
        oversized_templates=oversized,
        template_kind="go",
        ollama=model,
    )
    if (over := summary_over(source, limits)) is not None:
        raise ModelfileError(over, limit="source_summary_mb")
    return source
