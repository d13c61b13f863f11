"""One place that turns every failure into a JSON error with the right status."""

from __future__ import annotations

from flask import Flask
from werkzeug.exceptions import HTTPException

from app.render.problems import TemplateProblem
from app.render.request import RequestError


def error_body(kind: str, message: str, **fields: object) -> dict:
    """The `{"error": {...}}` shape shared by every endpoint."""
    return {"error": {"type": kind, "message": message, **fields}}


def register(app: Flask) -> None:
    """Install the handlers on `app`."""

    @app.errorhandler(TemplateProblem)
    def template_problem(problem: TemplateProblem) -> tuple[dict, int]:
        return {"error": problem.to_json()}, 422

    @app.errorhandler(RequestError)
    def bad_request(error: RequestError) -> tuple[dict, int]:
        return {"error": error.to_json()}, 400

    @app.errorhandler(413)
    def too_large(_: HTTPException) -> tuple[dict, int]:
        limit = app.config["MAX_CONTENT_LENGTH"]
        message = f"The request body is larger than the limit of {limit:,} bytes."
        return error_body("PayloadTooLarge", message, max_bytes=limit), 413

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[dict, int]:
        return error_body(type(error).__name__, error.description or error.name), error.code or 500

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> tuple[dict, int]:
        app.logger.exception("Unhandled error")
        return error_body("InternalError", "Something went wrong on our side."), 500
