"""Each view starts with its result: options and explanations fold, on a laptop and on a
phone, so opening a view shows what it computed without scrolling."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab
from tests.browser.test_axe import show
from tests.browser.test_response_view import fill_completion, load_qwen3

pytestmark = pytest.mark.browser

SCREENS = {1440: 900, 390: 844}

#: Each view, and the element that is its result.
RESULTS = {
    "prompt": "#prompt",
    "diff": "#diff-unified",
    "analysis": "#diagnostics",
    "response": "#responses .response pre.message",
    "command": "pre.command",
}


def at_width(new_page: Callable[..., Page], width: int) -> Page:
    """The page on a screen of `width`, its inputs shown (on a phone, the Edit pane)."""
    page = new_page(viewport={"width": width, "height": SCREENS[width]})
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    pane = page.locator('.pane-button[data-pane="inputs"]')
    if pane.is_visible():
        pane.click()
    return page


def opened(new_page: Callable[..., Page], width: int) -> Page:
    page = at_width(new_page, width)
    load_qwen3(page)
    fill_completion(page, "parallel tool calls")
    show(page, "diff", "#compare-library")
    page.select_option("#compare-library", "chatml")
    return page


@pytest.mark.parametrize("width", SCREENS)
def test_the_first_screen_of_each_view_shows_its_result(
    new_page: Callable[..., Page], width: int
) -> None:
    page = opened(new_page, width)
    for view, result in RESULTS.items():
        show(page, view, result)
        page.evaluate("window.scrollTo(0, 0); document.getElementById('outputs').scrollTo(0, 0)")
        top = page.locator(result).first.evaluate("e => e.getBoundingClientRect().top")
        # At least the result's first lines on screen (120 px: five lines of a prompt).
        assert top < SCREENS[width] - 120, f"{view} at {width} px: its result starts at {top}"


def test_the_response_views_parser_menus_are_one_line_until_changed(page: Page) -> None:
    load_qwen3(page)
    fill_completion(page, "one tool call")
    show(page, "response", '.response[data-engine="vllm"] pre.message')
    menus = page.locator("#parser-menus")
    summary = menus.locator("summary")
    expect(summary).to_contain_text("as each engine picks")
    expect(page.locator("#parser-vllm-tool_call_parser")).to_be_hidden()
    summary.click()
    page.select_option("#parser-vllm-tool_call_parser", "pythonic")
    expect(summary).to_contain_text("--tool-call-parser pythonic")
    expect(page.locator('.response[data-engine="vllm"] h2')).to_contain_text("pythonic")


def test_the_command_views_commands_come_before_its_notes(page: Page) -> None:
    show(page, "command", "pre.command")
    notes = page.locator("#command-notes")
    expect(notes).to_contain_text("MODEL.gguf")
    # Both measured in one call, and again until an answer still on its way is swapped
    # in: two calls could measure the command in one output and the notes in the next.
    page.wait_for_function(
        """() => {
            const notes = document.getElementById("command-notes").getBoundingClientRect();
            const first = document.querySelector("pre.command").getBoundingClientRect();
            return notes.height > 0 && first.height > 0 && notes.top > first.bottom;
        }"""
    )


@pytest.mark.parametrize("width", SCREENS)
def test_the_tokens_view_shows_its_tokens_on_the_first_screen(
    new_page: Callable[..., Page], width: int, small_vocab: Path
) -> None:
    # Six messages: the count, the rule, tokens per message and the ids come before the
    # tokens themselves, which a phone showed at its last line (780 of 844 px).
    page = at_width(new_page, width)
    page.select_option("#example-select", "parallel-tools")
    page.click("#example-load")
    expect(page.locator("#message-editor .message")).to_have_count(6)
    load_vocab(page, small_vocab)
    show(page, "tokens", "#tokens .tok")
    # Six messages and the generation prompt after the last.
    expect(page.locator("#message-tokens tbody tr")).to_have_count(7)
    page.evaluate("window.scrollTo(0, 0); document.getElementById('outputs').scrollTo(0, 0)")
    top = page.locator("#tokens").evaluate("e => e.getBoundingClientRect().top")
    assert top < SCREENS[width] - 120, f"tokens at {width} px start at {top}"
