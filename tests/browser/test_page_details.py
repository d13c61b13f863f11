"""The smaller things a first walkthrough tripped on: a diff of equal prompts, an error
that does not say which message, a stale prompt drawn on a phone, the way from the top
of the page to the output by keyboard, and console errors for superseded renders."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.test_engines_view import use_messages
from tests.browser.test_views import set_template

pytestmark = pytest.mark.browser


def test_a_diff_of_equal_prompts_says_they_are_identical(page: Page) -> None:
    page.click("#tab-diff")
    page.select_option("#compare-library", "chatml")  # the template already loaded
    identical = page.locator("#diff-identical")
    expect(identical).to_contain_text("identical")
    expect(page.locator("#diff-unified")).to_have_count(0)
    expect(page.locator("#view-diff")).not_to_contain_text("0 lines removed")


#: As an OpenAI log has it: an assistant turn with tool calls and "content": null.
NULL_CONTENT = {
    "messages": [
        {"role": "user", "content": "Weather in Lisbon?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lisbon"}'},
                }
            ],
        },
    ]
}


def test_an_error_on_a_null_content_names_the_message(page: Page) -> None:
    page.click("#toggle-raw")
    page.fill("#messages", json.dumps(NULL_CONTENT))
    problem = page.locator("#problem")
    expect(problem).to_contain_text("has no attribute 'content'")  # transformers' words
    expect(page.locator("#problem-hint")).to_have_text(
        'Message 2 (assistant) has "content": null, which this template reads.'
    )


def test_a_stale_prompt_keeps_its_highlighting_on_a_phone(new_page: Callable[..., Page]) -> None:
    page = new_page(viewport={"width": 390, "height": 844})
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    # The prompt seen once (drawn), then edited on the Edit pane: the output pane is
    # hidden while the good prompt comes and while the error replaces it.
    page.click('.pane-button[data-pane="outputs"]')
    expect(page.locator("#prompt .seg-marker").first).to_be_visible()
    page.click('.pane-button[data-pane="inputs"]')
    set_template(page, page.evaluate("window.playground.editor.getValue()") + "{# mine #}")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    set_template(page, "{{ messages[0].content }")
    expect(page.locator("#problem")).to_be_attached()
    page.click('.pane-button[data-pane="outputs"]')
    stale = page.locator("#view-prompt .stale-content")
    expect(stale).to_be_visible()
    expect(stale.locator("pre.prompt .seg-marker").first).to_be_visible()


def test_a_skip_link_takes_the_keyboard_to_the_output(page: Page) -> None:
    page.keyboard.press("Tab")
    skip = page.locator("a.skip-link")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("#tab-prompt")).to_be_focused()


def test_a_phone_skips_to_the_output_pane(new_page: Callable[..., Page]) -> None:
    page = new_page(viewport={"width": 390, "height": 844})
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#tab-prompt")).to_be_focused()
    expect(page.locator("#prompt")).to_be_visible()


def test_renders_made_stale_by_typing_leave_no_console_error(page: Page) -> None:
    """Each edit supersedes the render on its way; none of them may log an error (htmx
    logged `htmx:sendAbort` for each one it aborted)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    held: list[Route] = []
    page.route("**/fragments/output", lambda route: held.append(route))
    use_messages(page, [{"role": "user", "content": "a"}])
    for text in ("ab", "abc", "abcd", "abcde"):
        page.wait_for_timeout(300)  # the last edit's render is on its way, held
        page.fill("#messages", json.dumps([{"role": "user", "content": text}]))
    for _ in range(100):
        page.wait_for_timeout(50)
        while held:
            held.pop(0).continue_()
        if "abcde" in page.locator("#prompt-raw").input_value():
            break
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("abcde"))
    assert not [e for e in errors if "htmx" in e], errors
