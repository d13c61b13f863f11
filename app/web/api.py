"""The JSON API: `/api/render` and the health check."""

from __future__ import annotations

import json
import time

from flask import Blueprint, current_app, request

from app.render.pool import SandboxPool
from app.render.request import RequestError, parse_render_request

blueprint = Blueprint("api", __name__)


def sandbox_pool() -> SandboxPool:
    """The render workers of this application."""
    return current_app.extensions["sandbox_pool"]


def json_body() -> object:
    """The request body as JSON, whatever its declared content type."""
    raw = request.get_data(cache=True)
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestError(None, "The request body is not UTF-8 text.") from None
    except json.JSONDecodeError as error:
        raise RequestError(
            None,
            f"The request body is not valid JSON: {error.msg} "
            f"(line {error.lineno}, column {error.colno}).",
        ) from None


@blueprint.get("/healthz")
def healthz() -> dict:
    """Liveness: the process answers."""
    return {"status": "ok"}


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
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
    }
