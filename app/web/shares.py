"""Share links over HTTP: `POST /api/shares` and `GET /s/<id>.json`.

The page itself (`GET /s/<id>`) lives in `page.py` and reads a share with `load_share`.
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, request

from app.budget import OverLimit
from app.errors import NotFound, RequestError
from app.shares.state import canonical_json, check_size
from app.shares.state import share_id as content_id
from app.shares.store import ShareStore
from app.state import PlaygroundState
from app.state.form import state_from_form
from app.untrusted_json import JSONRefused
from app.web.api import json_body, max_json_depth
from app.web.outputs import pipeline

blueprint = Blueprint("shares", __name__)

#: Shares never change, so a client or proxy may keep one as long as it likes.
IMMUTABLE = "public, max-age=31536000, immutable"


def share_store() -> ShareStore:
    """The shares of this application."""
    return current_app.extensions["share_store"]


def share_max_bytes() -> int:
    """The cap on a share's canonical JSON, in bytes."""
    return int(current_app.config["SHARE_MAX_KB"]) * 1024


def load_share(share_id: str) -> PlaygroundState | None:
    """The stored state of a share, or None for an unknown or malformed id.

    A stored state is read like any visitor's: one nested deeper than
    `PLAYGROUND_JSON_DEPTH` allows (stored before the limit, or under a looser one) is
    refused with 422 rather than rendered, and one the state's validation refuses (stored
    by hand, or damaged) is a 400 naming the field, never a crash further on.
    """
    try:
        stored = share_store().get(share_id, max_json_depth())
    except JSONRefused as error:
        message = f"This share cannot be opened: its state is {error.message}."
        raise OverLimit("json_depth", message, fields={"field": error.path}) from None
    if stored is None:
        return None
    try:
        return PlaygroundState.from_json(stored)
    except RequestError as error:
        message = f"This share cannot be opened: {error.message}"
        raise RequestError(error.field, message) from None


@blueprint.post("/api/shares")
def create_share() -> tuple[dict, int]:
    """Store a state: 201 when new, 200 when the same state was already shared; a bare
    source id is stored as what the loaded source is (its kind and file)."""
    return store_share(pipeline().named(PlaygroundState.from_json(json_body())))


@blueprint.post("/fragments/share")
def share_form() -> tuple[dict, int]:
    """The page's Share button: the posted form, stored as a share."""
    state, problems = state_from_form(request.form, max_json_depth())
    if problems:
        field, message = next(iter(problems.items()))
        raise RequestError(field, f"{field}: {message}")
    return store_share(state)


def store_share(state: PlaygroundState) -> tuple[dict, int]:
    """Pin the clock of a state, size-check and store it; the answer of both share
    endpoints."""
    document = state.pinned().to_json()
    canonical = canonical_json(document)
    check_size(canonical, share_max_bytes())  # ShareTooLarge: 413
    store = share_store()
    # Racing creators of the same new state may both get 201; either way the one stored
    # state is the same, so only the status differs.
    existed = store.exists(content_id(canonical))
    new_id = store.put(document)
    return {"id": new_id, "url": f"/s/{new_id}"}, 200 if existed else 201


@blueprint.get("/s/<share_id>.json")
def show_share(share_id: str) -> Response | tuple[dict, int]:
    """A share's state in its JSON form; 404 for an unknown or malformed id."""
    state = load_share(share_id)
    if state is None:
        raise NotFound(f"No share with id {share_id!r}.")
    # Written here, not by Flask's JSON provider, which would sort the keys: their order
    # is part of the state.
    text = canonical_json(state.to_json())
    return Response(text, mimetype="application/json", headers={"Cache-Control": IMMUTABLE})
