"""The JSON API's own parts: the health check, `/api/engines`, and how every endpoint
reads its body (the views' endpoints are `app.web.outputs`)."""

from __future__ import annotations

from flask import Blueprint, current_app, request

from app.errors import RequestError
from app.render.engines import engine_list
from app.render.pool import SandboxPool
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
