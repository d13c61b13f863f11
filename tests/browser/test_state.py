"""The page never loses work: reload, Back and Reset, with the editors, the hidden JSON
and the source box agreeing; the named-template tabs of an uploaded source work."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

DEFAULT = "DEFAULT {% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
TOOL_USE = "TOOL_USE {% for m in messages %}<{{ m.role }}> {{ m.content }}\n{% endfor %}"
NAMED_TEMPLATES = [
    {"name": "default", "template": DEFAULT},
    {"name": "tool_use", "template": TOOL_USE},
]


def upload_named_templates(page: Page, folder: Path) -> None:
    """Hugging Face files whose config holds two named templates."""
    config = folder / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": NAMED_TEMPLATES, "bos_token": "<s>"}))
    page.set_input_files("#hf-files", str(config))
    expect(page.locator("#source-file")).to_have_text("tokenizer_config.json")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^DEFAULT "))


def prompt(page: Page) -> str:
    return page.locator("#prompt-raw").input_value()


def messages_json(page: Page) -> list[dict]:
    return json.loads(page.locator("#messages").input_value())


def editor_text(page: Page) -> str:
    return page.evaluate("window.playground.editor.getValue()")


def set_template(page: Page, text: str) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", text)


def add_message(page: Page, content: str) -> None:
    cards = page.locator("#message-editor .message")
    count = cards.count()
    page.click("#add-message")
    expect(cards).to_have_count(count + 1)
    cards.nth(count).locator("textarea").first.fill(content)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(content)))


def expect_consistent(page: Page, contents: list[str]) -> None:
    """The message editor, the hidden JSON and the prompt show the same conversation."""
    cards = page.locator("#message-editor .message")
    expect(cards).to_have_count(len(contents))
    assert [m["content"] for m in messages_json(page)] == contents
    shown = cards.evaluate_all("cards => cards.map(c => c.querySelector('textarea').value)")
    assert shown == contents
    for content in contents:
        expect(page.locator("#prompt-raw")).to_have_value(re.compile(re.escape(content)))


def test_template_tabs_switch_after_an_upload(page: Page, tmp_path: Path) -> None:
    upload_named_templates(page, tmp_path)
    tabs = page.locator(".template-tab")
    expect(tabs).to_have_count(2)
    expect(page.locator(".template-tab.active")).to_have_text("default")

    page.click(".template-tab[data-template-name=tool_use]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^TOOL_USE <system> "))
    assert editor_text(page) == TOOL_USE
    expect(page.locator("#template_name")).to_have_value("tool_use")
    expect(page.locator(".template-tab.active")).to_have_text("tool_use")

    page.click(".template-tab[data-template-name=default]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^DEFAULT "))
    assert editor_text(page) == DEFAULT
