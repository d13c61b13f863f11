"""A realistic session under the page's Content Security Policy, watched for violations.

Issue 25 saw "Applying inline style violates style-src 'self'" after most updates. Every
browser test fails on console errors; this one also collects the `securitypolicyviolation`
events the document fires (a report the console may word differently, or not show), over
a session that exercises everything together: a vocabulary, keys typed in the template
editor in every view, a new message, an error and its fix, and a filled completion read
in the Response view.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab

pytestmark = pytest.mark.browser

#: Collects every CSP violation the document reports, from its first script on.
WATCH = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(`${event.effectiveDirective} refused ${event.blockedURI}`
    + ` at ${event.sourceFile}:${event.lineNumber}: ${event.sample}`);
}, true);
"""

#: Each view, and what shows it has been drawn with content.
VIEWS = {
    "tokens": "#tokens .tok",
    "diff": "#diff-unified",
    "analysis": "#portability",
    "response": "#responses",
    "command": "#commands",
    "prompt": "#prompt",
}

#: A syntax error typed at the end of the template, then deleted key by key.
BROKEN = "{% if %}"


class Session:
    """The page at one width, used as a person does: panes switched where they stack."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.typed = ""  # what the keys typed at the template's end added to the prompt

    def pane(self, name: str) -> None:
        button = self.page.locator(f'.pane-button[data-pane="{name}"]')
        if button.is_visible():
            button.click()

    def view(self, name: str, drawn: str) -> None:
        self.pane("outputs")
        self.page.click(f"#tab-{name}")
        expect(self.page.locator(drawn).first).to_be_visible()

    def template_end(self) -> None:
        """Put the cursor at the end of the template."""
        self.pane("inputs")
        self.page.locator(".cm-editor .cm-content").click()
        self.page.keyboard.press("Control+End")

    def type_in_template(self, keys: str) -> None:
        """Type `keys` at the end of the template, one key at a time."""
        self.template_end()
        self.page.keyboard.type(keys, delay=40)

    def expect_prompt_ends_typed(self) -> None:
        tail = re.escape(self.typed) + "$"
        expect(self.page.locator("#prompt-raw")).to_have_value(re.compile(tail))


@pytest.mark.parametrize("width", [1400, 390])
def test_a_whole_session_violates_no_content_security_policy(
    new_page: Callable[..., Page], small_vocab: Path, width: int
) -> None:
    page = new_page(viewport={"width": width, "height": 900})
    page.add_init_script(script=WATCH)
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    session = Session(page)

    load_vocab(page, small_vocab)
    session.type_in_template("END")
    session.typed = "END"
    session.expect_prompt_ends_typed()
    # Typed over a selection, which Chromium's own editing once did with a style attribute.
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.type("XT")
    session.typed = "EXT"
    session.expect_prompt_ends_typed()

    session.pane("inputs")
    page.click("#add-message")
    message = page.locator("#message-editor .message").last.locator("textarea").first
    message.press_sequentially("A question typed in a new message", delay=10)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("in a new message"))

    # Every view open, a key typed in the template while it is.
    session.view("diff", "#compare_engines")
    page.select_option("#compare_engines", "llama.cpp")
    for view, drawn in VIEWS.items():
        session.view(view, drawn)
        session.type_in_template("!")
        session.typed += "!"
        session.expect_prompt_ends_typed()
    session.view("tokens", "#tokens .tok")
    page.check("#show-ids")
    page.locator("#tokens .tok").nth(3).hover()
    session.view("diff", "#diff-unified")
    for layout in ("side", "tokens", "unified"):
        page.check(f'input[name="diff_layout"][value="{layout}"]')
        expect(page.locator(f'.diff-layout[data-layout="{layout}"]')).to_be_visible()

    # An error, with every view keeping its last good output; then the fix.
    session.type_in_template(BROKEN)
    expect(page.locator("#problem")).to_have_count(1)
    for view in VIEWS:
        session.view(view, f"#view-{view} .stale")
    session.template_end()
    for _ in BROKEN:
        page.keyboard.press("Backspace")
    expect(page.locator("#problem")).to_have_count(0)
    session.expect_prompt_ends_typed()

    # A completion filled with what the template writes, read in the Response view.
    session.pane("inputs")
    page.locator("#completion-box summary").click()
    page.click("#completion-fill")
    expect(page.locator("#completion-status")).to_contain_text("Filled with")
    session.view("response", '.response[data-engine="llama.cpp"] pre.message')

    violations = page.evaluate("window.cspViolations")
    assert violations == [], "\n".join(violations)
