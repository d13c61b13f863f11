"""The Completion box and the Response view in Chromium, as a new user meets them: load
Qwen3 from the library, fill the completion with its parallel tool calls, read what each
runtime returns, break the JSON and read why; by keyboard too, and with axe."""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.library import load_library
from tests.browser.test_axe import AXE, WIDTHS, open_page, show, violations

pytestmark = pytest.mark.browser

#: Where the main test leaves a picture of the Response view with the broken call.
SCREENSHOT = Path(tempfile.gettempdir()) / "playground-response-view.png"
#: Where the Edge-LLM test leaves a picture of its card with the two calls.
EDGE_SCREENSHOT = Path(tempfile.gettempdir()) / "playground-response-edge-llm.png"


def load_qwen3(page: Page) -> None:
    load_library(page, "qwen3")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"<\|im_start\|>assistant\n$"))


def fill_completion(page: Page, label: str) -> None:
    page.locator("#completion-box summary").click()
    page.select_option("#completion-kind", label=label)
    page.click("#completion-fill")
    expect(page.locator("#completion-status")).to_contain_text("Filled with")


def message_of(page: Page, engine: str) -> dict:
    message = card(page, engine).locator("pre.message")
    expect(message).to_be_visible()
    return json.loads(message.text_content())


def card(page: Page, engine: str):
    return page.locator(f'.response[data-engine="{engine}"]')


def test_parallel_tool_calls_read_by_llama_cpp_and_vllm(page: Page) -> None:
    """The issue's Done-when, step by step: Qwen3 from the library, "parallel tool calls"
    from the completion menu, two calls read by llama.cpp and by vLLM (hermes), each round
    trip marked with its reason; then one call's JSON broken, and each runtime's actual
    answer explained."""
    said: list[str] = []
    page.on("console", lambda message: said.append(message.text))
    load_qwen3(page)
    expect(page.locator("#template-origin")).to_contain_text("qwen3")
    fill_completion(page, "parallel tool calls")
    expect(page.locator("#completion")).to_have_value(
        re.compile(r"<tool_call>[\s\S]*get_local_time")
    )
    expect(page.locator("#tools")).to_have_value(re.compile("get_weather"))
    page.click("#tab-response")
    for engine in ("llama.cpp", "vllm"):
        calls = message_of(page, engine)["tool_calls"]
        assert [c["function"]["name"] for c in calls] == ["get_weather", "get_local_time"]
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"city": "Paris"}] * 2
    expect(card(page, "vllm").locator("h2")).to_contain_text("hermes")
    expect(card(page, "llama.cpp").locator("h2")).to_contain_text("peg-native")
    # vLLM's qwen3 reasoning parser returns the empty thinking block's "\n\n" as reasoning;
    # llama-server returns none: two readings, no majority, both marked.
    expect(card(page, "llama.cpp").locator(".differs-badge")).to_contain_text("vLLM")
    expect(card(page, "vllm").locator(".differs-badge")).to_contain_text("llama.cpp")
    # The round trip, with its reason: Qwen3 writes a thinking block back only for a
    # message that has reasoning, so llama-server's answer loses the empty one.
    llama_trip = card(page, "llama.cpp").locator(".round-trip")
    expect(llama_trip).to_contain_text("Next turn: the cache is not reused.", use_inner_text=True)
    expect(llama_trip).to_contain_text("The template drops the thinking block from the history")
    # Both sides of the first difference: "<t" is shared ("<think>", "<tool_call>").
    expect(llama_trip.locator(".round-trip-sides .delete")).to_contain_text("</think>")
    expect(llama_trip.locator(".round-trip-sides .insert")).to_contain_text("ool_call>")
    vllm_trip = card(page, "vllm").locator(".round-trip")
    expect(vllm_trip).to_contain_text("Next turn: the cache is reused.", use_inner_text=True)
    expect(vllm_trip).to_contain_text("The next prompt starts with this prompt and its completion")
    expect(card(page, "tgi").locator(".no-parser")).to_contain_text("grammar")
    page.click("#tab-analysis")
    expect(page.locator("#round-trip-table")).to_contain_text("this prompt + completion")
    page.click("#tab-response")

    # The JSON of the first call broken: each runtime's actual answer, explained.
    broken = page.locator("#completion").input_value().replace('"Paris"}}', '"Paris"}', 1)
    page.fill("#completion", broken)
    llama = card(page, "llama.cpp")
    expect(llama.locator(".answer-error")).to_contain_text(
        "does not match the expected peg-native format"
    )
    expect(llama.locator(".answer-note").last).to_contain_text(
        "reads the completion only up to character 86 of 182"
    )
    expect(llama.locator(".round-trip")).to_contain_text("no message to send back")
    vllm = card(page, "vllm")
    expect(vllm.locator(".answer-note")).to_contain_text(
        "`<tool_call>` block 1 is not valid JSON (Expecting ',' delimiter: line 3 column 1"
    )
    message = message_of(page, "vllm")
    assert "tool_calls" not in message and "<tool_call>" in message["content"]
    # Without a call the next turn is a question, and Qwen3 drops the (empty) thinking.
    expect(vllm.locator(".round-trip")).to_contain_text(
        "the cache is not reused. The template drops the thinking block from the history"
    )
    # caret="initial": hiding the caret sets style="" on every input, which htmx's next
    # swap then copies onto the new #prompt-raw, and the CSP refuses (a test artifact).
    page.locator("#view-response").screenshot(path=SCREENSHOT, caret="initial")
    # The page's code applies no inline style or script: the CSP forbids both.
    for view in ("tokens", "diff", "analysis", "command", "prompt"):
        page.click(f"#tab-{view}")
        expect(page.locator(f"#view-{view}")).to_be_visible()
    assert [text for text in said if "Content Security Policy" in text] == []


