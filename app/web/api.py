"""The JSON API: `/api/render`, `/api/engines` and the health check."""

from __future__ import annotations

import time

from flask import Blueprint, current_app, request

from app.errors import RequestError
from app.render.engines import engine_list, get_engine
from app.render.pool import SandboxPool
from app.render.request import parse_render_request
from app.untrusted_json import JSONRefused, loads

blueprint = Blueprint("api", __name__)


def sandbox_pool() -> SandboxPool:
    """The render workers of this application."""
    return current_app.extensions["sandbox_pool"]


def max_json_depth() -> int:
    """How deep a JSON value a visitor may send (`PLAYGROUND_JSON_DEPTH`)."""
    return int(current_app.config["JSON_DEPTH"])


def json_body() -> object:
    """The request body as JSON (`guards.py` has checked its content type).

    Read with `untrusted_json`: a body nested past `PLAYGROUND_JSON_DEPTH` is a 400 that
    names where, before anything else can trip over it.
    """
    try:
        return loads(request.get_data(cache=True), max_json_depth())
    except JSONRefused as error:
        raise RequestError(error.path, f"The request body is {error.message}.") from None


@blueprint.get("/healthz")
def healthz() -> dict:
    """Liveness: the process answers."""
    return {"status": "ok"}


@blueprint.get("/api/engines")
def engines() -> dict:
    """The render engines a request can name, each with the version it reproduces."""
    return {"engines": engine_list()}


@blueprint.post("/api/render")
def render() -> dict:
    """Render a conversation through a template, in the sandbox."""
    render_request = parse_render_request(json_body())
    started = time.perf_counter()
    rendered = sandbox_pool().render(render_request)
    return {
        "prompt": rendered.prompt,
        "now": render_request.now.isoformat(),
        "generation_spans": [list(span) for span in rendered.generation_spans],
        "engine": render_request.engine,
        "rewrites": rendered.rewrites,
        "caveats": get_engine(render_request.engine).caveats(render_request.template, None),
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
    }
