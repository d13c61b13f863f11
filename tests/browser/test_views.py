"""The Command view's copy buttons and what a template error leaves on screen."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import compare_with, load_vocab

pytestmark = pytest.mark.browser

GOOD = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"


def set_template(page: Page, text: str) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", text)


def test_every_command_has_a_copy_button_that_copies_it(page: Page) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#tab-command")
    commands = page.locator("#commands pre.command")
    expect(commands.first).to_be_visible()
    buttons = page.locator("#commands .copy-command")
    assert buttons.count() == commands.count() > 4
    buttons.first.click()
    expect(buttons.first).to_have_text("Copied")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == commands.first.text_content()
    assert copied.startswith("llama-server -m MODEL.gguf --jinja --chat-template-file ")


def test_an_error_keeps_the_last_good_prompt_dimmed_and_marked_stale(page: Page) -> None:
    set_template(page, GOOD.replace("]", "] first"))
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"\[user\] first"))
    set_template(page, GOOD)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^\[system\] You"))

    set_template(page, GOOD.replace("%}", "", 1))
    expect(page.locator("#problem")).to_be_visible()
    stale = page.locator("#view-prompt .stale")
    expect(stale).to_be_visible()
    expect(stale).to_contain_text("[user] What is the capital of France?")
    assert "first" not in stale.text_content()
    expect(page.locator("#stale-note")).to_contain_text("stale")
    dimmed = stale.locator(".stale-content")
    # Marked beside it, at full contrast (axe: dimmed text was 2:1).
    assert dimmed.evaluate("e => getComputedStyle(e).borderLeftWidth") == "6px"
    # Not the current prompt: nothing copies it or reads it as such.
    expect(page.locator("#prompt-raw")).to_have_count(0)

    # A second error in a row still shows the same last good prompt.
    set_template(page, GOOD.replace("%}", "", 1) + "{{")
    expect(page.locator("#problem")).to_contain_text(re.compile(r"line \d"))
    expect(stale).to_contain_text("[user] What is the capital of France?")

    set_template(page, GOOD.replace("]", "] fixed"))
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"\[user\] fixed"))
    expect(page.locator("#view-prompt .stale")).to_have_count(0)


#: For each view: how to open it with something to show, and a selector inside the view
#: for that content (all ids in it are renamed once it is kept as stale).
STALE_VIEWS = {
    "tokens": "#token-count",
    "diff": "#diff-stats",
    "analysis": "#diagnostics",
    "response": "#responses",
    "command": "#commands",
}


@pytest.mark.parametrize("view", list(STALE_VIEWS))
def test_an_error_keeps_every_views_last_good_output_dimmed_and_stale(
    page: Page, view: str, small_vocab: Path
) -> None:
    shown = STALE_VIEWS[view]
    if view == "tokens":
        load_vocab(page, small_vocab)
    if view == "diff":
        compare_with(page, GOOD.replace("[", "<"))
    page.click(f"#tab-{view}")
    set_template(page, GOOD)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^\[system\] You"))
    content = page.locator(f"#view-{view} {shown}")
    expect(content).to_be_visible()
    good_text = content.inner_text()

    set_template(page, GOOD.replace("%}", "", 1))
    expect(page.locator("#problem")).to_be_visible()
    stale = page.locator(f"#view-{view} .stale")
    expect(stale).to_be_visible()
    expect(stale.locator(".stale-note")).to_contain_text("stale")
    kept = stale.locator(shown.replace("#", "#stale-"))
    expect(kept).to_have_text(good_text, use_inner_text=True)
    marked = stale.locator(".stale-content").evaluate("e => getComputedStyle(e).borderLeftWidth")
    assert marked == "6px"
    # The error's own placeholder ("No prompt to tokenize", ...) gives way to the kept output.
    assert page.locator(f"#view-{view} > :not(.stale):visible").count() == 0

    set_template(page, GOOD.replace("%}", "", 1) + "{{")  # a second error in a row
    expect(page.locator("#problem")).to_contain_text(re.compile(r"line \d"))
    expect(kept).to_have_text(good_text, use_inner_text=True)

    set_template(page, GOOD.replace("]", "] fixed"))
    expect(page.locator("#problem")).to_have_count(0)
    expect(page.locator(f"#view-{view} .stale")).to_have_count(0)
    expect(content).to_be_visible()


def test_the_error_line_badge_moves_the_editor_to_the_line(page: Page) -> None:
    template = "line\n" * 79 + "{% if messages\na\n{% endif %}\n" + "tail\n" * 40
    set_template(page, template)
    badge = page.locator("#problem .problem-line")
    expect(badge).to_have_text("line 81")
    page.evaluate("() => { window.playground.editor.scroller.scrollTop = 0; }")
    badge.click()
    assert page.evaluate("() => window.playground.editor.cursorLine()") == 81
    # The editor takes the focus once its scroll to the line is measured (the next frame).
    page.wait_for_function("() => window.playground.editor.hasFocus()")
    marked = page.locator(".cm-editor .cm-problem-line")
    expect(marked).to_have_text("a")  # line 81, where Jinja says the tag is missing its end
    expect(marked).to_be_in_viewport()
    expect(page.locator("#problem")).to_contain_text("the tag that starts on line 80 is not closed")


def test_the_diff_shows_one_layout_at_a_time_with_both_sides_named(page: Page) -> None:
    page.click("#tab-diff")
    page.fill("#compare_template", GOOD.replace("[", "<").replace("]", ">"))
    unified, side = page.locator("#diff-unified"), page.locator("#diff-side")
    expect(unified).to_be_visible()
    expect(side).to_be_hidden()
    expect(page.locator("#diff-legend")).to_have_text("− this template + the compared template")

    page.check("#diff-layouts input[value=side]")
    # At once, without waiting for a render.
    assert page.evaluate("() => document.getElementById('view-diff').dataset.layout") == "side"
    expect(side).to_be_visible()
    expect(unified).to_be_hidden()
    heads = side.locator(".side-head")
    expect(heads).to_have_text(["− this template", "+ the compared template"])
    # The choice survives the next render.
    page.fill("#compare_template", GOOD.replace("[", "(").replace("]", ")"))
    expect(side).to_contain_text("(user)")
    expect(side).to_be_visible()
    expect(unified).to_be_hidden()
    removed = int(re.search(r"(\d+) lines? removed", page.locator("#diff-stats").text_content())[1])
    expect(side.locator(".cell.del")).to_have_count(removed)


def test_a_tab_opened_while_a_render_is_on_its_way_stays_open(page: Page) -> None:
    """The answer to a render asked from one tab arrives after the user opened another.

    htmx copies the answer's attributes onto #output when it settles the swap, after the
    page has shown the tab the user is on: the answer's view class (the tab it was asked
    from) must not hide the open one.
    """
    held: list[Route] = []

    def hold_the_command_render(route: Route) -> None:
        if "view=command" in (route.request.post_data or "") and not held:
            held.append(route)
        else:
            route.continue_()

    page.route("**/fragments/output", hold_the_command_render)
    page.click("#tab-command")
    for _ in range(250):  # Playwright runs the route handler while the test waits on it
        if held:
            break
        page.wait_for_timeout(20)
    assert held, "the Command tab asks for a render"
    page.click("#tab-prompt")
    page.evaluate(
        """() => { window.settled = new Promise((done) =>
            document.body.addEventListener("htmx:afterSettle", done, { once: true })); }"""
    )
    held[0].continue_()
    page.evaluate("() => window.settled.then(() => true)")  # the answer swapped and settled
    expect(page.locator("#tab-prompt")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#view-prompt")).to_be_visible()
    expect(page.locator("#view-command")).to_be_hidden()
