"""Tokens per message in a real browser: the rule said in the view, and a tool-call turn
counted under the assistant message that made it (issue 37, item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab

pytestmark = pytest.mark.browser

CALL = '{"name": "get_weather", "arguments": {"city": "Reykjavik"}}'
MESSAGES = [
    {"role": "user", "content": "What is the weather in Reykjavik?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call00001",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Reykjavik"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call00001", "content": "sleet, -3"},
    {"role": "assistant", "content": "Sleet at minus three."},
    {"role": "user", "content": "Thanks."},
]


def rows(page: Page) -> list[dict[str, str]]:
    """The table's rows as {message, role, tokens, chars}."""
    return page.locator("#message-tokens tbody tr").evaluate_all(
        """rows => rows.map(r => ({message: r.cells[0].textContent, role: r.cells[1].textContent,
            tokens: r.cells[2].textContent, chars: r.cells[3].textContent}))"""
    )


def test_a_tool_call_turn_counts_under_its_assistant_message(page: Page, small_vocab: Path) -> None:
    qwen3 = page.request.get("/api/library/qwen3").json()["template"]
    page.evaluate("text => window.playground.setTemplate(text)", qwen3)
    load_vocab(page, small_vocab)
    if page.locator("#raw-messages").is_hidden():
        page.click("#toggle-raw")
    page.fill("#messages", json.dumps(MESSAGES))
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("Thanks"))
    with page.expect_response("**/fragments/output"):
        page.click(".tab[data-view=tokens]")
    expect(page.locator("#message-tokens")).to_be_visible()

    # The rule, in the view itself, in one sentence.
    caption = page.locator("#message-tokens-rule").inner_text()
    assert "README" not in caption
    assert re.search(r"rendered alone", caption), caption

    prompt = page.locator("#prompt-raw").input_value()
    turn = f"<|im_start|>assistant\n<tool_call>\n{CALL}\n</tool_call><|im_end|>\n"
    assert turn in prompt
    table = rows(page)
    assert [row["role"] for row in table] == [m["role"] for m in MESSAGES] + [""]
    call_row = table[1]
    # The whole turn, its <tool_call> markup and arguments, is the assistant message's.
    assert int(call_row["chars"]) == len(turn), call_row
    assert int(call_row["tokens"]) > 20, call_row
    result = "<|im_start|>user\n<tool_response>\nsleet, -3\n</tool_response><|im_end|>\n"
    assert int(table[2]["chars"]) == len(result), table[2]
    total = int(page.locator("#token-count").inner_text().split()[0])
    assert sum(int(row["tokens"]) for row in table) == total
    assert sum(int(row["chars"]) for row in table) == len(prompt)
