"""The page by keyboard alone: entering and leaving the template editor, the output tabs."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

VIEWS = ["prompt", "tokens", "diff", "analysis", "response", "command"]


def focused_id(page: Page) -> str:
    return page.evaluate("() => document.activeElement && document.activeElement.id")


def in_editor(page: Page) -> bool:
    """Whether the focus is in the template editor's text (typing edits the template)."""
    return page.evaluate("() => document.activeElement.matches('.cm-editor .cm-content')")


def on_editor(page: Page) -> bool:
    """Whether the focus is on the editor as a whole (its Tab stop: typing does nothing)."""
    return page.evaluate("() => document.activeElement.matches('.cm-editor .cm-scroller')")


def tab_to_editor(page: Page) -> None:
    """Press Tab from the top of the page until the template editor has the focus."""
    page.locator("body").focus()
    for _ in range(40):
        page.keyboard.press("Tab")
        assert not in_editor(page), "Tab went into the template's text"
        if on_editor(page):
            return
    pytest.fail("Tab never reached the template editor")


def test_entering_the_template_editor_is_deliberate(page: Page) -> None:
    template = page.locator("#template").input_value()
    tab_to_editor(page)
    # Tabbing past it types nothing into it ...
    page.keyboard.type("x")
    assert page.evaluate("() => window.playground.editor.getValue()") == template
    # ... Enter starts editing, where Tab indents (template authors need it) ...
    page.keyboard.press("Enter")
    assert in_editor(page)
    page.keyboard.press("Tab")
    assert page.evaluate("() => window.playground.editor.getValue()") != template
    page.evaluate("() => window.playground.editor.undo()")
    # ... and Esc stops editing: Tab then goes on to the next control.
    page.keyboard.press("Escape")
    assert on_editor(page)
    page.keyboard.press("Tab")
    assert not on_editor(page) and not in_editor(page)
    assert page.evaluate("() => window.playground.editor.getValue()") == template
    # Back on it, Shift-Tab goes to the control before the editor.
    page.keyboard.press("Shift+Tab")
    assert on_editor(page)
    page.keyboard.press("Shift+Tab")
    # The Ollama sources' box, just above the editor: its last control, the paste toggle.
    assert page.evaluate("() => document.activeElement.closest('#modelfile-paste') !== null")


def test_the_editor_is_labelled_and_says_how_to_use_it(page: Page) -> None:
    editor = page.locator(".cm-editor .cm-scroller")
    expect(editor).to_have_accessible_name("Chat template")
    hint = "Press Enter to edit the template; there Tab indents, and Esc stops editing."
    expect(editor).to_have_accessible_description(hint)
    expect(page.locator(".cm-editor .cm-content")).to_have_accessible_name("Chat template")
    expect(page.locator(".cm-editor .cm-content")).to_have_accessible_description(hint)
    expect(page.locator("#template-keys")).to_have_text(hint)


def test_output_tabs_are_aria_tabs(page: Page) -> None:
    tablist = page.get_by_role("tablist", name="Output views")
    tabs = tablist.get_by_role("tab")
    expect(tabs).to_have_count(len(VIEWS))
    for name in VIEWS:
        tab = page.locator(f"#tab-{name}")
        panel = page.locator(f"#view-{name}")
        expect(tab).to_have_attribute("aria-controls", f"view-{name}")
        expect(panel).to_have_attribute("role", "tabpanel")
        expect(panel).to_have_attribute("aria-labelledby", f"tab-{name}")
    expect(page.locator("#tab-prompt")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#tab-tokens")).to_have_attribute("aria-selected", "false")
    # One tab stop for the whole strip: the selected tab.
    expect(page.locator("#tab-prompt")).to_have_attribute("tabindex", "0")
    expect(page.locator("#tab-diff")).to_have_attribute("tabindex", "-1")

    # Manual activation (APG): arrows move the focus, Enter or Space opens the tab, since
    # Analysis and Command render on opening and arrowing past them should not.
    page.locator("#tab-prompt").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-tokens")).to_be_focused()
    expect(page.locator("#tab-prompt")).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(page.locator("#tab-tokens")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#tab-prompt")).to_have_attribute("aria-selected", "false")
    expect(page.locator("#view-tokens")).to_be_visible()
    expect(page.locator("#view-prompt")).to_be_hidden()
    page.keyboard.press("End")
    expect(page.locator("#tab-command")).to_be_focused()
    page.keyboard.press("Space")
    expect(page.locator("#view-command")).to_be_visible()
    page.keyboard.press("ArrowRight")  # wraps around
    expect(page.locator("#tab-prompt")).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#tab-command")).to_be_focused()
    page.keyboard.press("Home")
    expect(page.locator("#tab-prompt")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#tab-prompt")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#tab-prompt")).to_have_attribute("tabindex", "0")
    expect(page.locator("#tab-command")).to_have_attribute("tabindex", "-1")
    # Tab goes from the strip into the open panel.
    page.keyboard.press("Tab")
    expect(page.locator("#show-whitespace")).to_be_focused()

    # The state survives a re-render (the panels are swapped in by htmx).
    page.locator("#tab-diff").click()
    page.evaluate("() => window.playground.setTemplate('{{ messages[0].content }}!')")
    expect(page.locator("#prompt-raw")).to_have_value("You are a helpful assistant.!")
    expect(page.locator("#tab-diff")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-diff")).to_be_visible()


def test_the_date_field_is_one_tab_stop(page: Page) -> None:
    # A datetime-local field is a Tab stop per part (month, day, year, hours, minutes,
    # seconds, AM/PM, its picker): a user tabbing through the options pressed Tab 8 times.
    page.locator("#tool_arguments").focus()
    page.keyboard.press("Tab")
    assert focused_id(page) == "now"
    page.keyboard.press("Tab")
    assert focused_id(page) == "kwargs"
    page.keyboard.press("Shift+Tab")
    assert focused_id(page) == "now"
    # It takes the time as ISO 8601 text, and says so.
    page.locator("#now").fill("2024-07-26T10:00:30")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("."))
    expect(page.locator("#now")).to_have_attribute("placeholder", re.compile("YYYY-MM-DD"))
    page.locator("#now").fill("26/07/2024")
    expect(page.locator("#output")).to_contain_text("'now' is not an ISO 8601 datetime")
