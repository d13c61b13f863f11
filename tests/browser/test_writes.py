"""Writes in a real browser: the page's own uploads pass, another site's posts are refused."""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PageErrors
from tests.support.server import Server

pytestmark = pytest.mark.browser

TEMPLATE = "{% for m in messages %}[{{ m.content }}]{% endfor %}"


def test_hugging_face_files_upload_from_the_page(page: Page, tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": TEMPLATE, "bos_token": "<s>"}))
    with page.expect_response("**/api/sources/hf") as answer:
        page.set_input_files("#hf-files", str(config))
    assert answer.value.status == 200
    assert answer.value.request.headers["content-type"].startswith("multipart/form-data")
    expect(page.locator("#upload-message")).to_contain_text("Loaded tokenizer_config.json")
    expect(page.locator("#special_tokens")).to_have_value(
        json.dumps({"bos_token": "<s>"}, indent=2)
    )


def unique_state() -> dict:
    """A state no one has shared yet."""
    messages = [{"role": "user", "content": secrets.token_hex(8)}]
    return {"template": TEMPLATE, "messages": messages}


class _OtherSite(BaseHTTPRequestHandler):
    """Serves one empty page, for a site that is not the playground."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>Another site</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def other_site(new_page: Callable[[], Page], page_errors: PageErrors) -> Iterator[Page]:
    """A page of another site: a server of its own, on `localhost` (the playground is on
    `127.0.0.1`), so that Chromium lets it reach the loopback address as any site could."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OtherSite)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    page = new_page()
    page.goto(f"http://localhost:{server.server_port}/")
    page_errors.allow("status of 403")
    page_errors.allow(r"status of 404 .* at \S+/favicon\.ico$")  # after a form lands on a 403
    yield page
    server.shutdown()
    server.server_close()


def test_another_sites_fetch_stores_no_share(other_site: Page, browser_server: Server) -> None:
    state = unique_state()
    target = browser_server.url + "/api/shares"
    # A "simple" request: text/plain, no preflight; the browser adds Origin and Sec-Fetch-Site.
    script = "([url, body]) => fetch(url, {method: 'POST', mode: 'no-cors', body})"
    with other_site.expect_response(target) as answer:
        other_site.evaluate(script, [target, json.dumps(state)])
    assert answer.value.status == 403

    status, _, _ = browser_server.send(
        "POST", "/api/shares", json.dumps(state).encode(), {"Content-Type": "application/json"}
    )
    assert status == 201, "the cross-site request stored the share"


def test_another_sites_form_cannot_share(other_site: Page, browser_server: Server) -> None:
    state = unique_state()
    target = browser_server.url + "/fragments/share"
    script = """([url, template, messages]) => {
        const form = document.createElement("form");
        form.method = "post";
        form.action = url;
        for (const [name, value] of [["template", template], ["messages", messages]]) {
            const field = document.createElement("textarea");
            field.name = name;
            field.value = value;
            form.append(field);
        }
        document.body.append(form);
        form.submit();
    }"""
    with other_site.expect_response(target) as answer:
        other_site.evaluate(script, [target, state["template"], json.dumps(state["messages"])])
    assert answer.value.status == 403

    status, _, _ = browser_server.send(
        "POST", "/api/shares", json.dumps(state).encode(), {"Content-Type": "application/json"}
    )
    assert status == 201, "the cross-site form stored the share"
