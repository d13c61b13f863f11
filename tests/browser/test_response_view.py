"""The Completion box and the Response view in Chromium, as a new user meets them: load
Qwen3 from the library, fill the completion with its parallel tool calls, read what each
runtime returns, break the JSON and read why; by keyboard too, and with axe."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.library import load_library
from tests.browser.test_axe import AXE, WIDTHS, open_page, show, violations

pytestmark = pytest.mark.browser


def load_qwen3(page: Page) -> None:
    load_library(page, "qwen3")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"<\|im_start\|>assistant\n$"))


def fill_completion(page: Page, label: str) -> None:
    page.locator("#completion-box summary").click()
    page.select_option("#completion-kind", label=label)
    page.click("#completion-fill")
    expect(page.locator("#completion-status")).to_contain_text("Filled with")


def message_of(page: Page, engine: str) -> dict:
    card = page.locator(f'.response[data-engine="{engine}"]')
    expect(card.locator("pre.message")).to_be_visible()
    return json.loads(card.locator("pre.message").text_content())


def test_parallel_tool_calls_read_by_llama_cpp_and_vllm(page: Page) -> None:
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text))
    load_qwen3(page)
    fill_completion(page, "parallel tool calls")
    expect(page.locator("#completion")).to_have_value(
        re.compile(r"<tool_call>[\s\S]*get_local_time")
    )
    expect(page.locator("#tools")).to_have_value(re.compile("get_weather"))
    page.click("#tab-response")
    for engine in ("llama.cpp", "vllm"):
        calls = message_of(page, engine)["tool_calls"]
        assert [c["function"]["name"] for c in calls] == ["get_weather", "get_local_time"]
    vllm = page.locator('.response[data-engine="vllm"]')
    expect(vllm.locator("h2")).to_contain_text("hermes")
    expect(vllm.locator(".round-trip")).to_contain_text("Next turn:")
    expect(page.locator('.response[data-engine="tgi"] .no-parser')).to_contain_text("grammar")

    # The JSON of the first call broken: each runtime's actual answer, explained.
    broken = page.locator("#completion").input_value().replace('"Paris"}}', '"Paris"}', 1)
    page.fill("#completion", broken)
    for engine in ("llama.cpp", "vllm"):
        card = page.locator(f'.response[data-engine="{engine}"]')
        expect(card.locator(".answer-note, .answer-error").first).to_be_visible()
    # The page's code applies no inline style or script: the CSP forbids both.
    for view in ("tokens", "diff", "analysis", "command", "prompt"):
        page.click(f"#tab-{view}")
        expect(page.locator(f"#view-{view}")).to_be_visible()
    assert [text for text in said if "Content Security Policy" in text] == []


def test_the_menu_and_the_view_work_from_the_keyboard(page: Page) -> None:
    load_qwen3(page)
    page.locator("#completion-box summary").focus()
    page.keyboard.press("Enter")  # opens the box
    page.keyboard.press("Tab")
    expect(page.locator("#completion-kind")).to_be_focused()
    page.keyboard.press("ArrowDown")  # "reasoning, then an answer"
    page.keyboard.press("Tab")
    expect(page.locator("#completion-fill")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#completion")).to_be_focused()
    expect(page.locator("#completion")).to_have_value(re.compile(r"<think>\nThe user asks"))
    page.locator("#completion-undo").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#completion")).to_have_value("")
    page.locator("#tab-prompt").focus()
    for _ in range(4):  # Prompt → Tokens → Diff → Analysis → Response
        page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-response")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator('.response[data-engine="llama.cpp"]')).to_be_visible()


def test_a_fill_asked_for_twice_is_undone_in_one_step(page: Page) -> None:
    """A double click asks twice; the answer that comes second must not record the first
    one's text as what it replaced, or Undo brings back a fill instead of the user's text."""
    load_qwen3(page)
    page.locator("#completion-box summary").click()
    page.fill("#completion", "my own text")
    page.select_option("#completion-kind", label="a plain answer")
    page.dblclick("#completion-fill")
    expect(page.locator("#completion-status")).to_contain_text("Filled with")
    expect(page.locator("#completion")).not_to_have_value("my own text")
    page.click("#completion-undo")
    expect(page.locator("#completion")).to_have_value("my own text")
    expect(page.locator("#completion-undo")).to_be_disabled()


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is missing: run ./playground (npm ci)")
@pytest.mark.parametrize("width", WIDTHS)
def test_no_serious_violations_in_the_response_view(
    new_page: Callable[..., Page], width: int
) -> None:
    page = open_page(new_page, width)
    pane = page.locator('.pane-button[data-pane="inputs"]')
    if pane.is_visible():
        pane.click()
    load_qwen3(page)
    fill_completion(page, "parallel tool calls")
    show(page, "response", '.response[data-engine="vllm"] pre.message')
    # The view and its menus; the editors' own findings are the page round's (axe test).
    assert not violations(page, "#view-response")
    assert not violations(page, '.view-tools[data-for="response"]')
    assert not violations(page, "#completion-box")
