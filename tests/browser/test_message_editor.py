"""The message editor with a long conversation: each edit redraws only the message it changes.

Every card gets a mark (a property on the element itself): a card that is redrawn is a
new element and loses it. Focus stays on the control used, and the page does not scroll.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

COUNT = 200

#: Marks every card and its role select; `playground_marks()` reads them back in page order.
MARK = """() => {
  window.playground_marks = () => Array.from(
    document.querySelectorAll('#message-editor .message'),
    (card) => [card.mark, card.querySelector('select').mark === card.mark],
  );
  document.querySelectorAll('#message-editor .message').forEach((card, index) => {
    card.mark = index;
    card.querySelector('select').mark = index;
  });
}"""


def long_conversation() -> list[dict]:
    turns = [{"role": "system", "content": "You are terse."}]
    for index in range(1, COUNT):
        role = "user" if index % 2 else "assistant"
        turns.append({"role": role, "content": f"Message {index}: a few words of text."})
    return turns


def load(page: Page, messages: list[dict]) -> None:
    page.click("#toggle-raw")
    page.fill("#messages", json.dumps(messages))
    page.click("#toggle-raw")
    expect(page.locator("#message-editor .message")).to_have_count(len(messages))
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(f"Message {len(messages) - 1}:"))
    page.evaluate(MARK)


def marks(page: Page) -> list[int | None]:
    """Each card's mark in page order (None: a new element); the select must be the same."""
    found = page.evaluate("() => window.playground_marks()")
    assert all(same for mark, same in found if mark is not None), "a select was replaced"
    return [mark for mark, _ in found]


def roles(page: Page) -> list[str]:
    return [m["role"] for m in json.loads(page.locator("#messages").input_value())]


def scroll_y(page: Page) -> float:
    return page.evaluate("() => window.scrollY")


def test_edits_redraw_only_the_message_they_change(page: Page) -> None:
    load(page, long_conversation())
    cards = page.locator("#message-editor .message")
    expected = list(range(COUNT))

    # A role change keeps the card (and its select, focused); its fields follow the role.
    card = cards.nth(100)
    card.scroll_into_view_if_needed()
    before = scroll_y(page)
    card.locator("select").focus()  # as a click or Tab would
    card.locator("select").select_option("tool")
    expect(card.get_by_label("tool_call_id")).to_be_visible()
    expect(card.locator("select")).to_be_focused()
    assert marks(page) == expected
    assert roles(page)[100] == "tool"
    assert scroll_y(page) == before

    # Moving a message swaps two cards and keeps the focus on the button pressed.
    up = cards.nth(100).get_by_role("button", name="Move up").element_handle()
    up.click()
    expected[99], expected[100] = 100, 99
    assert marks(page) == expected
    assert up.evaluate("(button) => document.activeElement === button")
    assert roles(page)[99] == "tool"
    page.keyboard.press("Enter")  # again, from the keyboard: the focus is still there
    expected[98], expected[99] = 100, 98
    assert marks(page) == expected
    assert roles(page)[98] == "tool"
    cards.nth(98).get_by_role("button", name="Move down").click()
    expected[98], expected[99] = 98, 100
    assert marks(page) == expected
    expect(cards.nth(99).get_by_role("button", name="Move down")).to_be_focused()

    # Removing one leaves the others as they are; the focus goes to the next card's Remove.
    cards.nth(50).get_by_role("button", name="Remove").click()
    del expected[50]
    assert marks(page) == expected
    expect(cards.nth(50).get_by_role("button", name="Remove")).to_be_focused()
    assert len(roles(page)) == COUNT - 1

    # Tool calls: add and remove within one assistant message.
    assistant = cards.nth(2)
    assert roles(page)[2] == "assistant"
    add_call = assistant.get_by_role("button", name="Add tool call")
    add_call.click()
    add_call.click()
    expect(add_call).to_be_focused()
    expect(assistant.locator(".tool-call")).to_have_count(2)
    assistant.get_by_label("tool call name").nth(1).fill("get_time")
    assistant.get_by_role("button", name="Remove call").first.click()
    expect(assistant.locator(".tool-call")).to_have_count(1)
    expect(assistant.get_by_role("button", name="Remove call")).to_be_focused()
    assert marks(page) == expected
    calls = json.loads(page.locator("#messages").input_value())[2]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_time"]

    # Adding a message adds one card, and the focus goes to its first field.
    page.click("#add-message")
    expect(cards).to_have_count(COUNT)
    expect(cards.last.locator("select, textarea, input").first).to_be_focused()
    assert marks(page) == [*expected, None]

    # And the rendered prompt follows all of it.
    expect(page.locator("#prompt-raw")).to_have_value(
        re.compile(r"<\|im_start\|>tool\nMessage 100: a few words of text\.")
    )


def test_typing_keeps_the_focus_and_the_other_cards(page: Page) -> None:
    load(page, long_conversation())
    field = page.locator("#message-editor .message").nth(150).locator("textarea").first
    field.click()
    page.keyboard.press("End")
    before = scroll_y(page)
    field.press_sequentially(" And more.", delay=20)
    expect(field).to_be_focused()
    expect(page.locator("#prompt-raw")).to_have_value(
        re.compile(r"Message 150: a few words of text\. And more\.")
    )
    assert marks(page) == list(range(COUNT))
    assert scroll_y(page) == before


def test_the_output_stays_in_view_while_editing_lower_messages(page: Page) -> None:
    load(page, long_conversation())
    field = page.locator("#message-editor .message").nth(180).locator("textarea").first
    field.fill("Far down the conversation.")
    expect(field).to_be_in_viewport()
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("Far down the conversation"))
    expect(page.locator("#tab-prompt")).to_be_in_viewport()
    expect(page.locator("#prompt")).to_be_in_viewport()
