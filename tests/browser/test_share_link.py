"""Share links as a user needs them (issue 37, item 6): copied on creation, with a visible
"copied"; marked out of date after the next edit; opened on the view they were made on,
at every width (on a phone, the Output pane with that view)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

SHARE = re.compile(r"^http://127\.0\.0\.1:\d+/s/[0-9a-f]{24}$")


@pytest.fixture()
def clipboard_page(new_page: Callable[..., Page]) -> Page:
    """The page in a context that lets it write and read the clipboard."""
    opened = new_page(permissions=["clipboard-read", "clipboard-write"])
    opened.goto("/")
    expect(opened.locator("#prompt-raw")).to_have_value(re.compile("<\\|im_start\\|>"))
    return opened


def share(page: Page) -> str:
    """Make a link, and return it once the field holds it (not the link made before)."""
    field = page.locator("#share-url")
    before = field.input_value()
    page.click("#share-button")
    expect(field).to_have_value(SHARE)
    expect(field).not_to_have_value(before)
    expect(page.locator("#share-status")).not_to_have_text(re.compile("Making"))
    return field.input_value()


def test_the_link_is_copied_when_made(clipboard_page: Page) -> None:
    page = clipboard_page
    page.evaluate("() => navigator.clipboard.writeText('something else')")
    url = share(page)
    status = page.locator("#share-status")
    expect(status).to_be_visible()
    expect(status).to_have_text(re.compile("copied", re.IGNORECASE))
    assert page.evaluate("() => navigator.clipboard.readText()") == url


def test_the_link_is_marked_out_of_date_after_the_next_edit(clipboard_page: Page) -> None:
    page = clipboard_page
    share(page)
    field = page.locator("#share-url")
    status = page.locator("#share-status")
    expect(field).not_to_have_class(re.compile(r"\bstale\b"))

    # Changing the view is not an edit: the link still holds this state.
    page.click("#tab-command")
    expect(page.locator("#commands")).to_be_visible()
    expect(field).not_to_have_class(re.compile(r"\bstale\b"))

    page.locator("#message-editor .message").nth(1).locator("textarea").first.fill("Later?")
    expect(field).to_have_class(re.compile(r"\bstale\b"))
    expect(status).to_have_text(re.compile("out of date", re.IGNORECASE))
    expect(field).to_have_attribute("aria-describedby", "share-status")

    url = share(page)  # a new link for the new state: current again, and copied
    expect(field).not_to_have_class(re.compile(r"\bstale\b"))
    expect(status).to_have_text(re.compile("copied", re.IGNORECASE))
    assert page.evaluate("() => navigator.clipboard.readText()") == url


@pytest.mark.parametrize("width", [1440, 390])
def test_a_link_opens_on_the_view_it_was_made_on(
    page: Page, new_page: Callable[..., Page], width: int
) -> None:
    page.click("#tab-command")
    expect(page.locator("#commands")).to_be_visible()
    url = share(page)

    opened = new_page(viewport={"width": width, "height": 844})
    opened.goto(url)
    expect(opened.locator("#tab-command")).to_have_attribute("aria-selected", "true")
    expect(opened.locator("#commands")).to_be_visible()
    expect(opened.locator("#tab-command")).to_be_in_viewport()
    output = opened.locator('.pane-button[data-pane="outputs"]')
    if width < 1000:  # where the columns stack, the Output pane is the one shown
        expect(output).to_have_attribute("aria-pressed", "true")
        expect(opened.locator(".cm-editor")).to_be_hidden()
