"""A Go template (an Ollama Modelfile's TEMPLATE) on the page, rendered by the Ollama engine."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from app.render.engines.ollama.gotemplate.build import build
from tests.browser.test_page import set_template, show_raw_messages

pytestmark = pytest.mark.browser

GO_TEMPLATE = "{{ range .Messages }}[{{ .Role }}] {{ .Content }}\n{{ end }}"


@pytest.fixture(scope="module", autouse=True)
def worker() -> None:
    """The worker built from its sources, as ./playground builds it."""
    build()


def test_a_go_template_renders_with_the_ollama_engine(page: Page) -> None:
    show_raw_messages(page)
    page.fill("#messages", json.dumps([{"role": "user", "content": "Hi"}]))
    page.select_option("#engine", "ollama")
    page.select_option("#template_kind", "go")
    set_template(page, GO_TEMPLATE)
    expect(page.locator("#prompt-raw")).to_have_value("[user] Hi\n")
    # Another engine refuses a Go template, in words.
    page.select_option("#engine", "llama.cpp")
    expect(page.locator("#output")).to_contain_text("does not render go templates")
