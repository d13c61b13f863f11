"""Choosing the render engine, and diffing the two engines, in a real browser."""

from __future__ import annotations

import json
import re

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
    expect(page.locator("#compare_template")).to_be_visible()
    page.select_option("#compare_engines", "llama.cpp")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    # One compare mode at a time: the second template is not in use now.
    expect(page.locator("#compare_template")).to_be_hidden()
    # Side by side: transformers on the left, llama.cpp on the right.
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>developer\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>system\n")
    assert page.locator("#diff-unified .delete").count() > 0


def test_diff_between_two_chosen_engines(page: Page) -> None:
    # llama.cpp on the left (the engine menu), transformers on the right (the Diff's menu).
    use_messages(page, MESSAGES)
    page.select_option("#engine", "llama.cpp")
    page.click("#tab-diff")
    page.select_option("#compare_engines", "transformers")
    expect(page.locator("#view-diff")).to_contain_text("Against the transformers engine.")
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>system\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>developer\n")
    # Both menus name every engine with its version.
    for menu in ("#engine", "#compare_engines"):
        labels = page.locator(f"{menu} option").all_inner_texts()
        assert any("b10573" in label for label in labels), labels
    page.select_option("#compare_engines", "")
    expect(page.locator("#compare_template")).to_be_visible()


def test_portability_matrix_opens_the_first_difference_in_the_diff(page: Page) -> None:
    use_messages(page, MESSAGES)
    page.click("#tab-analysis")
    llama = page.locator('#portability tr[data-engine="llama.cpp"]')
    expect(llama).to_have_attribute("data-outcome", "differs")
    expect(llama.locator("td.port-differs").first).to_have_attribute("data-conversation", "current")
    llama.locator("summary").click()
    expect(llama.locator(".port-snippet .insert")).to_contain_text("system")
    llama.locator(".open-diff").click()
    expect(page.locator("#tab-diff")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    expect(page.locator("#engine")).to_have_value("transformers")
    cells = page.locator("#diff-side .cell")
    expect(cells.nth(0)).to_have_text("<|im_start|>developer\n")
    expect(cells.nth(1)).to_have_text("<|im_start|>system\n")


#: Prints each assistant's tool calls as JSON: llama-server parses them into its own
#: structure, which writes the keys in another order, so only the tool example differs.
CALLS_AS_JSON = (
    "{% for m in messages %}{{ m.role }}:{{ m.content }}"
    "{{ m.tool_calls | tojson if m.tool_calls }}\n{% endfor %}"
)


def test_a_difference_in_an_example_opens_that_example_in_the_diff(page: Page) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", CALLS_AS_JSON)
    use_messages(page, [{"role": "user", "content": "Hi"}])
    page.click("#tab-analysis")
    llama = page.locator('#portability tr[data-engine="llama.cpp"]')
    expect(llama).to_have_attribute("data-outcome", "differs")
    cell = llama.locator('td[data-conversation="parallel-tools"]')
    expect(cell).to_have_class("port-differs")
    llama.locator("summary").click()
    expect(llama.locator("summary")).to_contain_text("parallel-tools")
    llama.locator(".open-diff").click()
    expect(page.locator("#tab-diff")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-diff")).to_contain_text("Against the llama.cpp engine.")
    assert "tool_calls" in page.locator("#messages").input_value()
    assert page.locator("#diff-unified .delete").count() > 0
    # The example came through the Examples menu: Undo brings the conversation back.
    page.click("#example-undo")
    expect(page.locator("#messages")).not_to_have_value(re.compile("tool_calls"))


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
