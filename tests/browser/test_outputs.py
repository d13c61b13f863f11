"""The output views in a real browser: whitespace markers, long prompts, the Tokens view."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab
from tests.support.page_data import long_conversation

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
    expect(page.locator("#outputs")).to_have_class(re.compile(r"\bview-prompt\b"))


def paste_messages(page: Page, messages: list[dict]) -> None:
    if page.locator("#raw-messages").is_hidden():
        page.click("#toggle-raw")
    with page.expect_response("**/fragments/output", timeout=30_000):
        page.fill("#messages", json.dumps(messages))
    tail = messages[-1]["content"][-30:]
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(tail)))


def nodes(page: Page, selector: str) -> int:
    return page.evaluate("s => document.querySelectorAll(s).length", selector)


def test_a_long_prompt_draws_only_what_is_on_screen(page: Page, small_vocab: Path) -> None:
    load_vocab(page, small_vocab)
    paste_messages(page, long_conversation(20_000, turns=20))
    text = page.locator("#prompt-raw").input_value()
    runs = len(re.findall(r" +|\n", text))
    assert runs > 20_000

    # The Prompt view: the whole prompt as text, markers only near the screen.
    expect(page.locator("#prompt .seg-newline").first).to_be_attached()
    assert page.locator("#prompt").text_content() == text
    assert nodes(page, "#prompt *") < runs / 10

    # The Tokens view: only the tokens near the screen are elements.
    # Opening it asks for the tokens: wait for that render to be swapped in.
    with page.expect_response("**/fragments/output"):
        page.click(".tab[data-view=tokens]")
    expect(page.locator('#tokens[data-counts="later"]')).to_have_count(0)
    tokens = int(page.locator("#token-count").inner_text().split()[0])
    assert tokens > 30_000

    # The answer carries the prompt's text and a few bytes per token, not HTML per token.
    with page.expect_response("**/fragments/output") as answer:
        set_template(page, page.locator("#template").input_value() + "!")
    size = len(answer.value.body())
    assert size - 2 * len(text) < 16 * tokens, (size, len(text), tokens)
    expect(page.locator("#prompt-raw")).to_have_value(text + "!")
    expect(page.locator("#tokens .tok").first).to_be_visible()
    assert nodes(page, "#tokens .tok") < tokens / 10
    assert page.locator("#tokens").text_content() == text + "!"
    # Scrolling to the end draws the end, and lets go of the start.
    page.locator("#tokens .block").last.scroll_into_view_if_needed()
    expect(page.locator(f'#tokens .tok[data-i="{tokens - 1}"]')).to_be_attached()
    expect(page.locator('#tokens .tok[data-i="0"]')).to_have_count(0)
    assert nodes(page, "#tokens .tok") < tokens / 10


def test_the_tokens_view_can_be_read(page: Page, small_vocab: Path) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    load_vocab(page, small_vocab)
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "what is the   capital"},
        {"role": "assistant", "content": "it is paris"},
    ]
    paste_messages(page, messages)
    page.click(".tab[data-view=tokens]")
    # Opening the view asks for the tokens per message (a render per message).
    expect(page.locator("#message-tokens")).to_be_visible()
    drawn = page.locator("#tokens .tok")
    expect(drawn.first).to_be_visible()
    count = int(page.locator("#token-count").inner_text().split()[0])
    expect(drawn).to_have_count(count)
    ids = json.loads(page.locator("#token-ids").text_content())
    assert len(ids) == count
    assert drawn.evaluate_all("spans => spans.map(s => Number(s.dataset.id))") == ids

    # Newline tokens and whitespace-only tokens can be seen.
    newline = page.locator("#tokens .tok.has-nl").first
    mark = newline.evaluate("t => getComputedStyle(t.querySelector('.nl'), '::before').content")
    assert mark == '"↵"'
    assert newline.bounding_box()["width"] > 0
    assert page.locator("#tokens .tok.ws").count() > 0

    # Ids beside each piece, on request.
    first_after = "getComputedStyle(document.querySelector('#tokens .tok'), '::after').content"
    assert page.evaluate(f"() => {first_after}") in ("none", "normal")
    page.check("#show-ids")
    assert page.evaluate(f"() => {first_after}") == f'"{ids[0]}"'

    # Hovering a piece highlights its id, and the other way round.
    drawn.nth(3).hover()
    expect(page.locator('#token-ids .tid[data-i="3"]')).to_have_class(re.compile(r"\bhover\b"))
    page.locator('#token-ids .tid[data-i="5"]').hover()
    expect(drawn.nth(5)).to_have_class(re.compile(r"\bhover\b"))
    expect(drawn.nth(3)).not_to_have_class(re.compile(r"\bhover\b"))

    # The ids copy as a JSON array.
    page.click("#copy-ids")
    expect(page.locator("#copy-ids")).to_have_text("Copied")
    assert json.loads(page.evaluate("() => navigator.clipboard.readText()")) == ids

    # Tokens per message: each message's part of the prompt, adding up to the whole.
    rows = page.locator("#message-tokens tbody tr")
    expect(rows).to_have_count(len(messages) + 1)  # and the generation prompt
    counts = rows.evaluate_all("rows => rows.map(r => Number(r.cells[2].textContent))")
    assert sum(counts) == count and all(counts)
    chars = rows.evaluate_all("rows => rows.map(r => Number(r.cells[3].textContent))")
    assert sum(chars) == len(page.locator("#prompt-raw").input_value())
