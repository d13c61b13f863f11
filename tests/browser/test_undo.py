"""Nothing the user wrote is lost (issue 37, item 1): every action that replaces the
template, the messages or the tools can be undone from the page (an Undo beside it that
says what it undoes, Ctrl+Z in the template editor), Back returns to the page as it was
before it (not out of the app), and the Library list loads only on confirmation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_axe import AXE, WIDTHS, violations
from tests.browser.test_page import messages_json, prompt, show_raw_messages
from tests.browser.test_state import upload_named_templates

pytestmark = pytest.mark.browser

#: The user's own template, typed in the editor.
MINE = "MINE {{ messages | length }}"
#: What MINE renders for the default conversation.
MINE_PROMPT = "MINE 2"


def library_text(page: Page, name: str) -> str:
    return page.request.get(f"/api/library/{name}").json()["template"]


def editor_text(page: Page) -> str:
    return page.evaluate("window.playground.editor.getValue()")


def type_template(page: Page, text: str) -> None:
    """Select the whole template and type `text` over it, as a user does."""
    page.locator(".cm-editor .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type(text, delay=5)
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=text)
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^MINE "))


def choose_library(page: Page, name: str) -> None:
    """Choose `name` in Library with the mouse, which loads it."""
    text = library_text(page, name)
    page.select_option("#library-select", name)
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=text)
    expect(page.locator("#prompt-raw")).not_to_have_value(re.compile("^MINE"))


def undo_bar(page: Page):
    return page.locator("#undo-bar")


def test_arrow_keys_in_the_library_pick_and_enter_loads(page: Page) -> None:
    type_template(page, MINE)
    expect(page.locator("#prompt-raw")).to_have_value(MINE_PROMPT)
    select = page.locator("#library-select")
    select.focus()
    for _ in range(3):
        page.keyboard.press("ArrowDown")
    page.wait_for_timeout(600)  # a load, and its render, would have come by now
    assert editor_text(page) == MINE
    expect(page.locator("#prompt-raw")).to_have_value(MINE_PROMPT)
    picked = select.input_value()
    assert picked not in ("", "chatml")
    # The page says how to load what is picked, and does not call the template the pick.
    # (MINE replaced ChatML's text altogether: typed here, not "ChatML, modified".)
    title = select.locator("option:checked").text_content()
    expect(page.locator("#template-origin")).to_contain_text("Typed here")
    expect(page.locator("#template-origin")).not_to_contain_text(title)
    expect(page.locator("#library-select-hint")).to_contain_text("Enter")

    page.keyboard.press("Enter")
    text = library_text(page, picked)
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=text)
    expect(page.locator("#template-origin")).to_contain_text("from the library")
    expect(page.locator("#template-origin")).not_to_contain_text("modified")
    expect(select).to_be_focused()


def test_the_load_button_loads_the_picked_entry(page: Page) -> None:
    page.locator("#library-select").focus()
    page.keyboard.press("ArrowDown")
    picked = page.locator("#library-select").input_value()
    load = page.locator("#template-sources").get_by_role("button", name="Load", exact=True)
    expect(load).to_be_visible()
    load.click()
    text = library_text(page, picked)
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=text)


def test_a_library_choice_is_undone_by_the_undo_beside_it(page: Page) -> None:
    type_template(page, MINE)
    expect(undo_bar(page)).to_be_hidden()
    choose_library(page, "llama3.1")
    bar = undo_bar(page)
    expect(bar).to_be_visible()
    expect(bar).to_contain_text("Llama 3.1")
    # Beside the action: right under the Library row, above the editor.
    row = page.locator("#template-sources").bounding_box()
    box = bar.bounding_box()
    assert row and box and 0 <= box["y"] - (row["y"] + row["height"]) < 20

    bar.get_by_role("button", name="Undo").click()
    assert editor_text(page) == MINE
    expect(page.locator("#prompt-raw")).to_have_value(MINE_PROMPT)
    expect(page.locator("#template-origin")).not_to_contain_text("Llama")
    expect(bar).to_be_hidden()


@pytest.mark.parametrize("where", ["text", "tab stop"])
def test_ctrl_z_in_the_editor_brings_back_the_template(page: Page, where: str) -> None:
    type_template(page, MINE)
    choose_library(page, "llama3.1")
    if where == "text":
        page.locator(".cm-editor .cm-content").click()
    else:
        page.locator(".cm-editor .cm-scroller").focus()  # where Tab stops
    page.keyboard.press("Control+z")
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=MINE)
    expect(page.locator("#prompt-raw")).to_have_value(MINE_PROMPT)
    # Undone as a whole: the page no longer calls the template Llama 3.1's.
    expect(page.locator("#template-origin")).not_to_contain_text("Llama")
    expect(undo_bar(page)).to_be_hidden()


def test_back_returns_to_the_page_before_the_choice(page: Page) -> None:
    address = page.url
    type_template(page, MINE)
    choose_library(page, "llama3.1")
    llama = prompt(page)
    page.wait_for_timeout(400)  # as a user would, not within the save's pause

    page.go_back()
    assert page.url == address  # still the app
    page.wait_for_function("(text) => window.playground.editor.getValue() === text", arg=MINE)
    expect(page.locator("#prompt-raw")).to_have_value(MINE_PROMPT)
    page.go_forward()
    expect(page.locator("#prompt-raw")).to_have_value(llama)
    expect(undo_bar(page)).to_contain_text("Llama 3.1")


def test_undo_puts_back_only_what_the_action_replaced(page: Page) -> None:
    page.select_option("#example-select", "parallel-tools")
    page.click("#example-load")
    expect(page.locator("#message-editor .message")).to_have_count(6)
    type_template(page, MINE)  # edited after the example: not the example's to undo
    undo_bar(page).get_by_role("button", name="Undo").click()
    expect(page.locator("#prompt-raw")).to_have_value(MINE_PROMPT)
    assert editor_text(page) == MINE
    assert page.locator("#tools").input_value() == ""

    # Back returns to the page as it was before the Undo: nothing is lost.
    page.go_back()
    expect(page.locator("#prompt-raw")).to_have_value("MINE 6")
    assert page.locator("#tools").input_value() != ""


@dataclass
class Action:
    """One action that replaces what the user wrote."""

    #: Make the field it replaces the user's own.
    prepare: Callable[[Page, Path], None]
    #: Do the action.
    act: Callable[[Page, Path], None]
    #: The user's own field, read back.
    read: Callable[[Page], str]
    #: What the user's own field holds.
    mine: str
    #: What the Undo bar names.
    says: str
    #: What the Undo bar names after the Undo (the action before it), if any.
    then: str | None = None


def mine_messages(page: Page, _: Path) -> None:
    page.locator("#message-editor .message").nth(1).locator("textarea").first.fill("Mine?")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("Mine\\?"))


def mine_template(page: Page, _: Path) -> None:
    type_template(page, MINE)


def mine_after_upload(page: Page, folder: Path) -> None:
    upload_named_templates(page, folder)
    type_template(page, MINE)


def mine_compare(page: Page, _: Path) -> None:
    page.click("#tab-diff")
    page.fill("#compare_template", "MY SECOND {{ messages | length }}")
    expect(page.locator("#diff-unified")).to_be_visible()


def upload(page: Page, folder: Path) -> None:
    config = folder / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": "UPLOADED", "bos_token": "<s>"}))
    page.set_input_files("#hf-files", str(config))
    expect(page.locator("#prompt-raw")).to_have_value("UPLOADED")


def example(page: Page, _: Path) -> None:
    page.select_option("#example-select", "reasoning")
    page.click("#example-load")
    expect(page.locator("#prompt-raw")).not_to_have_value(re.compile("Mine\\?"))


def request_body(page: Page, _: Path) -> None:
    show_raw_messages(page)
    body = {
        "messages": [{"role": "user", "content": "From a body"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
    }
    page.fill("#messages", json.dumps(body))
    expect(page.locator("#message-editor .message")).to_have_count(1)
    expect(page.locator("#tools")).to_have_value(re.compile('"name": "f"'))


def template_tab(page: Page, _: Path) -> None:
    page.click(".template-tab[data-template-name=tool_use]")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("^TOOL_USE "))


def compare_library(page: Page, _: Path) -> None:
    page.select_option("#compare-library", "llama3.1")
    expect(page.locator("#compare_template")).to_have_value(re.compile("Llama 3.1 Instruct"))


def reset(page: Page, _: Path) -> None:
    with page.expect_navigation():  # Reset reloads the page, as a new history entry
        page.click("#reset")
    page.wait_for_function("() => Boolean(window.playground && window.playground.editor)")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("capital of France"))


def modelfile(page: Page, _: Path) -> None:
    if not page.locator("#modelfile-text").is_visible():  # open from the first time
        page.click("#modelfile-paste summary")
    page.fill("#modelfile-text", 'FROM qwen3:8b\nTEMPLATE """GO {{ .Prompt }}"""\n')
    page.click("#modelfile-load")
    page.wait_for_function("() => window.playground.editor.getValue() === 'GO {{ .Prompt }}'")


def template_and_language(page: Page) -> str:
    """The template and the language it is read in: a Modelfile sets both."""
    return f"{editor_text(page)} ({page.locator('#template_kind').input_value()})"


def compare_text(page: Page) -> str:
    return page.locator("#compare_template").input_value()


def second_message(page: Page) -> str:
    messages = messages_json(page)
    return messages[1]["content"] if len(messages) > 1 else ""


ACTIONS = {
    "upload": Action(mine_template, upload, editor_text, MINE, "tokenizer_config.json"),
    "template tab": Action(
        mine_after_upload, template_tab, editor_text, MINE, "tool_use", "tokenizer_config.json"
    ),
    "example": Action(mine_messages, example, second_message, "Mine?", "example"),
    "request body": Action(mine_messages, request_body, second_message, "Mine?", "request body"),
    "compare library": Action(
        mine_compare, compare_library, compare_text, "MY SECOND {{ messages | length }}", "Llama"
    ),
    "reset": Action(mine_template, reset, editor_text, MINE, "Reset"),
    "modelfile": Action(
        mine_template, modelfile, template_and_language, f"{MINE} (jinja)", "Modelfile"
    ),
}


@pytest.mark.parametrize("name", list(ACTIONS))
def test_every_replacing_action_is_undone_and_backed_out_of(
    page: Page, tmp_path: Path, name: str
) -> None:
    action = ACTIONS[name]
    address = page.url
    action.prepare(page, tmp_path)
    assert action.read(page) == action.mine

    action.act(page, tmp_path)
    assert action.read(page) != action.mine
    bar = undo_bar(page)
    expect(bar).to_be_visible()
    expect(bar).to_contain_text(action.says)
    bar.get_by_role("button", name="Undo").click()
    if action.then:  # the Undo of the action before
        expect(bar).to_contain_text(action.then)
    else:
        expect(bar).to_be_hidden()
    assert action.read(page) == action.mine

    action.act(page, tmp_path)
    assert action.read(page) != action.mine
    page.wait_for_timeout(400)  # as a user would, not within the save's pause
    page.go_back()
    assert page.url == address  # still the app
    expect(page.locator(".cm-editor")).to_be_visible()
    page.wait_for_function("() => Boolean(window.playground && window.playground.editor)")
    assert action.read(page) == action.mine


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is missing: run ./playground (npm ci)")
@pytest.mark.parametrize("width", WIDTHS)
def test_the_new_controls_pass_axe(new_page: Callable[..., Page], width: int) -> None:
    # The Undo bar in the header (after Reset), then beside Library, with the Library
    # hint and an out-of-date share link.
    page = new_page(
        viewport={"width": width, "height": 900},
        bypass_csp=True,
        permissions=["clipboard-read", "clipboard-write"],
    )
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    with page.expect_navigation():
        page.click("#reset")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    expect(undo_bar(page)).to_contain_text("Reset")
    found = violations(page)
    page.click("#share-button")
    expect(page.locator("#share-status")).to_have_text("Link copied")
    choose_library(page, "qwen3")
    page.locator("#library-select").focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#library-select-hint")).to_contain_text("Enter or Load")
    expect(page.locator("#share-status")).to_have_text(re.compile("Out of date"))
    expect(undo_bar(page)).to_contain_text("Qwen3")
    found += violations(page)
    assert not found, "\n".join(found)
