"""The template editor (CodeMirror 6) in a real browser: completion of the names a chat
template sees, problems as lint marks at their line, and no style blocked by the CSP."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def type_at_end(page: Page, text: str) -> None:
    """Click into the editor, go to the end of the template and type `text`."""
    page.locator(".cm-editor .cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def offered(page: Page, check: Callable[[list[str]], bool]) -> None:
    """Wait until the labels of the completion list pass `check`.

    CodeMirror updates an open list a moment after the keys that change it (later on a
    busy machine): the list first seen may still be the one for the text typed before.
    """
    options = page.locator(".cm-tooltip-autocomplete li .cm-completionLabel")
    expect(options.first).to_be_visible()
    labels: list[str] = []
    for _ in range(100):
        labels = options.all_inner_texts()
        if check(labels):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the completion list offers {labels}")


def test_completion_offers_the_names_a_template_sees(page: Page) -> None:
    type_at_end(page, "\n{{ add_gen")
    offered(page, lambda labels: labels[:1] == ["add_generation_prompt"])
    # CodeMirror ignores Enter for 75 ms after the list opens (`interactionDelay`), so
    # that a newline typed at once is not taken as a choice: a user pauses to choose.
    page.wait_for_timeout(150)
    page.keyboard.press("Enter")  # takes the completion
    assert page.evaluate("() => window.playground.editor.getValue()").endswith(
        "{{ add_generation_prompt"
    )
    page.keyboard.type(" }}\n{{ mess")
    offered(page, lambda labels: "messages" in labels)
    page.keyboard.press("Escape")
    # A name the template takes from `messages` has a message's fields; one from `tools`,
    # a tool schema's.
    page.keyboard.type("ages }}\n{% for m in messages %}{{ m.")
    offered(page, lambda labels: {"role", "content", "tool_calls", "tool_call_id"} <= set(labels))
    page.keyboard.press("Escape")
    page.keyboard.type("role }}{% endfor %}\n{% set last = messages[-1] %}{{ last.")
    offered(page, lambda labels: "content" in labels)
    page.keyboard.press("Escape")
    page.keyboard.type("content }}\n{% for t in tools %}{{ t.")
    offered(page, lambda labels: labels == ["function", "type"])


def test_completion_offers_the_kwargs_and_special_tokens_sent(page: Page) -> None:
    page.fill("#kwargs", '{"enable_thinking": false}')
    page.fill("#special_tokens", '{"pad_token": "<pad>"}')
    type_at_end(page, "\n{{ enable_")
    offered(page, lambda labels: labels == ["enable_thinking"])
    page.keyboard.press("Escape")
    page.keyboard.type(" }}{{ pad_")
    offered(page, lambda labels: labels == ["pad_token"])


def test_escape_closes_the_completion_list_before_it_leaves_the_editor(page: Page) -> None:
    type_at_end(page, "\n{{ mess")
    offered(page, lambda labels: "messages" in labels)
    page.keyboard.press("Escape")
    expect(page.locator(".cm-tooltip-autocomplete")).to_have_count(0)
    assert page.evaluate("() => window.playground.editor.hasFocus()")
    page.keyboard.press("Escape")
    assert not page.evaluate("() => window.playground.editor.hasFocus()")
    assert page.evaluate("() => document.activeElement.matches('.cm-editor .cm-scroller')")


def test_analysis_findings_are_lint_marks_at_their_line(page: Page) -> None:
    dated = "{{ strftime_now('%d %B %Y') }}\n{% for m in messages %}{{ m.content }}{% endfor %}"
    page.evaluate("text => window.playground.setTemplate(text)", dated)
    page.click("#tab-analysis")
    finding = page.locator('.diagnostic[data-id="date-dependent"]')
    expect(finding).to_be_visible()
    marker = page.locator(".cm-editor .cm-lint-marker-warning")
    expect(marker).to_have_count(1)
    marked = page.locator(".cm-editor .cm-problem-line")
    expect(marked).to_have_text("{{ strftime_now('%d %B %Y') }}")
    marker.hover()
    expect(page.locator(".cm-tooltip-lint")).to_contain_text("depends on the date")
    # The findings are marks only while their view is open.
    page.click("#tab-prompt")
    expect(marker).to_have_count(0)
    page.click("#tab-analysis")
    expect(marker).to_have_count(1)


def test_the_editor_styles_itself_within_the_content_security_policy(page: Page) -> None:
    # CodeMirror's theme is a <style> element: it must carry the response's nonce, or the
    # browser refuses it and the editor loses its layout (gutter beside the text).
    gutter = page.locator(".cm-editor .cm-gutters").bounding_box()
    text = page.locator(".cm-editor .cm-content").bounding_box()
    assert gutter and text and gutter["x"] + gutter["width"] <= text["x"] + 1
    assert abs(gutter["y"] - text["y"]) < 4
    styled = page.evaluate(
        "() => Array.from(document.querySelectorAll('style')).some((s) => s.nonce"
        " && s.textContent.includes('.cm-gutters'))"
    )
    assert styled


def test_typing_over_a_selection_replaces_it_as_one_undoable_step(page: Page) -> None:
    # Chromium's own editing would write a style attribute here, which the CSP refuses
    # (the page fixture fails a test on any console error).
    template = page.evaluate("() => window.playground.editor.getValue()")
    page.locator(".cm-editor .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.type("x")
    assert page.evaluate("() => window.playground.editor.getValue()") == "x"
    expect(page.locator("#template")).to_have_value("x")
    page.evaluate("() => window.playground.editor.undo()")
    assert page.evaluate("() => window.playground.editor.getValue()") == template
