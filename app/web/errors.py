"""One place that turns every failure into an error with the right status.

Every error of our own is an `app.errors.ApiError`, which carries its status and its JSON
body; one handler answers them all. The web framework's own errors (404, 405, 415, a
body over the cap) and the unexpected get the same `{"error": {...}}` shape. API
clients get the JSON; a person browsing gets a small HTML page.
"""

from __future__ import annotations

from flask import Flask, render_template, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from app.errors import ApiError, PlainError


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

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> tuple[dict | str, int, dict[str, str]]:
        # Refused before the view read the body (admission, a write limit), the client is
        # still sending: read it, so that it sees this answer (a no-op once it is read).
        discard_body()
        headers = dict(error.headers)
        if wants_html():
            message = error.answer()["error"]["message"]
            page = render_template("error.html", title=error.title, message=message)
            return page, error.status, headers
        return error.answer(), error.status, headers

    @app.errorhandler(413)
    def too_large(_: HTTPException) -> tuple[dict, int]:
        # Uploads have their own, larger cap: the one in force for this request.
        limit = request.max_content_length or app.config["MAX_CONTENT_LENGTH"]
        message = f"The request body is larger than the limit of {limit:,} bytes."
        return PlainError("PayloadTooLarge", message, 413, {"max_bytes": limit}).answer(), 413

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[dict | str, int]:
        message = error.description or error.name
        if wants_html():
            return render_template(
                "error.html", title=error.name, message=message
            ), error.code or 500
        return PlainError(type(error).__name__, message).answer(), error.code or 500

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> tuple[dict, int]:
        app.logger.exception("Unhandled error")
        return PlainError("InternalError", "Something went wrong on our side.").answer(), 500