def test_edge_llm_reads_the_parallel_calls_as_its_server_does(page: Page) -> None:
    """Qwen3 from the library, "parallel tool calls": TensorRT Edge-LLM's server reads the
    two calls (its auto picks by the model's name, here the library's qwen3: hermes), keeps
    the thinking block in the content (the request does not set enable_thinking) and
    says so; with enable_thinking its qwen3 reasoning parser reads the thinking, and the
    Command view's serve line carries the flags."""
    load_qwen3(page)
    fill_completion(page, "parallel tool calls")
    page.click("#tab-response")
    edge = card(page, "edge-llm")
    expect(edge.locator("h2")).to_contain_text("TensorRT Edge-LLM")
    expect(edge.locator("h2 code")).to_have_text("hermes")
    message = message_of(page, "edge-llm")
    calls = message["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_weather", "get_local_time"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"city": "Paris"}] * 2
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", c["id"]) for c in calls)
    assert message["content"].startswith("<think>") and "reasoning_content" not in message
    # The library's Qwen3 loops over `messages | reverse`, which Edge-LLM's Inja does not
    # know: its server would not start with it, and the reading says so first.
    expect(edge.locator(".answer-note").first).to_contain_text("Edge-LLM would not load this model")
    expect(edge.locator(".answer-note").nth(1)).to_contain_text("does not set enable_thinking")
    expect(edge.locator(".parser-options")).to_contain_text("--reasoning-parser auto")
    expect(edge.locator(".round-trip")).to_contain_text("Next turn:", use_inner_text=True)
    edge.scroll_into_view_if_needed()
    edge.screenshot(path=EDGE_SCREENSHOT, caret="initial")
    # Thinking on, asked in the request: its qwen3 parser (auto, by the model's name).
    page.fill("#kwargs", '{"enable_thinking": true}')
    expect(edge.locator("h2 code")).to_have_text("hermes + qwen3")
    thought = message_of(page, "edge-llm")
    assert (thought["reasoning_content"], thought["content"]) == ("\n\n", "\n\n\n")
    page.click("#tab-command")
    serve = page.locator('pre.command[data-engine="edge-llm"][data-form="serve"]')
    expect(serve).to_contain_text("--tool-call-parser auto --reasoning-parser auto")


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
