"""The output views over HTTP: the page's JSON twin (`POST /api/outputs`) and the
endpoints of single views (`/api/render`, `/api/diff`, `/api/analyze`, `/api/command`).

Each parses its body once, into the playground state (`PlaygroundState.from_json`), and
answers from the steps of the one pipeline the page uses (`app.display.outputs`), so the
page and the API cannot drift apart.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from flask import Blueprint, current_app

from app.display.comparison import compare_sides
from app.display.outputs import (
    PageLimits,
    Pipeline,
    analysis_of,
    build_outputs,
    commands_of,
    render_main,
    with_source,
    with_source_flags,
)
from app.display.token_data import columns
from app.display.tokens_view import tokens_with
from app.display.views import Comparison, Rendering
from app.errors import RequestError
from app.request_body import json_object
from app.sources.source import Source
from app.state import PlaygroundState
from app.state.playground import SourceRef
from app.web.api import json_body, sandbox_pool
from app.web.sources import source_store

blueprint = Blueprint("outputs", __name__)


def pipeline() -> Pipeline:
    """The pipeline of this application, with its budgets (`PLAYGROUND_PAGE_*`,
    `ANALYSIS_TURNS`, `OUTPUT_CHARS`)."""
    config = current_app.config
    return Pipeline(
        sandbox_pool(),
        source_store(),
        PageLimits(chars=int(config["PAGE_CHARS"]), tokens=int(config["PAGE_TOKENS"])),
        analysis_turns=int(config["ANALYSIS_TURNS"]),
        analysis_chars=int(config["OUTPUT_CHARS"]),
        completion_kb=int(config["COMPLETION_KB"]),
    )


def _loaded_source(source_id: Any) -> Source | None:
    """The optional `source` field of the single-view endpoints: a loaded source's id."""
    if source_id is None:
        return None
    if type(source_id) is not str:
        raise RequestError("source", "'source' must be the id of a loaded source.")
    source = source_store().get_built(source_id)
    if source is None:
        raise RequestError("source", f"No loaded source has the id {source_id[:100]!r}.")
    return source


def _state_with_source(body: dict) -> tuple[PlaygroundState, Source | None]:
    """The state of a body whose `source` is a bare id (the single-view endpoints)."""
    source = _loaded_source(body.get("source"))
    state = PlaygroundState.from_json({**body, "source": None})
    if source is not None:
        state = replace(state, source=SourceRef(source.id, source.kind, source.file_name))
    return with_source_flags(state, source), source


@blueprint.post("/api/outputs")
def outputs() -> dict:
    """Every view the state's open tab shows (`view`), as the page gets them."""
    return build_outputs(PlaygroundState.from_json(json_body()), pipeline()).to_json()


@blueprint.post("/api/render")
def render() -> dict:
    """Render a conversation through a template, in the sandbox."""
    steps = pipeline()
    state, source = with_source(PlaygroundState.from_json(json_body()).pinned(), steps)
    started = time.perf_counter()
    main = _prompt_or_raise(render_main(state, steps, source))
    return {
        "prompt": main.prompt,
        "now": state.now,
        "generation_spans": [list(span) for span in main.generation_spans],
        "engine": main.engine,
        "rewrites": main.rewrites,
        "caveats": main.caveats,
        "sent_as": main.sent_as,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
    }


def _prompt_or_raise(rendering: Rendering) -> Rendering:
    if rendering.problem is not None:
        raise rendering.problem
    return rendering


@blueprint.post("/api/analyze")
def analyze_template() -> dict:
    """Capabilities, content format, diagnostics, prefix stability and portability."""
    state, source = _state_with_source(json_object(json_body()))
    return analysis_of(state, pipeline(), source).to_json()


def _side(body: dict, name: str, source: Source | None, steps: Pipeline) -> Rendering:
    """One side of a diff: its render body's prompt, or the template's error."""
    state = with_source_flags(PlaygroundState.from_json(json_object(body.get(name), name)), source)
    return render_main(state, steps, source)


def _side_json(side: Rendering, comparison: Comparison) -> dict[str, Any]:
    if side.problem is not None:
        return {"error": side.problem.to_json()}
    if comparison.token_opcodes is None or side.tokens is None:
        return {"prompt": side.prompt}
    return {"prompt": side.prompt, "token_ids": list(columns(side.tokens)[0])}


@blueprint.post("/api/diff")
def diff_prompts() -> dict:
    """Both prompts, character-level opcodes, and token-level ones with a tokenizer: the
    Diff view's comparison (`compare_sides`) of any two render bodies."""
    body = json_object(json_body())
    source, steps = _loaded_source(body.get("source")), pipeline()
    left, right = _side(body, "left", source, steps), _side(body, "right", source, steps)
    by_tokens = source is not None and source.can_tokenize
    tokens_of = tokens_with(steps.store, source, None) if by_tokens else None
    comparison = compare_sides(left, right, steps.limits, tokens_of)
    both = left.prompt is not None and right.prompt is not None
    answer: dict[str, Any] = {
        "left": _side_json(left, comparison),
        "right": _side_json(right, comparison),
        "opcodes": [list(op) for op in comparison.opcodes] if both else None,
        "token_opcodes": None
        if comparison.token_opcodes is None
        else [list(op) for op in comparison.token_opcodes],
    }
    if (error := comparison.tokens_error) is not None:
        answer["tokens_error"] = {"message": error.message, "limit": error.limit}
    return answer


@blueprint.post("/api/command")
def command_lines() -> dict:
    """Command lines that run a model with this template, for each engine and form."""
    body = json_object(json_body())
    model = body.get("model")
    if model is not None and type(model) is not str:
        raise RequestError("model", "'model' must be a file name.")
    # The conversation is optional here: the commands that send one send none then.
    state = PlaygroundState.from_json({**body, "messages": body.get("messages") or []})
    commands, facts = commands_of(state, pipeline(), model)
    return {"commands": [line.to_json() for line in commands], **facts}
