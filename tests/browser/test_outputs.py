"""The output views in a real browser: whitespace markers, long prompts, the Tokens view."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def set_template(page: Page, text: str) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", text)


def markers_shown(page: Page) -> bool:
    """Whether a space of the prompt is drawn with its marker right now."""
    return page.evaluate(
        """() => {
            const space = document.querySelector("#prompt .seg-space");
            if (!space) return false;
            const after = getComputedStyle(space, "::after").content;
            return getComputedStyle(space).backgroundImage !== "none" || after !== "none";
        }"""
    )


def test_whitespace_markers_stay_after_an_edit(page: Page) -> None:
    toggle = page.locator("#show-whitespace")
    expect(toggle).to_be_checked()
    assert markers_shown(page)

    set_template(page, "a b\nc")
    expect(page.locator("#prompt-raw")).to_have_value("a b\nc")
    # htmx restores the swapped element's attributes about 20 ms after the swap.
    page.wait_for_timeout(200)
    expect(toggle).to_be_checked()
    assert markers_shown(page)

    toggle.uncheck()
    assert not markers_shown(page)
    set_template(page, "a b c")
    expect(page.locator("#prompt-raw")).to_have_value("a b c")
    page.wait_for_timeout(200)
    assert not markers_shown(page)
    toggle.check()
    assert markers_shown(page)
    expect(page.locator("#output")).to_have_class(re.compile(r"\bview-prompt\b"))
