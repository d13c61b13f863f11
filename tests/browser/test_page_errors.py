"""The browser tests' error watch: what it lets through, and what it never does."""

from __future__ import annotations

from tests.browser.conftest import PageErrors

AT = " at http://127.0.0.1:1/static/vendor/htmx.min.js"


def test_an_aborted_stale_render_is_not_an_error_and_a_failed_request_is():
    watch = PageErrors()
    watch.messages += [
        f"console error: htmx:afterRequest, [object HTMLDivElement]{AT}",
        f"console error: htmx:sendAbort, [object HTMLDivElement]{AT}",
        f"console error: htmx:afterRequest, [object HTMLDivElement]{AT}",
        f"console error: htmx:sendError, [object HTMLDivElement]{AT}",
        "pageerror: boom",
    ]
    assert watch.unexpected() == watch.messages[2:]
