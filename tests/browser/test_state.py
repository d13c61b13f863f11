"""The page never loses work: reload, Back and Reset, with the editors, the hidden JSON
and the source box agreeing; the named-template tabs of an uploaded source work."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import TIMEOUT_MS, PageErrors, chromium_path
from tests.browser.test_page import messages_json, prompt, set_template
from tests.support.chromium import CHROMIUM_ARGS
from tests.support.server import Server

pytestmark = pytest.mark.browser

DEFAULT = "DEFAULT {% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
TOOL_USE = "TOOL_USE {% for m in messages %}<{{ m.role }}> {{ m.content }}\n{% endfor %}"
LEFT = "LEFT {% for m in messages %}{{ m.content }}|{% endfor %}"
NAMED_TEMPLATES = [
    {"name": "default", "template": DEFAULT},
    {"name": "tool_use", "template": TOOL_USE},
]


def upload_named_templates(page: Page, folder: Path) -> None:
    """Hugging Face files whose config holds two named templates."""
    config = folder / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": NAMED_TEMPLATES, "bos_token": "<s>"}))
    page.set_input_files("#hf-files", str(config))
    expect(page.locator("#source-file")).to_have_text("tokenizer_config.json")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^DEFAULT "))


def editor_text(page: Page) -> str:
    return page.evaluate("window.playground.editor.getValue()")


def add_message(page: Page, content: str) -> None:
    cards = page.locator("#message-editor .message")
    count = cards.count()
    page.click("#add-message")
    expect(cards).to_have_count(count + 1)
    cards.nth(count).locator("textarea").first.fill(content)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(content)))


def expect_consistent(page: Page, contents: list[str]) -> None:
    """The message editor, the hidden JSON and the prompt show the same conversation."""
    cards = page.locator("#message-editor .message")
    expect(cards).to_have_count(len(contents))
    assert [m["content"] for m in messages_json(page)] == contents
    shown = cards.evaluate_all("cards => cards.map(c => c.querySelector('textarea').value)")
    assert shown == contents
    for content in contents:
        expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(content)))


def test_template_tabs_switch_after_an_upload(page: Page, tmp_path: Path) -> None:
    upload_named_templates(page, tmp_path)
    tabs = page.locator(".template-tab")
    expect(tabs).to_have_count(2)
    expect(page.locator(".template-tab.active")).to_have_text("default")

    page.click(".template-tab[data-template-name=tool_use]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^TOOL_USE <system> "))
    assert editor_text(page) == TOOL_USE
    expect(page.locator("#template_name")).to_have_value("tool_use")
    expect(page.locator(".template-tab.active")).to_have_text("tool_use")

    page.click(".template-tab[data-template-name=default]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^DEFAULT "))
    assert editor_text(page) == DEFAULT


def test_reload_keeps_the_whole_state(page: Page, tmp_path: Path) -> None:
    upload_named_templates(page, tmp_path)
    page.click(".template-tab[data-template-name=tool_use]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^TOOL_USE "))
    edited = TOOL_USE.replace("TOOL_USE", "EDITED")
    set_template(page, edited)
    add_message(page, "A third message")
    page.fill("#kwargs", '{"enable_thinking": false}')
    page.click(".tab[data-view=tokens]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^EDITED "))
    before = prompt(page)

    page.reload()
    expect(page.locator("#prompt-raw")).to_have_value(before)
    assert editor_text(page) == edited
    expect_consistent(
        page, ["You are a helpful assistant.", "What is the capital of France?", "A third message"]
    )
    expect(page.locator("#kwargs")).to_have_value('{"enable_thinking": false}')
    expect(page.locator(".tab.active")).to_have_attribute("data-view", "tokens")
    expect(page.locator("#outputs")).to_have_class(re.compile(r"\bview-tokens\b"))
    expect(page.locator("#source-file")).to_have_text("tokenizer_config.json")
    expect(page.locator("#template_name")).to_have_value("tool_use")
    expect(page.locator(".template-tab.active")).to_have_text("tool_use")


def test_back_from_a_share_shows_what_was_left(
    page: Page, new_page: Callable[[], Page], page_errors: PageErrors
) -> None:
    page_errors.allow(r"favicon\.ico")  # the JSON page visited in between has none
    page.click("#share-button")
    expect(page.locator("#share-url")).to_have_value(re.compile(r"/s/[0-9a-f]{24}$"))
    url = page.locator("#share-url").input_value()

    shared = new_page()
    shared.goto(url)
    expect(shared.locator("#message-editor .message")).to_have_count(2)
    add_message(shared, "Added after opening the share")
    shared.goto("/api/engines")  # leave the page...
    shared.go_back()  # ...and come back to it
    expect(shared.locator(".cm-editor")).to_be_visible()
    contents = [
        "You are a helpful assistant.",
        "What is the capital of France?",
        "Added after opening the share",
    ]
    expect_consistent(shared, contents)

    # The next keystroke edits that conversation: no phantom turn appears.
    card = shared.locator("#message-editor .message").nth(2).locator("textarea").first
    card.press_sequentially("!", delay=30)
    contents[2] += "!"
    expect(shared.locator("#prompt-raw")).to_have_value(re.compile(re.escape(contents[2])))
    expect_consistent(shared, contents)
    assert prompt(shared).count("<|im_start|>") == 4  # 3 turns and the generation prompt


@pytest.fixture()
def cached_page(
    browser: Browser, browser_server: Server, page_errors: PageErrors
) -> Iterator[Page]:
    """The page in a Chromium that keeps pages in its back-forward cache (Playwright turns
    the cache off by default), watched for errors like every page."""
    chromium = browser.browser_type.launch(
        executable_path=chromium_path(),
        args=CHROMIUM_ARGS,
        ignore_default_args=["--disable-back-forward-cache"],
    )
    page = chromium.new_page(base_url=browser_server.url)
    page.set_default_timeout(TIMEOUT_MS)
    page.on("pageerror", lambda error: page_errors.messages.append(f"pageerror: {error}"))
    page.on("console", page_errors.console)
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("<\\|im_start\\|>"))
    yield page
    chromium.close()
    unexpected = page_errors.unexpected()
    assert not unexpected, "errors in the page:\n" + "\n".join(unexpected)


def test_back_from_the_back_forward_cache_shows_the_state_left(
    cached_page: Page, page_errors: PageErrors
) -> None:
    page = cached_page
    page_errors.allow(r"favicon\.ico")  # the JSON page visited in between has none
    add_message(page, "Added before leaving")
    page.evaluate("() => { window.notReloaded = true; }")
    # Leave in the middle of an edit: its render is not asked yet (the debounce).
    set_template(page, LEFT)
    page.goto("/api/engines")
    page.go_back(wait_until="commit")  # a page from the cache fires no load event
    # The same document, kept in the cache: not a reload that restored the saved state.
    expect(page.locator(".cm-editor")).to_be_visible()
    assert page.evaluate("window.notReloaded") is True
    contents = [
        "You are a helpful assistant.",
        "What is the capital of France?",
        "Added before leaving",
    ]
    expect(page.locator("#prompt-raw")).to_have_value("LEFT " + "|".join(contents) + "|")
    assert editor_text(page) == LEFT
    expect_consistent(page, contents)

    # The next keystroke edits that state, and a reload keeps it.
    card = page.locator("#message-editor .message").nth(2).locator("textarea").first
    card.press_sequentially("!", delay=30)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"before leaving!\|$"))
    page.wait_for_timeout(400)  # persist.js saves after a pause in typing
    page.reload()
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"before leaving!\|$"))
    assert page.evaluate("window.notReloaded") is None


def test_reset_returns_to_the_default_state_and_back_undoes_it(page: Page) -> None:
    default_prompt = prompt(page)
    add_message(page, "Kept for Back")
    set_template(page, "MINE {{ messages | length }}")
    expect(page.locator("#prompt-raw")).to_have_value("MINE 3")

    page.click("#reset")
    expect(page.locator("#prompt-raw")).to_have_value(default_prompt)
    expect_consistent(page, ["You are a helpful assistant.", "What is the capital of France?"])
    assert "<|im_start|>" in editor_text(page)

    page.go_back()
    expect(page.locator("#prompt-raw")).to_have_value("MINE 3")
    assert editor_text(page) == "MINE {{ messages | length }}"
    expect(page.locator("#message-editor .message")).to_have_count(3)


def test_a_state_too_large_to_keep_says_so(page: Page) -> None:
    # As the browser answers when sessionStorage is full (a few MB per site).
    page.evaluate(
        """() => { Storage.prototype.setItem = function () {
            throw new DOMException("full", "QuotaExceededError"); }; }"""
    )
    set_template(page, "TOO BIG")
    note = page.locator("#persist-note")
    expect(note).to_be_visible()
    expect(note).to_have_text(
        "This state is too large to keep across a reload: Share it to keep it."
    )


def expect_compare_mode(page: Page, engine: str) -> None:
    """The Diff compares against `engine` ("" for a second template), and shows only the
    controls of that mode."""
    expect(page.locator("#compare_engines")).to_have_value(engine)
    if engine:
        expect(page.locator("#view-diff")).to_contain_text(re.compile(r"Against the .+ engine\."))
        expect(page.locator("#compare-templates")).to_be_hidden()
    else:
        expect(page.locator("#compare_template")).to_be_visible()


def test_reload_back_and_forward_show_one_compare_mode(page: Page) -> None:
    page.click("#tab-diff")
    expect_compare_mode(page, "")
    page.select_option("#compare_engines", "llama.cpp")
    expect_compare_mode(page, "llama.cpp")
    page.wait_for_timeout(400)  # persist.js saves after a pause

    page.reload()  # the server's page compares templates; the saved state, engines
    expect_compare_mode(page, "llama.cpp")

    page.click("#reset")  # a new entry, comparing templates
    expect(page.locator("#tab-diff")).to_have_attribute("aria-selected", "false")
    page.click("#tab-diff")
    expect_compare_mode(page, "")
    page.wait_for_timeout(400)
    page.go_back()  # the first entry, restored in this document: engines again
    expect_compare_mode(page, "llama.cpp")
    page.go_forward()  # and the reset one: templates again
    expect_compare_mode(page, "")
