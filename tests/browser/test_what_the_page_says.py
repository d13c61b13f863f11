"""One hierarchy for what the page says: warnings stand out, routine facts stay quiet and
are said once, long notes fold to a line, and every colour and term is explained."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import load_vocab
from tests.browser.library import load_library
from tests.browser.test_engines_view import ONE_CALL, use_messages
from tests.browser.test_source_panel import QWEN3_NOTE, library_text
from tests.browser.test_views import set_template
from tests.support.shared_data import VOCAB_DIR, needs_shared

pytestmark = pytest.mark.browser

#: A developer message and content parts: TGI rewrites both for ChatML.
REWRITTEN = [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
]


def style(page: Page, selector: str, prop: str) -> str:
    return page.eval_on_selector(selector, f"e => getComputedStyle(e)[{prop!r}]")


def test_an_engines_rewrites_are_a_warning_and_stand_out(page: Page) -> None:
    use_messages(page, REWRITTEN)
    page.select_option("#engine", "tgi")
    warnings = page.locator("#prompt-warnings")
    expect(warnings).to_be_visible()
    expect(warnings.locator("#rewrites")).to_contain_text("content parts joined")
    # A box of its own, with a heading that says why it is there.
    expect(warnings).to_contain_text("changes the prompt")
    assert style(page, "#prompt-warnings", "borderLeftWidth") != "0px"
    assert style(page, "#prompt-warnings", "backgroundColor") != "rgba(0, 0, 0, 0)"


def test_how_the_client_sent_the_request_is_said_once_and_quietly(page: Page) -> None:
    use_messages(page, ONE_CALL)
    page.select_option("#tool_arguments", "objects")
    sent = page.locator("#sent-as")
    expect(sent).to_contain_text("passed as objects")
    # Quiet: the muted colour of facts, not inside the warnings.
    assert style(page, "#sent-as", "color") == style(page, "#char-count", "color")
    expect(page.locator("#prompt-warnings #sent-as")).to_have_count(0)
    # vLLM refuses objects: the error box says the error, the fact is said once, in Prompt.
    page.select_option("#engine", "vllm")
    expect(page.locator("#problem")).to_contain_text("Input should be a valid string")
    expect(page.locator("#problem")).not_to_contain_text("passed as objects")
    expect(page.locator("#sent-as")).to_contain_text("passed as objects")
    # The Diff of two engines given the same request does not say it again.
    page.select_option("#tool_arguments", "json_text")
    page.click("#tab-diff")
    page.select_option("#compare_engines", "transformers")
    expect(page.locator("#view-diff")).to_contain_text("Against the transformers engine.")
    assert page.locator("#view-diff").inner_text().count("Sent to") == 0


def test_library_notes_fold_to_one_line_with_more(page: Page) -> None:
    load_library(page, "qwen3")
    notes = page.locator("#library-notes")
    expect(notes).to_contain_text(QWEN3_NOTE)
    summary = notes.locator("summary")
    expect(summary).to_contain_text("more")
    line_height = float(style(page, "#library-notes summary", "lineHeight").rstrip("px"))
    assert summary.bounding_box()["height"] < 2 * line_height
    rest = "Reasoning is dropped from history"
    expect(notes.get_by_text(rest, exact=False)).to_be_hidden()
    summary.click()
    expect(notes.get_by_text(rest, exact=False)).to_be_visible()


def test_notes_go_when_another_template_is_pasted_over_a_library_one(page: Page) -> None:
    load_library(page, "qwen3")
    expect(page.locator("#library-notes")).to_contain_text(QWEN3_NOTE)
    set_template(page, library_text("gemma2"))  # the same text as the library's Gemma 2
    expect(page.locator("#template-origin")).not_to_contain_text("Qwen3")
    expect(page.locator("#library-notes")).not_to_contain_text(QWEN3_NOTE)
    set_template(page, "{{ messages[0].content }}")  # another template altogether
    expect(page.locator("#template-origin")).to_contain_text("Typed here")
    expect(page.locator("#library-notes")).not_to_contain_text(QWEN3_NOTE)
    # An edit keeps the origin, the notes folded and said to be the loaded template's.
    load_library(page, "qwen3")
    set_template(page, library_text("qwen3") + "{# mine #}")
    expect(page.locator("#template-origin")).to_contain_text("modified")
    expect(page.locator("#library-notes summary")).to_contain_text("as loaded")


def test_a_legend_says_what_each_colour_of_the_prompt_means(page: Page) -> None:
    legend = page.locator("#prompt-legend")
    expect(legend).to_be_visible()
    # No vocabulary: ChatML's markers are only known to look like control text.
    marker = legend.locator(".seg-marker")
    expect(marker).to_be_visible()
    expect(legend).to_contain_text("no vocabulary")
    # The colour in the legend is the colour in the prompt.
    assert style(page, "#prompt-legend .seg-marker", "color") == style(
        page, "#prompt .seg-marker", "color"
    )
    # Given special tokens, the purple kind is in the legend too.
    page.fill("#special_tokens", json.dumps({"eos_token": "<|im_end|>"}))
    expect(legend.locator(".seg-special")).to_be_visible()
    expect(legend).to_contain_text("special token")


def test_the_tokens_view_explains_its_colours(page: Page, small_vocab) -> None:
    load_vocab(page, small_vocab)  # patient: a busy CI machine builds it in more than 10 s
    page.click("#tab-tokens")
    legend = page.locator("#tokens-legend")
    expect(legend).to_contain_text("special")
    expect(legend).to_contain_text("is one token")


@pytest.mark.parametrize("term", ["clock pinned", "Content format", "continue_final_message"])
def test_unfamiliar_terms_explain_themselves_on_hover_and_focus(page: Page, term: str) -> None:
    page.fill("#now", "2026-01-02T03:04:05")
    expect(page.locator("#view-prompt")).to_contain_text("clock pinned")
    explains_itself(page, term)


def explains_itself(page: Page, term: str) -> None:
    """The first `term` on the page shows its one-line tip on hover and on focus."""
    found = page.locator(".term", has_text=term).first
    expect(found).to_have_text(term)
    tip = found.locator("xpath=following-sibling::*[1]")
    expect(tip).to_have_attribute("role", "tooltip")
    expect(tip).to_be_hidden()
    found.hover()
    expect(tip).to_be_visible()
    assert len(tip.inner_text()) > 20
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden()
    # A term in a sentence is a Tab stop of its own; a control's label shows its tip when
    # the control (inside the label, described by the tip) has focus: no extra Tab stop.
    if found.get_attribute("tabindex") == "0":
        found.focus()
    else:
        described = f'[aria-describedby~="{tip.get_attribute("id")}"]'
        page.locator("label", has=found).locator(described).focus()
    expect(tip).to_be_visible()


def test_the_next_turn_check_explains_itself(page: Page) -> None:
    load_library(page, "qwen3")
    page.locator("#completion-box summary").click()
    page.select_option("#completion-kind", label="one tool call")
    page.click("#completion-fill")
    page.click("#tab-response")
    found = page.locator(".round-trip .term").first
    tip = found.locator("xpath=following-sibling::*[1]")
    expect(found).to_have_text("Next turn")
    found.focus()
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("reuses its cache")


#: A Modelfile with each fact the source panel shows.
MODELFILE = '''FROM qwen3:8b
TEMPLATE """{{ .Prompt }}"""
PARAMETER stop <|im_end|>
PARSER qwen3
'''


@pytest.mark.parametrize(
    "term", ["Ollama model", "Modelfile", "FROM", "Renderer", "Parser", "Stops"]
)
def test_ollamas_terms_explain_themselves_on_hover_and_focus(page: Page, term: str) -> None:
    page.click("#modelfile-paste summary")
    page.fill("#modelfile-text", MODELFILE)
    page.click("#modelfile-load")
    expect(page.locator("#ollama-parser")).to_have_text("qwen3")
    explains_itself(page, term)


@needs_shared
def test_the_prompt_legend_says_where_the_vocabularys_special_tokens_show(page: Page) -> None:
    # Phi-3's <|user|> is a special token of its vocabulary: the Tokens view draws it as
    # one, the Prompt view (which marks only the special tokens' values given) as a marker.
    load_vocab(page, VOCAB_DIR / "ggml-vocab-phi-3.gguf")
    expect(page.locator("#prompt .seg-marker", has_text="<|user|>").first).to_be_visible()
    page.click("#tab-tokens")
    expect(page.locator("#tokens .tok.special", has_text="<|user|>").first).to_be_visible()
    page.click("#tab-prompt")
    legend = page.locator("#prompt-legend")
    # The legend does not leave the two colours of one token unexplained ...
    expect(legend).to_contain_text("the Tokens view")
    # ... nor say that this view marks the vocabulary's special tokens.
    expect(page.locator("#tip-legend-special")).not_to_contain_text("of the loaded vocabulary")
