"""The model's answer over HTTP: the Completion menu (`POST /api/completion`), every
engine's reading of a completion (`POST /api/parse`) and the round trip
(`POST /api/roundtrip`).

Each body is a render request (the playground state) with `completion` and `parsers`;
each answer comes from the same steps as the page's Response view
(`app.pipeline.outputs.response_of`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request

from app.answers.menu import menu_completion
from app.errors import RequestError
from app.pipeline.outputs import response_of
from app.render.engines import ENGINES
from app.state import PlaygroundState
from app.state.form import state_from_form
from app.web.api import json_body, max_json_depth, sandbox_pool
from app.web.outputs import pipeline

blueprint = Blueprint("answers", __name__)


def _engines(body: dict) -> list[str] | None:
    """The optional `engines` field: the engine ids to answer for (default: all)."""
    value = body.get("engines")
    if value is None:
        return None
    if type(value) is not list or not all(type(v) is str and v in ENGINES for v in value):
        raise RequestError("engines", f"'engines' must be a list of engine ids: {list(ENGINES)}.")
    return value


def _readings(round_trip: bool) -> dict[str, Any]:
    """`{"stop_token", "engines"}`: the stop token the completion ended with (each engine
    read it without), and each engine's reading the request asks for."""
    body, steps = json_body(), pipeline()
    state, source = steps.bind(PlaygroundState.from_json(body).pinned())
    wanted = _engines(body)
    response = response_of(state, steps, source, round_trip=round_trip)
    engines = [e.to_json() for e in response.engines if wanted is None or e.engine in wanted]
    return {"stop_token": response.stop_token, "engines": engines}


@blueprint.post("/api/parse")
def parse() -> dict:
    """The assistant message each engine's runtime returns for `completion`."""
    answer = _readings(round_trip=False)
    for reading in answer["engines"]:
        reading.pop("round_trip")
    return answer


@blueprint.post("/api/roundtrip")
def roundtrip() -> dict:
    """Each engine's message sent back, and whether the next prompt starts with this one."""
    return _readings(round_trip=True)


@blueprint.post("/fragments/completion")
def completion_for_page() -> dict:
    """The Completion menu's entry `completion_kind` for the page's form as it is."""
    state, _ = state_from_form(request.form, max_json_depth())
    kind = request.form.get("completion_kind", "")
    render = sandbox_pool().render_exactly
    return menu_completion(state.pinned().render_request(), kind, render).to_json()


@blueprint.post("/api/completion")
def completion() -> dict:
    """An entry of the Completion menu (`kind`) for the state's conversation."""
    body = json_body()
    kind = body.get("kind") if type(body) is dict else None
    if type(kind) is not str:
        raise RequestError("kind", "'kind' must name an entry of the Completion menu.")
    state = PlaygroundState.from_json({**body, "source": None}).pinned()
    pool = sandbox_pool()
    return menu_completion(state.render_request(), kind, pool.render_exactly).to_json()
