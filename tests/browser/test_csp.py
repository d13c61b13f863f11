"""No Content-Security-Policy violation in a session that uses every part of the page:
the page's own code never applies an inline style or script (the CSP forbids both)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab

pytestmark = pytest.mark.browser

VIEWS = ["tokens", "diff", "analysis", "response", "command", "prompt"]


def test_a_whole_session_violates_no_csp_rule(page: Page, small_vocab: Path) -> None:
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text))
    load_vocab(page, small_vocab)
    # One step at a time, each answered before the next (a client's requests in flight
    # are limited, and this is not the test of that).
    steps = [
        lambda: page.select_option("#example-select", "parallel-tools"),
        lambda: page.click("#example-load"),
        lambda: page.click("#add-message"),
        lambda: page.locator("#completion-box summary").click(),
        lambda: page.click("#completion-fill"),
        *[lambda view=view: page.click(f"#tab-{view}") for view in VIEWS],
        lambda: page.evaluate("text => window.playground.setTemplate(text)", "{% if %}"),
        lambda: page.evaluate("t => window.playground.setTemplate(t)", "{{ messages[0].content }}"),
    ]
    for step in steps:
        step()
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(700)  # an answer htmx dropped may still be running
    expect(page.locator("#problem")).to_have_count(0)
    violations = [text for text in said if "Content Security Policy" in text or "violates" in text]
    assert violations == []
