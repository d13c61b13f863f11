"""How /api/chat reads an answer with the parser a Modelfile names (`PARSER`), and where
Ollama's runner stops the answer (`PARAMETER stop`).

With a PARSER, Ollama reads every answer with that Go parser (`parsers.ParserForName`,
`server/routes.go` at fb30760), whichever way the prompt was written; the model's stop
strings end the generation before any parser sees it: the runner cuts the answer at the
first one, which is not returned.
"""

from __future__ import annotations

import json

from app.render.answer import ParsedAnswer, ToolCall
from app.render.engines.ollama.engine_facts import model_of
from app.render.engines.ollama.messages import think_value
from app.render.engines.ollama.parsers import PARSERS
from app.render.render_request import RenderRequest

ONE_READ = (
    "Read as one chunk: Ollama's parsers read the stream as it comes, and what they hold "
    "back at the end (a possible tag's start, trailing space) is dropped as at the last chunk."
)


def parser_name(request: RenderRequest) -> str | None:
    """The model's PARSER (the Modelfile's, or the one `ollama create` sets for its
    GGUF), if any."""
    model = model_of(request)
    return model.parser if model is not None else None


def unknown(name: str) -> str | None:
    """Why the named parser cannot read here (None: it is modelled)."""
    if name in PARSERS:
        return None
    return f"The model's PARSER is {name}: Ollama's {name} parser is not modelled here yet."


def cut_at_stop(request: RenderRequest, completion: str) -> tuple[str, tuple[str, ...]]:
    """The answer as the runner returns it: cut before the first stop string it holds,
    with a note naming it (none when no stop string occurs)."""
    model = model_of(request)
    stops = model.stop if model is not None else ()
    found = [(completion.find(stop), stop) for stop in stops if stop and stop in completion]
    if not found:
        return completion, ()
    at, stop = min(found)
    note = f"Ollama's runner stops at the stop string {stop!r}: the rest is never generated."
    return completion[:at], (note,)


def read_named(
    name: str, request: RenderRequest, completion: str, why: str = "the Modelfile's PARSER"
) -> ParsedAnswer:
    """The message Ollama's parser `name` makes of `completion` for this request (`why`
    says why Ollama reads with it)."""
    try:
        message = PARSERS[name](completion, request.tools, think_value(request.kwargs))
    except ValueError as refused:  # ToolCallError and the JSON readers' refusals
        # /api/chat stops and answers {"error": parserErr.Error()} (server/routes.go).
        return ParsedAnswer(name, error=f"Ollama's {name} parser refused the answer: {refused}")
    return ParsedAnswer(
        name,
        content=message.content,
        reasoning_content=message.thinking or None,
        tool_calls=tuple(
            ToolCall(call, json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))
            for call, arguments in message.tool_calls
        ),
        notes=(f"Read by Ollama's {name} parser: {why}.", ONE_READ),
    )
