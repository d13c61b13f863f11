"""The output views over HTTP: the page's JSON twin (`POST /api/outputs`) and the
endpoints of single views (`/api/render`, `/api/diff`, `/api/analyze`, `/api/command`).

Each parses its body once, into the playground state (`PlaygroundState.from_json`), and
answers from the steps of the one pipeline the page uses (`app.pipeline.outputs`), so the
page and the API cannot drift apart.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from flask import Blueprint, current_app

from app.errors import RequestError
from app.pipeline.comparison import compare_sides
from app.pipeline.outputs import (
    PageLimits,
    Pipeline,
    analysis_of,
    build_outputs,
    commands_of,
    render_main,
)
from app.pipeline.token_data import columns
from app.pipeline.tokens_view import tokens_with
from app.pipeline.views import Comparison, Rendering
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


@blueprint.post("/api/outputs")
def outputs() -> dict:
    """Every view the state's open tab shows (`view`), as the page gets them."""
    return build_outputs(PlaygroundState.from_json(json_body()), pipeline()).to_json()


@blueprint.post("/api/render")
def render() -> dict:
    """Render a conversation through a template, in the sandbox."""
    steps = pipeline()
    state, source = steps.bind(PlaygroundState.from_json(json_body()).pinned())
    started = time.perf_counter()
    main = _prompt_or_raise(render_main(state, steps, source))
    return {
        "prompt": main.prompt,
        "now": state.now_text,
        "generation_spans": [list(span) for span in main.generation_spans],
        "engine": main.engine,
        "rewrites": main.rewrites,
        "caveats": main.caveats,
        "sent_as": main.sent_as,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
        **main.details,
    }


def _prompt_or_raise(rendering: Rendering) -> Rendering:
    if rendering.problem is not None:
        raise rendering.problem
    return rendering


@blueprint.post("/api/analyze")
def analyze_template() -> dict:
    """Capabilities, content format, diagnostics, prefix stability and portability."""
    steps = pipeline()
    state, source = steps.bind(PlaygroundState.from_json(json_object(json_body())))
    return analysis_of(state, steps, source).to_json()


def _side(
    body: dict, name: str, source: SourceRef | None, steps: Pipeline
) -> tuple[Rendering, Source | None]:
    """One side of a diff with the body's source: its render body's prompt, or the
    template's error."""
    side = PlaygroundState.from_json(json_object(body.get(name), name))
    state, loaded = steps.bind(replace(side, source=source))
    return render_main(state, steps, loaded), loaded


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
    ref, steps = SourceRef.from_json(body.get("source")), pipeline()
    (left, source), (right, _) = _side(body, "left", ref, steps), _side(body, "right", ref, steps)
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
    steps = pipeline()
    state, source = steps.bind(state)
    commands, facts = commands_of(state, steps, model, source)
    return {"commands": [line.to_json() for line in commands], **facts}
