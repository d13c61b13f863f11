"""The page on a phone (390 px): nothing overflows, and the output is one tap away."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import compare_with

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
#: Each view, and what shows that it has been drawn.
VIEWS = {
    "prompt": "#prompt",
    "tokens": "#view-tokens .empty",
    "diff": "#diff-side",
    "analysis": "#capabilities",
    "response": "#responses",
    "command": "#commands",
}


def overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0: no sideways scrolling)."""
    return page.evaluate("() => document.scrollingElement.scrollWidth - window.innerWidth")


@pytest.fixture()
def phone(new_page: Callable[..., Page]) -> Page:
    opened = new_page(viewport=PHONE)
    opened.goto("/")
    expect(opened.locator("#prompt-raw")).to_have_value(re.compile("<\\|im_start\\|>"))
    return opened


def test_nothing_overflows_sideways_at_390px(phone: Page) -> None:
    assert overflow(phone) <= 0
    phone.get_by_role("button", name="Output").click()
    # A second template, so the diff views (side by side too) have content.
    phone.click("#tab-diff")
    compare_with(phone, "{{ messages[0].content }}")
    phone.check("#diff-layouts input[value=side]")  # the widest layout
    expect(phone.locator("#diff-side")).to_be_visible()
    for view, content in VIEWS.items():
        phone.click(f"#tab-{view}")
        expect(phone.locator(content)).to_be_visible()  # rendered (Analysis, Command on opening)
        assert overflow(phone) <= 0, f"the {view} view is wider than the window"


def test_output_is_one_tap_away_and_the_tab_strip_fits(phone: Page) -> None:
    switch = phone.get_by_role("button", name="Output")
    expect(switch).to_be_in_viewport()
    expect(switch).to_have_attribute("aria-pressed", "false")
    phone.locator("#message-editor textarea").first.fill("Be brief.")
    switch.click()
    expect(switch).to_have_attribute("aria-pressed", "true")
    expect(phone.locator("#prompt")).to_contain_text("Be brief.")
    expect(phone.locator("#prompt")).to_be_in_viewport()
    expect(phone.locator(".cm-editor")).to_be_hidden()

    strip = phone.locator(".tabs")
    fits = strip.evaluate("(s) => s.scrollWidth <= s.clientWidth")
    assert fits, "the tab strip is wider than its box"
    for view in VIEWS:
        box = phone.locator(f"#tab-{view}").bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]

    # Back to the editors: the editor draws again (it measures itself when shown).
    edit = phone.get_by_role("button", name="Edit")
    edit.click()
    expect(edit).to_have_attribute("aria-pressed", "true")
    expect(phone.locator(".cm-editor .cm-content")).to_contain_text("for message in messages")
    expect(phone.locator("#output")).to_be_hidden()


def test_wide_screens_show_both_columns_and_no_switch(page: Page) -> None:
    expect(page.get_by_role("button", name="Output")).to_be_hidden()
    expect(page.locator(".cm-editor")).to_be_visible()
    expect(page.locator("#output")).to_be_visible()


def test_the_error_badge_takes_a_phone_to_the_line_in_the_editor(phone: Page) -> None:
    lines = [f"line {n}\n" for n in range(1, 41)] + ["{{ broken( }}\n"] + ["tail\n"] * 20
    phone.evaluate("text => window.playground.setTemplate(text)", "".join(lines))
    phone.get_by_role("button", name="Output").click()
    badge = phone.locator("#problem .problem-line")
    expect(badge).to_have_text("line 41")
    badge.click()
    expect(phone.locator(".cm-editor")).to_be_visible()
    expect(phone.locator("#prompt")).to_be_hidden()
    assert phone.evaluate("() => window.playground.editor.cursorLine()") == 41
    current = phone.locator(".cm-editor .cm-line", has_text="broken")
    expect(current).to_be_in_viewport()
