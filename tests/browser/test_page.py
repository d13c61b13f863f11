"""The page in a real browser: live rendering, the editors, uploads, diff, share, safety."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Request, expect

from tests.browser.conftest import PageErrors
from tests.support.shared_data import VOCAB_DIR, needs_shared

pytestmark = pytest.mark.browser

LLAMA_VOCAB = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
#: What the page sends of a GGUF file before the server asks for more.
FIRST_PREFIX = 16 * 1024 * 1024
#: GGUF's type code for a string value.
GGUF_STRING = 8

CHATML = (
    "{% for message in messages %}\n"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}\n"
    "{%- endfor %}\n"
    "{% if add_generation_prompt %}\n"
    "{{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n"
)

XSS_PAYLOADS = [
    '<img src=x onerror="window.__xss=1">',
    '"><script>window.__xss=1</script>',
    "</textarea><script>window.__xss=1</script>",
]


def contains(text: str) -> re.Pattern[str]:
    """A pattern for `to_have_value`/`to_have_text` that matches `text` anywhere."""
    return re.compile(re.escape(text))


def set_template(page: Page, text: str) -> None:
    page.evaluate("text => window.playground.setTemplate(text)", text)


def prompt(page: Page) -> str:
    return page.locator("#prompt-raw").input_value()


def messages_json(page: Page) -> list[dict]:
    return json.loads(page.locator("#messages").input_value())


def show_raw_messages(page: Page) -> None:
    if page.locator("#raw-messages").is_hidden():
        page.click("#toggle-raw")
    expect(page.locator("#messages")).to_be_visible()


def watch_requests(page: Page, path: str) -> list[Request]:
    """Every request the page sends to `path` from now on."""
    seen: list[Request] = []
    page.on("request", lambda request: path in request.url and seen.append(request))
    return seen


def body_size(request: Request) -> int:
    """The bytes a request sent (Chromium does not hand file slices' bodies to Playwright)."""
    request.response()  # the headers as sent are known once it is answered
    length = request.all_headers().get("content-length")
    if length is not None:
        return int(length)
    return len(request.post_data_buffer or b"")  # an intercepted request carries its body


def upload_gguf(page: Page, path: Path) -> None:
    page.set_input_files("#gguf-file", str(path))
    expect(page.locator("#source-file")).to_have_text(path.name, timeout=30_000)


def test_template_error_marks_the_line_and_clears_when_fixed(page: Page) -> None:
    broken = "{% for m in messages %}\n[{{ m.role }}] {{ m.content }}\n{% if %}\n{% endfor %}"
    editor = page.locator(".cm-editor .cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(broken)  # as a paste: through the editor's own input

    problem = page.locator("#problem")
    expect(problem.locator(".problem-type")).to_have_text("TemplateSyntaxError")
    expect(problem.locator(".problem-line")).to_have_text("line 3")
    expect(page.locator("#prompt-raw")).to_have_count(0)
    # A lint mark over line 3's text, and an error marker in the gutter beside it.
    marked = page.locator(".cm-editor .cm-problem-line")
    expect(marked).to_have_count(1)
    expect(marked).to_have_text("{% if %}")
    marker = page.locator(".cm-editor .cm-lint-marker-error")
    expect(marker).to_have_count(1)
    line, dot = marked.bounding_box(), marker.bounding_box()
    assert line and dot
    assert abs((dot["y"] + dot["height"] / 2) - (line["y"] + line["height"] / 2)) < 8
    # Hovering the marker tells what is wrong there, as the output's problem does.
    marker.hover()
    tooltip = page.locator(".cm-tooltip-lint")
    expect(tooltip).to_contain_text("TemplateSyntaxError")
    expect(tooltip).to_contain_text(problem.locator(".problem-message").inner_text())
    # The editor writes through to the form field the server reads.
    assert page.locator("#template").input_value() == broken

    fixed = broken.replace("{% if %}", "{% if loop.last %}<end>{% endif %}")
    page.evaluate("text => window.playground.editor.setValue(text)", fixed)
    expect(page.locator("#problem")).to_have_count(0)
    expect(marked).to_have_count(0)
    expect(marker).to_have_count(0)
    assert page.locator("#template").input_value() == fixed
    expected = "[system] You are a helpful assistant.\n[user] What is the capital of France?\n<end>"
    expect(page.locator("#prompt-raw")).to_have_value(expected)
    expect(page.locator("#prompt")).to_contain_text("[user] What is the capital of France?")
    assert page.locator("#template").input_value() == fixed


def test_message_editor_keeps_the_json_in_sync(page: Page) -> None:
    cards = page.locator("#message-editor .message")
    expect(cards).to_have_count(2)
    user_content = cards.nth(1).locator("textarea").first
    user_content.fill("Where is Zanzibar?")
    expect(page.locator("#prompt-raw")).to_have_value(
        contains("user\nWhere is Zanzibar?<|im_end|>")
    )
    assert messages_json(page)[1] == {"role": "user", "content": "Where is Zanzibar?"}

    # Typing key by key: the card being typed in is not redrawn (focus and text survive).
    user_content.press_sequentially(" Now!", delay=30)
    expect(user_content).to_be_focused()
    expect(user_content).to_have_value("Where is Zanzibar? Now!")
    expect(page.locator("#prompt-raw")).to_have_value(contains("Where is Zanzibar? Now!<|im_end|>"))
    assert messages_json(page)[1]["content"] == "Where is Zanzibar? Now!"

    page.click("#add-message")
    expect(cards).to_have_count(3)
    expect(cards.nth(2).locator("select")).to_have_value("assistant")
    cards.nth(2).locator("textarea").first.fill("Off Tanzania.")
    expect(page.locator("#prompt-raw")).to_have_value(
        contains("<|im_start|>assistant\nOff Tanzania.<|im_end|>")
    )
    assert [m["role"] for m in messages_json(page)] == ["system", "user", "assistant"]

    cards.nth(2).get_by_role("button", name="Move up").click()
    expect(cards.nth(1).locator("select")).to_have_value("assistant")
    assert [m["role"] for m in messages_json(page)] == ["system", "assistant", "user"]
    expect(page.locator("#prompt-raw")).to_have_value(
        re.compile(r"assistant\nOff Tanzania\.<\|im_end\|>\n<\|im_start\|>user\nWhere is Zanzibar")
    )

    cards.nth(0).get_by_role("button", name="Remove").click()
    expect(cards).to_have_count(2)
    assert messages_json(page) == [
        {"role": "assistant", "content": "Off Tanzania."},
        {"role": "user", "content": "Where is Zanzibar? Now!"},
    ]
    expect(page.locator("#prompt-raw")).not_to_have_value(contains("system"))

    # The other way round: raw JSON edits redraw the structured editor.
    show_raw_messages(page)
    page.fill("#messages", json.dumps([{"role": "tool", "content": "42", "tool_call_id": "c1"}]))
    expect(cards).to_have_count(1)
    expect(cards.nth(0).locator("select")).to_have_value("tool")
    expect(cards.nth(0).locator("textarea").first).to_have_value("42")
    expect(page.locator("#prompt-raw")).to_have_value(contains("<|im_start|>tool\n42<|im_end|>"))


@needs_shared
def test_gguf_upload_sends_only_the_header_prefix(
    page: Page, tmp_path: Path, page_errors: PageErrors
) -> None:
    model = tmp_path / "big-model.gguf"
    with model.open("wb") as file:
        file.write(LLAMA_VOCAB.read_bytes())
        file.write(bytes(40 * 1024 * 1024))  # stands for the tensor data
    size = model.stat().st_size
    uploads = watch_requests(page, "/api/sources/gguf")

    upload_gguf(page, model)

    sent = [body_size(request) for request in uploads]
    assert sent == [FIRST_PREFIX]
    assert sum(sent) <= FIRST_PREFIX < size
    assert uploads[0].url.endswith("?name=big-model.gguf")
    expect(page.locator("#source-arch")).to_have_text("llama")
    expect(page.locator("#source-vocab")).to_contain_text("32000 tokens")
    expect(page.locator("#special_tokens")).to_have_value(contains('"bos_token": "<s>"'))
    # The file's name and size, and how little of it was read.
    expect(page.locator("#upload-message")).to_have_text(
        "Loaded big-model.gguf (42.7 MB, header 723.9 KB read); this GGUF has no chat "
        "template; keeping the current one; tokenizer ready"
    )
    # The picker lets go of the file: the source panel says what is loaded, and a file
    # left in the picker would go stale once another source replaces it.
    assert page.eval_on_selector("#gguf-file", "input => input.files.length") == 0

    page.click(".tab[data-view=tokens]")
    expect(page.locator("#outputs")).to_have_class(re.compile(r"\bview-tokens\b"))
    tokens = page.locator("#tokens span.tok")
    expect(tokens.first).to_be_visible()
    count = int(page.locator("#token-count").inner_text().split()[0])
    assert count > 10
    expect(tokens).to_have_count(count)
    titles = tokens.evaluate_all("spans => spans.map(s => s.title)")
    assert all(re.match(r"#\d+ · id \d+ · ", title) for title in titles), titles[:5]
    # The token texts put together are the prompt, character for character.
    assert page.locator("#tokens").text_content() == prompt(page)
    assert page_errors.unexpected() == []


@needs_shared
def test_small_gguf_goes_in_one_request(page: Page) -> None:
    uploads = watch_requests(page, "/api/sources/gguf")
    upload_gguf(page, LLAMA_VOCAB)
    expect(page.locator("#source-arch")).to_have_text("llama")
    assert [body_size(request) for request in uploads] == [LLAMA_VOCAB.stat().st_size]
    expect(page.locator("#upload-message")).to_have_text(
        re.compile(rf"^Loaded {re.escape(LLAMA_VOCAB.name)} \(")
    )


def long_header_gguf(path: Path, header_padding: int, tensor_bytes: int) -> None:
    """The llama vocabulary with one more KV, a string of `header_padding` bytes, and
    `tensor_bytes` of zeros after the header (its tensor data)."""
    vocab = LLAMA_VOCAB.read_bytes()
    tensor_count, kv_count = struct.unpack_from("<QQ", vocab, 8)
    key = b"playground.test.padding"
    kv = struct.pack("<Q", len(key)) + key + struct.pack("<IQ", GGUF_STRING, header_padding)
    with path.open("wb") as file:
        file.write(vocab[:8] + struct.pack("<QQ", tensor_count, kv_count + 1) + kv)
        file.write(b" " * header_padding)
        file.write(vocab[24:])
        file.write(bytes(tensor_bytes))


@needs_shared
def test_gguf_upload_grows_on_409(page: Page, tmp_path: Path, page_errors: PageErrors) -> None:
    """A header longer than the first prefix: the server answers 409 and the page sends
    at least what it asks for (twice as much), still not the whole file."""
    model = tmp_path / "long-header.gguf"
    long_header_gguf(model, header_padding=FIRST_PREFIX + 1024 * 1024, tensor_bytes=40 << 20)
    size = model.stat().st_size
    uploads = watch_requests(page, "/api/sources/gguf")
    page_errors.allow(r"status of 409 .* at \S+/api/sources/gguf\?")

    upload_gguf(page, model)
    expect(page.locator("#source-arch")).to_have_text("llama")
    assert len(uploads) == 2
    first = uploads[0].response()
    assert first is not None and first.status == 409
    need = first.json()["error"]["need_bytes"]
    assert need > FIRST_PREFIX
    sent = [body_size(request) for request in uploads]
    assert sent == [FIRST_PREFIX, max(need, 2 * FIRST_PREFIX)]
    assert sent[1] < size
    expect(page.locator("#upload-message")).to_have_text(
        "Loaded long-header.gguf (60.5 MB, header 18.5 MB read); this GGUF has no chat "
        "template; keeping the current one; tokenizer ready"
    )


def test_diff_against_a_modified_template(page: Page) -> None:
    page.click(".tab[data-view=diff]")
    expect(page.locator(".view-tools[data-for=diff]")).to_be_visible()

    # The same template from the library: no difference.
    page.select_option("#compare-library", "chatml")
    expect(page.locator("#compare_template")).to_have_value(contains("<|im_start|>"))
    expect(page.locator("#diff-identical")).to_contain_text("identical")
    expect(page.locator("#diff-unified .delete, #diff-unified .insert")).to_have_count(0)

    page.fill("#compare_template", CHATML.replace("<|im_start|>", "<|start_of_turn|>"))
    stats = page.locator("#diff-stats")
    expect(stats).to_have_text(re.compile(r"\([1-9]\d* characters deleted, [1-9]\d* inserted"))
    unified = page.locator("#diff-unified")
    expect(unified.locator(".delete").first).to_be_visible()
    expect(unified.locator(".insert").first).to_be_visible()
    assert set(unified.locator(".delete").all_text_contents()) == {"im_"}
    assert set(unified.locator(".insert").all_text_contents()) == {"_of_turn"}
    assert "<|start_of_turn|>user" in unified.text_content()
    page.check("#diff-layouts input[value=side]")
    expect(page.locator("#diff-side .cell").first).to_be_visible()
    assert page.locator("#diff-side .cell").count() % 2 == 0
    assert "<|start_of_turn|>user" in page.locator("#diff-side").text_content()

    # A broken compared template is reported as such, not as a diff.
    page.fill("#compare_template", "{% if %}")
    expect(page.locator("#view-diff .problem")).to_contain_text("in the compared template")
    expect(page.locator("#diff-stats")).to_have_count(0)


def test_share_link_reopens_the_same_state(page: Page, new_page: Callable[[], Page]) -> None:
    template = (
        "Today is {{ strftime_now('%d %b %Y') }}.\n"
        "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
    )
    set_template(page, template)
    page.locator("#message-editor .message").nth(1).locator("textarea").first.fill("Shared?")
    page.fill("#now", "2024-07-26T10:00:30")
    page.click(".tab[data-view=command]")
    expected = "Today is 26 Jul 2024.\n[system] You are a helpful assistant.\n[user] Shared?\n"
    expect(page.locator("#prompt-raw")).to_have_value(expected)
    expect(page.locator("#char-count")).to_have_text(f"{len(expected)} characters")
    pinned = page.locator("#view-prompt p.facts")
    expect(pinned).to_contain_text(re.compile(r"clock pinned.* at 2024-07-26T10:00:30"))

    page.click("#share-button")
    share = page.locator("#share-url")
    expect(share).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/s/[0-9a-f]{24}$"))
    url = share.input_value()

    other = new_page()  # a new context: nothing carried over but the link
    response = other.goto(url)
    assert response is not None and response.status == 200
    expect(other.locator(".cm-editor")).to_be_visible()
    assert other.evaluate("window.playground.editor.getValue()") == template
    expect(other.locator("#prompt-raw")).to_have_value(expected)
    expect(other.locator("#char-count")).to_have_text(f"{len(expected)} characters")
    expect(other.locator("#now")).to_have_value("2024-07-26T10:00:30")
    expect(other.locator(".tab.active")).to_have_attribute("data-view", "command")
    expect(other.locator("#outputs")).to_have_class(re.compile(r"\bview-command\b"))
    assert json.loads(other.locator("#messages").input_value())[1]["content"] == "Shared?"

    stored = other.context.request.get(url + ".json")
    assert stored.ok
    state = stored.json()
    assert state["template"] == template
    assert state["now"].startswith("2024-07-26T10:00:30")
    assert state["messages"][1] == {"role": "user", "content": "Shared?"}
    assert state["view"] == "command"

    # The same state shares to the same link.
    page.eval_on_selector("#share-url", "box => { box.value = ''; }")
    page.click("#share-button")
    expect(share).to_have_value(url)


@needs_shared
def test_user_input_is_never_markup(page: Page) -> None:
    response = page.request.get("/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"

    upload_gguf(page, LLAMA_VOCAB)  # so the Tokens view shows the payloads too
    literal = " ".join(XSS_PAYLOADS)
    template = (
        "{{ bos_token }}" + literal + "\n"
        "{% for m in messages %}{{ m.content }}\n{% endfor %}"
        "{{ payload }}{{ eos_token }}"
    )
    set_template(page, template)
    show_raw_messages(page)
    # Payloads as role names too: the message editor writes them as <option> text.
    page.fill("#messages", json.dumps([{"role": p, "content": p} for p in XSS_PAYLOADS]))
    page.fill("#kwargs", json.dumps({"payload": literal}))
    page.fill(
        "#special_tokens",
        json.dumps({"bos_token": XSS_PAYLOADS[0], "eos_token": XSS_PAYLOADS[2]}),
    )
    expected = (
        XSS_PAYLOADS[0]
        + literal
        + "\n"
        + "\n".join(XSS_PAYLOADS)
        + "\n"
        + literal
        + XSS_PAYLOADS[2]
    )
    expect(page.locator("#prompt-raw")).to_have_value(expected)
    assert page.locator("#prompt").text_content() == expected
    expect(page.locator("#prompt .seg-special").first).to_be_visible()
    # The structured editor shows the payloads as text too.
    expect(page.locator("#message-editor textarea").first).to_have_value(XSS_PAYLOADS[0])
    expect(page.locator("#message-editor select").first).to_have_value(XSS_PAYLOADS[0])

    page.click(".tab[data-view=tokens]")
    expect(page.locator("#tokens span.tok").first).to_be_visible()
    assert page.locator("#tokens").text_content() == expected

    # A template error whose message is the payload.
    page.click(".tab[data-view=prompt]")
    set_template(page, "{{ raise_exception(payload) }}")
    expect(page.locator("#problem .problem-message")).to_have_text(literal)

    # A compared template that prints the payload.
    set_template(page, template)
    page.click(".tab[data-view=diff]")
    page.fill("#compare_template", literal + "{{ payload }}")
    expect(page.locator("#diff-stats")).to_be_visible()
    assert literal in page.locator("#diff-unified").text_content()

    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator("#output img, #output script").count() == 0
    assert page.locator("#message-editor img, #message-editor script").count() == 0


def test_out_of_date_answers_never_overwrite_newer_ones(page: Page) -> None:
    renders = watch_requests(page, "/fragments/output")
    # Nine edits within ~100 ms.
    page.evaluate(
        """() => new Promise(done => {
            for (let i = 1; i <= 9; i++) setTimeout(() => {
                window.playground.setTemplate("A" + i);
                if (i === 9) done();
            }, i * 12);
        })"""
    )
    expect(page.locator("#prompt-raw")).to_have_value("A9")
    # Nine edits slow enough that each one sends its own request.
    page.evaluate(
        """() => new Promise(done => {
            for (let i = 1; i <= 9; i++) setTimeout(() => {
                window.playground.setTemplate("B" + i);
                if (i === 9) done();
            }, i * 170);
        })"""
    )
    expect(page.locator("#prompt-raw")).to_have_value("B9")
    page.wait_for_timeout(1000)
    assert prompt(page) == "B9"
    assert len(renders) >= 5

    # An answer numbered like the shown one is swapped in; an older one never is.
    swap = """([seq, template]) => htmx.ajax("POST", "/fragments/output", {
        source: "#output", target: "#output", swap: "outerHTML",
        values: {seq: String(seq), template: template}})"""
    shown = int(page.locator("#output").get_attribute("data-seq"))
    assert shown > 1
    page.evaluate(swap, [shown, "CURRENT"])
    expect(page.locator("#prompt-raw")).to_have_value("CURRENT")
    page.evaluate(swap, [1, "STALE"])
    page.wait_for_timeout(300)
    assert prompt(page) == "CURRENT"
    # The page still follows the editor afterwards.
    set_template(page, "C1")
    expect(page.locator("#prompt-raw")).to_have_value("C1")


def test_whitespace_toggle_is_local(page: Page) -> None:
    output = page.locator("#outputs")
    toggle = page.locator("#show-whitespace")
    expect(toggle).to_be_checked()
    expect(output).to_have_class(re.compile(r"\bshow-ws\b"))
    expect(page.locator("#prompt .seg-newline").first).to_be_attached()

    renders = watch_requests(page, "/fragments/output")
    toggle.uncheck()
    expect(output).not_to_have_class(re.compile(r"\bshow-ws\b"))
    # Tabs whose content is already rendered are local too (Analysis and Command compute
    # when opened, and are tested in test_analysis_view.py).
    page.click(".tab[data-view=tokens]")
    page.click(".tab[data-view=diff]")
    page.click(".tab[data-view=prompt]")
    page.wait_for_timeout(500)  # longer than the form's 150 ms input delay
    assert renders == []

    # A re-render keeps the reader's choice.
    set_template(page, "x y")
    expect(page.locator("#prompt-raw")).to_have_value("x y")
    expect(output).not_to_have_class(re.compile(r"\bshow-ws\b"))
    toggle.check()
    expect(output).to_have_class(re.compile(r"\bshow-ws\b"))
    expect(page.locator("#prompt .seg-space")).to_have_count(1)
    assert len(renders) == 1


def test_pasting_an_openai_request_body_loads_messages_tools_and_kwargs(page: Page) -> None:
    show_raw_messages(page)
    body = {
        "model": "any",
        "messages": [{"role": "user", "content": "From a request body"}],
        "tools": [{"type": "function", "function": {"name": "lookup"}}],
        "chat_template_kwargs": {"enable_thinking": False},
    }
    page.fill("#messages", json.dumps(body))
    expect(page.locator("#prompt-raw")).to_have_value(contains("From a request body"))
    assert messages_json(page) == body["messages"]
    assert json.loads(page.locator("#tools").input_value()) == body["tools"]
    assert json.loads(page.locator("#kwargs").input_value()) == {"enable_thinking": False}
