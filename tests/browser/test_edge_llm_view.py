"""Edge-LLM's load check on the page, as the issue's user meets it: a template its patched
Inja cannot parse, or a model with named templates, says that Edge-LLM would not load the
model, why, and where."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.shared_data import TEMPLATES_DIR, needs_shared

pytestmark = pytest.mark.browser


@needs_shared
def test_firefunction_does_not_load_in_edge_llm_and_says_why_at_line_4(page: Page) -> None:
    template = (TEMPLATES_DIR / "fireworks-ai-llama-3-firefunction-v2.jinja").read_text("utf-8")
    page.evaluate("text => window.playground.setTemplate(text)", template)
    page.select_option("#engine", "edge-llm")
    problem = page.locator("#problem")
    expect(problem).to_contain_text("Edge-LLM would not load this model")
    expect(problem).to_contain_text(re.compile(r"expected statement, got 'filter'"))
    expect(problem.locator(".problem-line")).to_have_text("line 4")
    page.click("#tab-command")
    # How to export with this template, after the warning: the template goes where
    # Edge-LLM's export reads it, then the export and the engine build. The command lines
    # are this template's, shown as they are: not a stale copy of the last good output.
    export = page.locator('pre.command[data-engine="edge-llm"][data-form="export"]')
    expect(export).to_be_visible()
    expect(page.locator("#view-command .stale-note")).to_have_count(0)
    expect(export).to_contain_text("# Warning: Edge-LLM would not load this model")
    expect(export).to_contain_text("cp template.jinja CHECKPOINT_DIR/chat_template.jinja")
    expect(export).to_contain_text("tensorrt-edgellm-export CHECKPOINT_DIR ONNX_DIR")
    expect(export).to_contain_text("--onnxDir ONNX_DIR/llm --engineDir ENGINE_DIR")
    for form in ("engine folder", "serve"):
        expect(
            page.locator(f'pre.command[data-engine="edge-llm"][data-form="{form}"]')
        ).to_contain_text("# Warning: Edge-LLM would not load this model")


def test_a_model_with_named_templates_does_not_load_in_edge_llm(page: Page, tmp_path: Path) -> None:
    """Hugging Face files with a named template: Edge-LLM's loader refuses the model
    whatever the template; the other engines render it, and its tabs are offered."""
    chatml = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    config = tmp_path / "tokenizer_config.json"
    named = [{"name": "default", "template": chatml}, {"name": "tool_use", "template": chatml}]
    config.write_text(json.dumps({"chat_template": named}))
    page.set_input_files("#hf-files", str(config))
    expect(page.locator('.template-tab[data-template-name="tool_use"]')).to_be_visible()
    expect(page.locator("#problem")).to_have_count(0)
    page.select_option("#engine", "edge-llm")
    problem = page.locator("#problem")
    expect(problem).to_contain_text("Edge-LLM would not load this model")
    expect(problem).to_contain_text("named provider chat templates are unsupported")
    expect(problem).to_contain_text("tool_use")
