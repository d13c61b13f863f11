"""The template panel always says where the template came from: the library entry, or
the loaded file with its model and template name, and whether it was edited since."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from gguf import GGUFWriter
from playwright.sync_api import Page, expect

from tests.browser.test_page import set_template

pytestmark = pytest.mark.browser

GEMMA = (
    "{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m.role }}\n"
    "{{ m.content }}<end_of_turn>\n{% endfor %}"
)
CHATML_NOTE = "Each turn is <|im_start|>ROLE"
QWEN3_NOTE = "ChatML turns with no default system prompt."


def gemma_gguf(folder: Path) -> Path:
    """A GGUF header naming its model, with a chat template and no vocabulary."""
    path = folder / "gemma-test.gguf"
    writer = GGUFWriter(path, arch="gemma3")
    writer.add_name("Gemma 3 Test")
    writer.add_chat_template(GEMMA)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def library_text(name: str) -> str:
    """A library template's text, as the page loads it."""
    folder = Path(__file__).resolve().parents[2] / "templates_lib"
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    entry = next(e for e in manifest["templates"] if e["name"] == name)
    return (folder / entry["file"]).read_text(encoding="utf-8")


def test_first_visit_names_the_library_template(page: Page) -> None:
    origin = page.locator("#template-origin")
    expect(origin).to_contain_text("ChatML")
    expect(origin).to_contain_text("from the library")
    expect(origin).not_to_contain_text("modified")
    expect(page.locator("#library-select")).to_have_value("chatml")
    expect(page.locator("#library-notes")).to_contain_text(CHATML_NOTE)


def test_a_loaded_gguf_is_named_with_its_model_and_template(page: Page, tmp_path: Path) -> None:
    page.set_input_files("#gguf-file", str(gemma_gguf(tmp_path)))
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^<start_of_turn>system"))
    origin = page.locator("#template-origin")
    expect(origin).to_contain_text("gemma-test.gguf")
    expect(origin).to_contain_text("Gemma 3 Test")
    expect(origin).to_contain_text("default")
    expect(origin).not_to_contain_text("modified")
    # Nothing in the box speaks of ChatML any more.
    expect(page.locator("#library-select")).to_have_value("")
    expect(page.locator("#template-panel")).not_to_contain_text(CHATML_NOTE)

    set_template(page, GEMMA + "{# mine #}")
    expect(origin).to_contain_text("modified")
    expect(origin).to_contain_text("gemma-test.gguf")

    # Choosing a library template loads it, and the box says so, with its notes.
    page.select_option("#library-select", "qwen3")
    expect(origin).to_contain_text("Qwen3")
    expect(origin).to_contain_text("from the library")
    expect(origin).not_to_contain_text("modified")
    expect(page.locator("#library-notes")).to_contain_text(QWEN3_NOTE)
    assert page.evaluate("window.playground.editor.getValue()") == library_text("qwen3")


def test_an_uploaded_template_that_is_a_library_one_gets_its_notes(
    page: Page, tmp_path: Path
) -> None:
    config = tmp_path / "tokenizer_config.json"
    text = library_text("qwen3")
    config.write_text(json.dumps({"name_or_path": "Qwen/Qwen3-0.6B", "chat_template": text}))
    page.set_input_files("#hf-files", str(config))
    origin = page.locator("#template-origin")
    expect(origin).to_contain_text("tokenizer_config.json")
    expect(origin).to_contain_text("Qwen/Qwen3-0.6B")
    expect(page.locator("#library-notes")).to_contain_text(QWEN3_NOTE)
    expect(page.locator("#library-notes")).to_contain_text("same text as the library's Qwen3")
    expect(page.locator("#library-select")).to_have_value("")
