"""A library template renders with its model's special tokens when no vocabulary is
loaded, says so, keeps them in a share, and an empty BOS it prints is a warning in the
Analysis view (issue 37, item 2), in a real browser."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.library import load_library

pytestmark = pytest.mark.browser

STARTS_WITH_BOS = re.compile(r"^<\|begin_of_text\|><\|start_header_id\|>system")


def test_a_library_template_renders_with_its_bos(page: Page, new_page: Callable[..., Page]) -> None:
    load_library(page, "llama3.1")
    expect(page.locator("#prompt-raw")).to_have_value(STARTS_WITH_BOS)
    said = page.locator("#library-tokens")
    expect(said).to_contain_text("Special tokens from the library's Llama 3.1 Instruct")
    expect(said).to_contain_text("(no vocabulary loaded)")
    expect(said).to_contain_text("<|begin_of_text|>")
    expect(page.locator("#special_tokens")).to_have_value(
        re.compile(r'"eos_token": "<\|eot_id\|>"')
    )
    # The BOS is drawn as a special token, like a vocabulary's.
    expect(page.locator("#prompt .seg-special").first).to_have_text("<|begin_of_text|>")

    # A share of it renders the same BOS after it is opened again.
    page.click("#share-button")
    expect(page.locator("#share-url")).to_have_value(re.compile(r"/s/[0-9a-f]{24}$"))
    shared = new_page()
    shared.goto(page.locator("#share-url").input_value())
    expect(shared.locator("#prompt-raw")).to_have_value(STARTS_WITH_BOS)
    expect(shared.locator("#library-tokens")).to_contain_text("Llama 3.1 Instruct")


def test_an_empty_bos_is_a_warning_in_the_analysis(page: Page) -> None:
    load_library(page, "llama3.1")
    expect(page.locator("#prompt-raw")).to_have_value(STARTS_WITH_BOS)
    page.fill("#special_tokens", "{}")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^<\|start_header_id\|>"))
    expect(page.locator("#library-tokens")).to_have_count(0)
    with page.expect_response("**/fragments/output", timeout=30_000):
        page.click(".tab[data-view=analysis]")
    warning = page.locator('#diagnostics .diagnostic[data-id="empty-bos"]')
    expect(warning).to_have_attribute("data-severity", "warning")
    expect(warning).to_contain_text("prints bos_token, which is empty here")
