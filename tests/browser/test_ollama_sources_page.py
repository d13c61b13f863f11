"""Ollama on the page as a new user meets it: a pasted Modelfile's TEMPLATE rendered by
the Ollama engine with the Modelfile's facts shown; Llama 3.1's chat template, for which
the Prompt view says what `ollama create` adopts and what Ollama does instead, and the
Command view writes the Modelfile. The server has Ollama's template data (test data)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from app.render.engines.ollama.gotemplate.build import build
from app.render.engines.ollama.template.named import SETTING
from tests.browser.test_page import set_template, show_raw_messages
from tests.support.ollama_data import upstream_jinja
from tests.support.server import Server, start_gunicorn
from tests.support.shared_data import OLLAMA, require_ollama

require_ollama()
pytestmark = pytest.mark.browser

MODELFILE = '''FROM qwen3:8b
TEMPLATE """{{ range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
SYSTEM You are terse.
MESSAGE user Is Paris in France?
MESSAGE assistant Yes.
PARAMETER stop <|im_end|>
PARSER qwen3
'''


@pytest.fixture(scope="module")
def browser_server() -> Iterator[Server]:
    """The page's server, its workers given Ollama's template data (for this module)."""
    build()  # the Go worker, as ./playground builds it
    server = start_gunicorn(
        {
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_THREADS": "4",
            "PLAYGROUND_CLIENT_CONCURRENCY": "0",
            SETTING: str(OLLAMA),
        }
    )
    yield server
    server.close()


def test_a_pasted_modelfile_renders_its_go_template_with_ollama(page: Page) -> None:
    show_raw_messages(page)
    page.fill("#messages", json.dumps([{"role": "user", "content": "Hi"}]))
    page.select_option("#engine", "ollama")
    page.click("#modelfile-paste summary")
    page.fill("#modelfile-text", MODELFILE)
    page.click("#modelfile-load")
    expect(page.locator("#template_kind")).to_have_value("go")
    # The Modelfile's SYSTEM opens the chat, then its messages, as /api/chat puts them.
    expected = (
        "<|im_start|>system\nYou are terse.<|im_end|>\n"
        "<|im_start|>user\nIs Paris in France?<|im_end|>\n"
        "<|im_start|>assistant\nYes.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    expect(page.locator("#prompt-raw")).to_have_value(expected)
    expect(page.locator("#ollama-parser")).to_have_text("qwen3")
    expect(page.locator("#ollama-stops")).to_have_text("<|im_end|>")
    expect(page.locator("#ollama-system")).to_have_text("You are terse.")
    expect(page.locator("#ollama-messages")).to_contain_text("2 MESSAGE commands (user, assistant)")
    expect(page.locator("#rewrites")).to_contain_text("The Modelfile's 2 MESSAGE commands")


def test_llama_3_1_walkthrough_says_what_ollama_picks_and_writes_the_fix(
    page: Page, page_errors
) -> None:
    page.select_option("#engine", "ollama")
    # Meta's own file (the library's llama3.1 entry is not it: it adopts no TEMPLATE).
    set_template(page, upstream_jinja("meta-llama-Llama-3.1-8B-Instruct"))
    rewrites = page.locator("#rewrites")
    expect(rewrites).to_contain_text("adopts its template llama3-instruct")
    expect(rewrites).to_contain_text("Levenshtein distance 0")
    expect(rewrites).to_contain_text("llama-server")
    page.click("#tab-command")
    modelfile = page.locator('pre.command[data-engine="ollama"][data-form="modelfile"]')
    expect(modelfile).to_contain_text("ollama create my-model -f Modelfile")
    # The Modelfile: FROM the model, and what `ollama create` would write instead.
    written = page.locator('pre.command-file[data-engine="ollama"][data-file="Modelfile"]')
    expect(written).to_contain_text("FROM ./MODEL.gguf")
    expect(written).to_contain_text("ollama create writes the TEMPLATE llama3-instruct")
    expect(page.locator("#view-command")).to_contain_text("OLLAMA_GO_TEMPLATE=0 ollama serve")
    expect(page.locator("#view-command")).to_contain_text("without tools")
