"""The page when the server is busy: a refused live update is asked again later."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import PageErrors

pytestmark = pytest.mark.browser

REFUSAL = {
    "error": {
        "type": "TooManyRequests",
        "limit": "client_concurrency",
        "retry_after": 1,
        "message": "You already have 2 requests running or waiting here. Retry after 1 s.",
    }
}


def test_a_refused_live_update_is_asked_again_after_retry_after(
    page: Page, page_errors: PageErrors
) -> None:
    page_errors.allow("429")
    sent: list[float] = []

    def refuse_the_first(route: Route) -> None:
        sent.append(time.monotonic())
        if len(sent) == 1:
            headers = {"Retry-After": "1", "Content-Type": "application/json"}
            route.fulfill(status=429, headers=headers, body=json.dumps(REFUSAL))
        else:
            route.continue_()

    page.route("**/fragments/output", refuse_the_first)
    page.evaluate("text => window.playground.setTemplate(text)", "AFTER THE REFUSAL")
    expect(page.locator("#prompt-raw")).to_have_value("AFTER THE REFUSAL")
    assert len(sent) == 2, "one refusal, then one request that rendered"
    assert sent[1] - sent[0] >= 0.9, "asked again only after Retry-After"
