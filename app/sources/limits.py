"""What one source may cost: the limits of parsing uploads and building tokenizers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLimits:
    """What one source may cost; each field has a `PLAYGROUND_*` setting."""

    #: Items in all the arrays of a GGUF header (`PLAYGROUND_GGUF_ARRAY_ITEMS`).
    array_items: int = 4_000_000
    #: Templates over this many bytes cannot render, so a summary leaves them out; a
    #: response template over it is refused (`PLAYGROUND_TEMPLATE_KB`).
    template_bytes: int = 256 * 1024
    #: Nesting of the JSON files of an upload (`PLAYGROUND_JSON_DEPTH`).
    json_depth: int = 64
    #: Values a response template may hold (`PLAYGROUND_RESPONSE_TEMPLATE_ITEMS`).
    response_template_items: int = 10_000
    #: Bytes of an Ollama Modelfile, or of a text layer read from a registry
    #: (`PLAYGROUND_MODELFILE_KB`).
    modelfile_bytes: int = 1 << 20
    #: Commands an Ollama Modelfile may hold (`PLAYGROUND_MODELFILE_COMMANDS`).
    modelfile_commands: int = 1000
    #: Bytes the summary of one source may take in the web process, as Python holds it
    #: (`PLAYGROUND_SOURCE_SUMMARY_MB`).
    summary_bytes: int = 16 << 20
    #: Bytes of built tokenizers a worker keeps (half its memory budget).
    cache_bytes: int = 1 << 30
    #: Tokenizers a worker keeps at most (`PLAYGROUND_SOURCE_CACHE`).
    cache_entries: int = 8
