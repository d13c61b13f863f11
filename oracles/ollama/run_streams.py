"""Parser sessions fed to the engine's streaming parsers chunk by chunk, as Ollama's
tests feed theirs (lfm2 and cohere reproduce Ollama's Add, so a tag split across
chunks is tested as split)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.render.engines.ollama.parsers import cohere, lfm2
from app.render.engines.ollama.parsers.message import OllamaMessage


def _lfm2(spec: dict[str, Any], tools: Any, last: Any, think: Any) -> Any:
    """An LFM2Parser{hasThinkingSupport: ...} after Init."""
    return lfm2.Stream(bool(spec["fields"].get("hasThinkingSupport")), tools, think, last)


def _cohere(spec: dict[str, Any], tools: Any, last: Any, think: Any) -> Any:
    """A CohereParser after Init."""
    return cohere.Stream(think, last)


#: The test's parser type -> the engine's stream for it.
STREAMS: dict[str, Callable[..., Any]] = {"LFM2Parser": _lfm2, "CohereParser": _cohere}


def streamed(fields: dict[str, Any]) -> OllamaMessage | None:
    """The session's Adds fed in order (each step's chunks, the step's done on its last),
    their outputs joined; None when the parser has no stream here."""
    make = STREAMS.get(fields["parser"].get("type", ""))
    if make is None:
        return None
    tools, last, think = fields["init"]
    stream = make(fields["parser"], tools, last, think)
    content, thinking, calls = "", "", []
    for step in fields["steps"]:
        chunks = step.get("chunks") or [step["text"]]
        for i, chunk in enumerate(chunks):
            done = step["done"] if i == len(chunks) - 1 else False
            c, t, found = stream.add(chunk, done)
            content, thinking, calls = content + c, thinking + t, calls + found
    return OllamaMessage(content=content, thinking=thinking, tool_calls=tuple(calls))
