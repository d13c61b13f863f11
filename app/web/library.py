"""The template library as JSON."""

from __future__ import annotations

from flask import Blueprint, current_app

from app.errors import NotFound
from app.sources.library import Library

blueprint = Blueprint("library", __name__)


def library() -> Library:
    """The library of this application."""
    return current_app.extensions["library"]


@blueprint.get("/api/library")
def list_entries() -> dict:
    """Every entry with its notes."""
    return {"templates": [entry.to_json() for entry in library().entries]}


@blueprint.get("/api/library/<name>")
def show_entry(name: str) -> tuple[dict, int]:
    """One entry with its template text."""
    entry = library().entry(name)
    if entry is None:
        raise NotFound(f"No library template named {name!r}.")
    return {**entry.to_json(), "template": library().template(name)}, 200
