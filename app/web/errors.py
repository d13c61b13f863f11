"""One place that turns every failure into an error with the right status.

API clients get the `{"error": {...}}` JSON; a person browsing gets a small HTML page.
"""

from __future__ import annotations

from flask import Flask, render_template, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from app.budget import OverLimit
from app.render.problems import TemplateProblem
from app.render.request import RequestError


def error_body(kind: str, message: str, **fields: object) -> dict:
    """The `{"error": {...}}` shape shared by every endpoint."""
    return {"error": {"type": kind, "message": message, **fields}}


def wants_html() -> bool:
    """A browser asking for a page, as opposed to the API, fragments and `.json` twins."""
    machine = request.path.startswith(("/api/", "/fragments/")) or request.path.endswith(".json")
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return not machine and best == "text/html"


#: A request refused before its view read the body (admission, a write limit) still has
#: it read, and thrown away, up to this many bytes: a client stopped while it sends sees
#: a connection reset, not the refusal and its Retry-After. The page's uploads (16 MiB)
#: fit; a larger body is cut off.
DISCARD_BYTES = 32 * 1024 * 1024


def discard_body() -> None:
    """Read what the client is still sending, up to `DISCARD_BYTES` (nothing if the view
    read it already), so that it reads the answer."""
    length = request.content_length
    if length is not None and length > DISCARD_BYTES:
        return
    request.max_content_length = DISCARD_BYTES
    try:
        while request.stream.read(64 * 1024):
            pass
    except RequestEntityTooLarge:  # a chunked body longer than that: cut off
        pass


def register(app: Flask) -> None:
    """Install the handlers on `app`."""

    @app.errorhandler(TemplateProblem)
    def template_problem(problem: TemplateProblem) -> tuple[dict, int]:
        return {"error": problem.to_json()}, 422

    @app.errorhandler(OverLimit)
    def over_limit(error: OverLimit) -> tuple[dict | str, int, dict[str, str]]:
        discard_body()
        if wants_html():
            page = render_template("error.html", title="Over a limit", message=error.message)
            return page, error.status, error.headers
        return {"error": error.to_json()}, error.status, error.headers

    @app.errorhandler(RequestError)
    def bad_request(error: RequestError) -> tuple[dict, int]:
        return {"error": error.to_json()}, 400

    @app.errorhandler(413)
    def too_large(_: HTTPException) -> tuple[dict, int]:
        # Uploads have their own, larger cap: the one in force for this request.
        limit = request.max_content_length or app.config["MAX_CONTENT_LENGTH"]
        message = f"The request body is larger than the limit of {limit:,} bytes."
        return error_body("PayloadTooLarge", message, max_bytes=limit), 413

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[dict | str, int]:
        message = error.description or error.name
        if wants_html():
            return render_template(
                "error.html", title=error.name, message=message
            ), error.code or 500
        return error_body(type(error).__name__, message), error.code or 500

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> tuple[dict, int]:
        app.logger.exception("Unhandled error")
        return error_body("InternalError", "Something went wrong on our side."), 500
