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

from app.analysis.diff import char_opcodes, token_opcodes
from app.display.outputs import (
    PageLimits,
    Pipeline,
    analysis_of,
    build_outputs,
    commands_of,
    render_main,
)
from app.display.views import Rendering
from app.errors import RequestError
from app.sources.source import Source
from app.sources.store import TokenizerUnavailable
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


def _object(body: Any, field: str | None = None) -> dict:
    if type(body) is not dict:
        where = f"'{field}'" if field else "The request body"
        raise RequestError(field, f"{where} must be a JSON object.")
    return body


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
    return state, source


@blueprint.post("/api/outputs")
def outputs() -> dict:
    """Every view the state's open tab shows (`view`), as the page gets them."""
    return build_outputs(PlaygroundState.from_json(json_body()), pipeline()).to_json()


@blueprint.post("/api/render")
def render() -> dict:
    """Render a conversation through a template, in the sandbox."""
    state = PlaygroundState.from_json(json_body()).pinned()
    started = time.perf_counter()
    main = _prompt_or_raise(render_main(state, pipeline(), None))
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
    state, source = _state_with_source(_object(json_body()))
    return analysis_of(state, pipeline(), source).to_json()


def _side(body: dict, name: str) -> dict[str, Any]:
    """One side of a diff: its prompt, or the template's error."""
    state = PlaygroundState.from_json(_object(body.get(name), name))
    rendering = render_main(state, pipeline(), None)
    if rendering.problem is not None:
        return {"error": rendering.problem.to_json()}
    return {"prompt": rendering.prompt}


@blueprint.post("/api/diff")
def diff_prompts() -> dict:
    """Both prompts, character-level opcodes, and token-level ones with a tokenizer."""
    body = _object(json_body())
    source = _loaded_source(body.get("source"))
    left, right = _side(body, "left"), _side(body, "right")
    answer: dict[str, Any] = {"left": left, "right": right, "opcodes": None, "token_opcodes": None}
    if "prompt" not in left or "prompt" not in right:
        return answer
    answer["opcodes"] = [list(op) for op in char_opcodes(left["prompt"], right["prompt"])]
    if source is not None and source.can_tokenize:
        try:
            both = source_store().tokenize(source, [left["prompt"], right["prompt"]])
        except TokenizerUnavailable as error:
            answer["tokens_error"] = {"message": error.message, "limit": error.limit}
            return answer
        left_ids, right_ids = (side.tokens.ids for side in both)
        answer["left"]["token_ids"], answer["right"]["token_ids"] = left_ids, right_ids
        answer["token_opcodes"] = [list(op) for op in token_opcodes(left_ids, right_ids)]
    return answer


@blueprint.post("/api/command")
def command_lines() -> dict:
    """Command lines that run a model with this template, for each engine and form."""
    body = _object(json_body())
    model = body.get("model")
    if model is not None and type(model) is not str:
        raise RequestError("model", "'model' must be a file name.")
    # The conversation is optional here: the commands that send one send none then.
    state = PlaygroundState.from_json({**body, "messages": body.get("messages") or []})
    commands, facts = commands_of(state, pipeline(), model)
    return {"commands": [line.to_json() for line in commands], **facts}
