"""Choosing the render engine, and diffing the two engines, in a real browser."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

MESSAGES = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
#: MESSAGES in the default (ChatML) template, as transformers renders them.
TURNS = "<|im_start|>developer\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"


def use_messages(page: Page, messages: list) -> None:
    if page.locator("#raw-messages").is_hidden():
        page.click("#toggle-raw")
    page.fill("#messages", json.dumps(messages))


def test_llama_cpp_engine_shows_its_rewrites(page: Page) -> None:
    use_messages(page, MESSAGES)
    expect(page.locator("#prompt-raw")).to_have_value(
        "<|im_start|>developer\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    page.select_option("#engine", "llama.cpp")
    expect(page.locator("#rewrites")).to_contain_text("developer message turned into system")
    expect(page.locator("#prompt-raw")).to_have_value(
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_diff_of_the_two_engines(page: Page) -> None:
    use_messages(page, MESSAGES)
    page.click("#tab-diff")
    page.select_option("#compare_engines", "llama.cpp")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    # Side by side: transformers on the left, llama.cpp on the right.
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>developer\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>system\n")
    assert page.locator("#diff-unified .delete").count() > 0


def test_transformers_js_engine_renders_and_shows_what_it_leaves_to_the_caller(page: Page) -> None:
    """Rendered in Node on the server: the final message stays closed under
    continue_final_message, as transformers.js renders it, and the page says why."""
    use_messages(page, [*MESSAGES, {"role": "assistant", "content": "Hel"}])
    page.uncheck("#add_generation_prompt")
    page.select_option("#continue_final_message", "true")
    prompt = page.locator("#prompt-raw")
    expect(prompt).to_have_value(TURNS + "<|im_start|>assistant\nHel")
    page.select_option("#engine", "transformers.js")
    expect(page.locator("#rewrites")).to_contain_text("does not continue the final message")
    expect(prompt).to_have_value(TURNS + "<|im_start|>assistant\nHel<|im_end|>\n")
