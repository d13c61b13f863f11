"""The browser tests' error watch: what it lets through, and what it never does."""

from __future__ import annotations

from tests.browser.conftest import PageErrors

AT = " at http://127.0.0.1:1/static/vendor/htmx.min.js"


def test_every_console_error_is_one_unless_the_test_allows_it():
    # An aborted render was let through once; the page no longer aborts any (it queues the
    # newest edit), so an abort logged now is an error like any other.
    watch = PageErrors()
    watch.messages += [
        f"console error: htmx:afterRequest, [object HTMLDivElement]{AT}",
        f"console error: htmx:sendAbort, [object HTMLDivElement]{AT}",
        "pageerror: boom",
    ]
    assert watch.unexpected() == watch.messages
    watch.allow("boom")
    assert watch.unexpected() == watch.messages[:2]
