"""Example conversations: a menu that replaces the conversation, and the Undo beside it
(undo.js) that brings it back."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.library import load_library

pytestmark = pytest.mark.browser

#: Every example in the menu (static/examples.js).
EXAMPLES = ["plain", "multi-turn", "parallel-tools", "reasoning", "continue"]


def conversation(page: Page) -> dict:
    """The fields an example sets, as the form holds them."""
    return {
        "messages": json.loads(page.locator("#messages").input_value()),
        "tools": page.locator("#tools").input_value(),
        "add_generation_prompt": page.locator("#add_generation_prompt").is_checked(),
        "continue_final_message": page.locator("#continue_final_message").input_value(),
    }


def choose(page: Page, name: str) -> None:
    page.select_option("#example-select", name)
    page.click("#example-load")


def test_an_example_replaces_the_conversation_and_undo_restores_it(page: Page) -> None:
    first = conversation(page)
    bar = page.locator("#examples + #undo-bar")  # right after the menu
    undo = bar.get_by_role("button", name="Undo")
    expect(undo).to_be_hidden()  # nothing to undo yet

    choose(page, "parallel-tools")
    messages = conversation(page)["messages"]
    calls = messages[1]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_weather", "get_local_time"]
    assert [m.get("tool_call_id") for m in messages[2:4]] == [c["id"] for c in calls]
    assert json.loads(conversation(page)["tools"])[0]["function"]["name"] == "get_weather"
    expect(page.locator("#message-editor .message")).to_have_count(len(messages))
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"<\|im_start\|>tool\n\{"))
    expect(bar).to_contain_text("Tools: two calls at once")
    expect(page.locator("#example-load")).to_be_focused()
    tools_example = conversation(page)

    choose(page, "continue")
    state = conversation(page)
    assert state["continue_final_message"] == "true"
    assert not state["add_generation_prompt"]
    assert state["tools"] == ""
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"assistant\n[^<]+,$"))

    undo.click()
    assert conversation(page) == tools_example
    expect(page.locator("#message-editor .message")).to_have_count(len(messages))
    undo.click()
    assert conversation(page) == first
    expect(undo).to_be_hidden()
    expect(page.locator("#prompt-raw")).to_have_value(
        re.compile(r"What is the capital of France\?<\|im_end\|>\n<\|im_start\|>assistant\n$")
    )


def test_ctrl_z_in_the_menu_undoes_the_example(page: Page) -> None:
    first = conversation(page)
    choose(page, "reasoning")
    assert conversation(page) != first
    page.locator("#example-select").focus()
    page.keyboard.press("Control+z")
    assert conversation(page) == first


@pytest.mark.parametrize("template", ["qwen3", "gpt-oss"])
def test_every_example_renders_with_real_templates(page: Page, template: str) -> None:
    load_library(page, template)
    options = page.locator("#example-select option[value]:not([value=''])")
    assert options.evaluate_all("(os) => os.map((o) => o.value)") == EXAMPLES
    for name in EXAMPLES:
        choose(page, name)
        last = conversation(page)["messages"][-1]["content"]
        expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(last[:20])))
        expect(page.locator("#problem")).to_have_count(0)


def test_the_parallel_calls_example_finds_a_template_that_refuses_them(page: Page) -> None:
    load_library(page, "llama3.1")
    choose(page, "parallel-tools")
    expect(page.locator("#problem")).to_contain_text("single tool-calls")
