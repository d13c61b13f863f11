"""The documentation, as a visitor of the running service reaches it: from the page's
links, under the Content Security Policy, readable by everyone at 1440 and 390 px.

Before issue 37 the page said "see the README", a file a visitor of a deployed service
does not have; now its links open the pages the service serves at /docs/.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab
from tests.browser.test_axe import WIDTHS, violations
from tests.browser.test_csp_session import WATCH

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_links_to_its_documentation_which_keeps_the_policy(
    new_page: Callable[..., Page], width: int
) -> None:
    page = new_page(viewport={"width": width, "height": 900})
    page.add_init_script(script=WATCH)
    page.goto("/")
    page.get_by_role("link", name="Documentation").click()
    expect(page).to_have_url(re.compile(r"/docs/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Documentation")
    # A page the index links to, and back to the playground from its header.
    page.get_by_role("link", name="Running a service").first.click()
    expect(page.locator("#configuration")).to_be_visible()
    assert page.evaluate("window.cspViolations") == []
    page.get_by_role("link", name="Chat Template Playground").click()
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))


def test_the_tokens_view_says_where_its_count_is_explained(
    new_page: Callable[..., Page], small_vocab: Path
) -> None:
    page = new_page()
    page.goto("/")
    load_vocab(page, small_vocab)
    page.click("#tab-tokens")
    caption = page.locator("#message-tokens caption")
    expect(caption).to_be_visible()
    caption.get_by_role("link", name="how it is counted").click()
    expect(page).to_have_url(re.compile(r"/docs/using-the-page#tokens-per-message$"))
    heading = page.locator("#tokens-per-message")
    expect(heading).to_have_text("Tokens per message")
    expect(heading).to_be_in_viewport()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("address", ["", "using-the-page", "running-a-service", "engines/vllm"])
def test_no_serious_violations_on_a_documentation_page(
    new_page: Callable[..., Page], width: int, address: str
) -> None:
    # axe injects styles the policy forbids: these pages alone open with it bypassed.
    page = new_page(viewport={"width": width, "height": 900}, bypass_csp=True)
    page.goto(f"/docs/{address}")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    assert violations(page) == []
    # The page never scrolls sideways: text wraps, a wide table scrolls in its own region.
    assert page.evaluate("document.documentElement.scrollWidth") <= width
