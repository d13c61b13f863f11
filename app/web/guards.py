"""Writes only from our own pages: one guard in front of every request that changes state.

A browser lets any website send a "simple" cross-site POST (a form, or `fetch` with a
`text/plain`, form or multipart body) without asking us first. So that no website can
make its visitors render, upload or share on our account:

- a write whose `Sec-Fetch-Site` (set by browsers, not by pages) is not `same-origin` or
  `none`, or whose `Origin` names another host, is refused with 403;
- an API write must declare what it carries (JSON as `application/json`, GGUF bytes as
  `application/octet-stream`, Hugging Face files as `multipart/form-data`), or it is a
  415. Another site's page cannot send the first two without a CORS preflight, which we
  never grant, so those hold even in a browser that sends neither header above.

Requests without either header (curl, scripts) are not cross-site requests and pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, request
from werkzeug.exceptions import Forbidden, UnsupportedMediaType

#: Methods that only read; every other method is a write.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: `Sec-Fetch-Site` values of requests our own pages (or the user, typing) make.
OWN_FETCH_SITES = frozenset({"same-origin", "none"})
#: What each upload must be sent as; every other `/api/` write takes JSON.
UPLOAD_TYPES = {
    "/api/sources/gguf": "application/octet-stream",
    "/api/sources/hf": "multipart/form-data",
}
JSON_TYPE = "application/json"


def check_same_site() -> None:
    """Refuse a write a browser says comes from another site (403)."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    if (fetch_site is None or fetch_site.lower() in OWN_FETCH_SITES) and (
        origin is None or origin_host(origin) == request.host.lower()
    ):
        return
    said = ", ".join(
        f"{name}: {value}"
        for name, value in (("Origin", origin), ("Sec-Fetch-Site", fetch_site))
        if value is not None
    )
    raise Forbidden(
        f"{request.method} {request.path} was sent from another site ({said}), not from "
        f"this one ({request.host}); only this site's pages may write here."
    )


def origin_host(origin: str) -> str | None:
    """The host (with its port) an `Origin` header names; None for "null" or nonsense.

    Hosts, not schemes, are compared: behind a proxy that ends TLS, the request itself
    says http while the page's origin says https.
    """
    try:
        return urlsplit(origin).netloc.lower() or None
    except ValueError:  # "http://[x": not a URL
        return None


def expected_type(rule: str) -> str | None:
    """The content type a write to URL rule `rule` must have; None for the page's forms."""
    if rule in UPLOAD_TYPES:
        return UPLOAD_TYPES[rule]
    return JSON_TYPE if rule.startswith("/api/") else None


def check_content_type() -> None:
    """Refuse an API write whose body is not declared as the type it must be (415)."""
    if request.url_rule is None:
        return  # routing answers 404 or 405
    expected = expected_type(request.url_rule.rule)
    if expected is None:
        return
    declared = request.mimetype
    if declared == expected or (expected == JSON_TYPE and request.is_json):
        return
    raise UnsupportedMediaType(
        f"{request.method} {request.path} takes a body sent with Content-Type: {expected}; "
        f"this request's Content-Type is {declared or 'missing'}."
    )


def register(app: Flask) -> None:
    """Run both checks before every write, before any view reads the body."""

    @app.before_request
    def guard_writes() -> None:
        if request.method not in SAFE_METHODS:
            check_same_site()
            check_content_type()
