"""The Analysis and Command views in a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

DATED = (
    "Today is {{ strftime_now('%d %B %Y') }}.\n"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_analysis_view_lists_findings_and_points_at_lines(page: Page) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", DATED)
    page.click("#tab-analysis")
    finding = page.locator('.diagnostic[data-id="date-dependent"]')
    expect(finding).to_be_visible()
    expect(finding.locator(".line-link")).to_have_text("line 1")
    expect(page.locator("#capabilities")).to_contain_text("supports_system_role")
    expect(page.locator("#content-format")).to_have_text("string")
    finding.locator(".line-link").click()
    assert page.evaluate("() => window.playground.editor.cursorLine()") == 1


def test_command_view_offers_every_engine(page: Page) -> None:
    page.click("#tab-command")
    expect(page.locator('pre[data-engine="llama-server"][data-form="inline"]')).to_contain_text(
        "--jinja --chat-template"
    )
    expect(page.locator('pre[data-engine="vllm"]')).to_contain_text("vllm serve")
    expect(page.locator("#builtin-note")).to_contain_text("chatml")
