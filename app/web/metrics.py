"""`GET /metrics`: Prometheus' text format (see app/web/observability.py)."""

from __future__ import annotations

from flask import Blueprint, Response, current_app

from app.web.observability import exposition

blueprint = Blueprint("metrics", __name__)


@blueprint.get("/metrics")
def metrics() -> Response:
    """Every worker's metrics, added up, and what the store holds."""
    body, content_type = exposition(current_app.extensions["database"])
    return Response(body, content_type=content_type)
