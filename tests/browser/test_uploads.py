"""Loading files as a user does: dropped on the page, with progress that says what is
happening, and errors that say in words what is wrong with the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import JSHandle, Page, expect

from tests.browser.conftest import PageErrors
from tests.browser.test_source_panel import gemma_gguf
from tests.support.page_data import synthetic_vocab

pytestmark = pytest.mark.browser

NOT_GGUF = 'this file does not start with "GGUF", so it is not a GGUF file'


def drop(page: Page, files: dict[str, bytes]) -> None:
    """Drag files over the page and drop them, as from a file manager."""
    transfer: JSHandle = page.evaluate_handle(
        """files => {
            const transfer = new DataTransfer();
            for (const [name, bytes] of Object.entries(files)) {
                transfer.items.add(new File([new Uint8Array(bytes)], name));
            }
            return transfer;
        }""",
        {name: list(data) for name, data in files.items()},
    )
    for event in ("dragenter", "dragover"):
        page.dispatch_event("#template-panel", event, {"dataTransfer": transfer})
    expect(page.locator("body")).to_have_class("dropping")
    page.dispatch_event("#template-panel", "drop", {"dataTransfer": transfer})
    expect(page.locator("body")).not_to_have_class("dropping")


def record_upload_messages(page: Page) -> None:
    """Keep every text the upload status shows, in order, in `window.uploadMessages`."""
    page.evaluate(
        """() => {
            window.uploadMessages = [];
            const box = document.getElementById("upload-message");
            new MutationObserver(() => window.uploadMessages.push(box.textContent))
                .observe(box, {childList: true, characterData: true, subtree: true});
        }"""
    )


def test_dropping_a_gguf_file_loads_it(page: Page, tmp_path: Path) -> None:
    drop(page, {"gemma-test.gguf": gemma_gguf(tmp_path).read_bytes()})
    expect(page.locator("#template-origin")).to_contain_text("gemma-test.gguf")
    expect(page.locator("#prompt-raw")).to_have_value(
        "<start_of_turn>system\nYou are a helpful assistant.<end_of_turn>\n"
        "<start_of_turn>user\nWhat is the capital of France?<end_of_turn>\n"
    )


def test_dropping_a_model_folder_sends_only_the_tokenizer_files(page: Page) -> None:
    config = {"chat_template": "DROPPED {{ messages | length }}", "eos_token": "</s>"}
    # The server refuses files it does not know (422): a 200 says they were not sent.
    with page.expect_response("**/api/sources/hf") as answer:
        drop(
            page,
            {
                "tokenizer_config.json": json.dumps(config).encode(),
                "config.json": b"{}",
                "model.safetensors": bytes(64),
            },
        )
    assert answer.value.status == 200
    expect(page.locator("#prompt-raw")).to_have_value("DROPPED 2")
    expect(page.locator("#upload-message")).to_contain_text(
        "left out config.json, model.safetensors"
    )


def drop_folder(page: Page, folder: Path) -> None:
    """Drop a real folder on the page, as from a file manager: Chromium's own drag and
    drop (DevTools `Input.dispatchDragEvent` with the folder's path) gives the page a
    directory entry to walk, which a script-made DataTransfer cannot hold."""
    devtools = page.context.new_cdp_session(page)
    box = page.locator("#template-panel").bounding_box()
    assert box is not None
    where = {"x": box["x"] + 40, "y": box["y"] + 40}
    data = {"items": [], "files": [str(folder)], "dragOperationsMask": 1}
    for kind in ("dragEnter", "dragOver", "drop"):
        devtools.send("Input.dispatchDragEvent", {"type": kind, **where, "data": data})
    devtools.detach()


def test_dropping_a_whole_model_folder_sends_only_its_tokenizer_files(
    page: Page, tmp_path: Path
) -> None:
    folder = tmp_path / "Some-Model-7B"
    (folder / "original").mkdir(parents=True)
    config = {"chat_template": "FOLDER {{ messages | length }}", "eos_token": "</s>"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(bytes(256 * 1024))
    (folder / "original" / "params.json").write_text("{}")
    # What the page posts, file by file (Playwright sees no body of a multipart upload).
    page.evaluate(
        """() => {
            const send = XMLHttpRequest.prototype.send;
            XMLHttpRequest.prototype.send = function (body) {
                if (body instanceof FormData) {
                    window.sentFiles = Array.from(body.values(), (file) => [file.name, file.size]);
                }
                return send.call(this, body);
            };
        }"""
    )
    with page.expect_response("**/api/sources/hf") as answer:
        drop_folder(page, folder)
    assert page.evaluate("window.sentFiles") == [["tokenizer_config.json", len(json.dumps(config))]]
    # The server, which refuses files it does not know (422), took what was sent.
    assert answer.value.status == 200
    expect(page.locator("#prompt-raw")).to_have_value("FOLDER 2")
    message = page.locator("#upload-message")
    expect(message).to_contain_text("Loaded tokenizer_config.json")
    for name in ("config.json", "model.safetensors", "params.json"):
        expect(message).to_contain_text(name)  # named among those left out


def test_progress_says_when_the_server_reads_the_header(page: Page, tmp_path: Path) -> None:
    record_upload_messages(page)
    page.set_input_files("#gguf-file", str(gemma_gguf(tmp_path)))
    expect(page.locator("#upload-message")).to_contain_text("Loaded gemma-test.gguf")
    messages = page.evaluate("window.uploadMessages")
    sending = [i for i, m in enumerate(messages) if m.startswith("Sending")]
    reading = [i for i, m in enumerate(messages) if "reading the header" in m]
    assert sending and reading, messages
    assert max(sending) < min(reading) < len(messages) - 1, messages


def test_errors_say_what_is_wrong_with_the_file(
    page: Page, tmp_path: Path, page_errors: PageErrors
) -> None:
    page_errors.allow(r"status of 422 .*/api/sources/gguf")
    page_errors.allow(r"status of 409 .*/api/sources/gguf")
    saved_page = tmp_path / "model.gguf"
    saved_page.write_text("<!DOCTYPE html><html><body>Download</body></html>")
    page.set_input_files("#gguf-file", str(saved_page))
    message = page.locator("#upload-message")
    expect(message).to_contain_text(f"Could not read model.gguf: {NOT_GGUF}")
    expect(message).to_contain_text("it looks like a web page (HTML)")
    expect(message).not_to_contain_text("b'")

    cut = tmp_path / "cut.gguf"
    cut.write_bytes(gemma_gguf(tmp_path).read_bytes()[:40])
    page.set_input_files("#gguf-file", str(cut))
    expect(message).to_contain_text(
        "Could not read cut.gguf: the file ends after 40 bytes, inside its header"
    )
    # A refused file is let go of too: it is not what the page holds.
    assert picked(page, "#gguf-file") == 0


def picked(page: Page, picker: str) -> int:
    """How many files the file picker `picker` holds (and shows by name)."""
    return page.eval_on_selector(picker, "input => input.files.length")


def test_the_hugging_face_picker_lets_go_of_files_read_or_refused(
    page: Page, tmp_path: Path, page_errors: PageErrors
) -> None:
    page_errors.allow(r"status of 422 .*/api/sources/hf")
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": "READ {{ messages | length }}"}))
    page.set_input_files("#hf-files", str(config))
    message = page.locator("#upload-message")
    expect(message).to_contain_text("Loaded tokenizer_config.json")
    expect(page.locator("#prompt-raw")).to_have_value("READ 2")
    assert picked(page, "#hf-files") == 0

    config.write_text('{"chat_template": ')  # cut short: not JSON
    page.set_input_files("#hf-files", str(config))
    expect(message).to_contain_text("Could not read tokenizer_config.json")
    assert picked(page, "#hf-files") == 0
    expect(page.locator("#prompt-raw")).to_have_value("READ 2")  # the loaded one stays


def test_the_template_comes_first_and_the_tokens_when_built(page: Page, tmp_path: Path) -> None:
    # A vocabulary of 60k tokens takes a moment to build; the upload does not wait for it.
    vocab = synthetic_vocab(tmp_path / "vocab.gguf", 60_000)
    record_upload_messages(page)
    with page.expect_response("**/api/sources/gguf?*", timeout=30_000) as answer:
        page.set_input_files("#gguf-file", str(vocab))
    assert answer.value.json()["tokenizer"]["state"] == "building"
    expect(page.locator("#upload-message")).to_contain_text("tokenizer ready", timeout=30_000)
    # No other upload: the Tokens view shows the tokens once they are built.
    page.click(".tab[data-view=tokens]")
    expect(page.locator("#tokens .tok").first).to_be_visible(timeout=30_000)
    messages = page.evaluate("window.uploadMessages")
    building = [i for i, m in enumerate(messages) if m.endswith("; building its tokenizer…")]
    assert all(messages[i].startswith("Loaded vocab.gguf") for i in building), messages
    ready = [i for i, m in enumerate(messages) if m.endswith("tokenizer ready")]
    assert building and ready and max(building) < min(ready), messages
