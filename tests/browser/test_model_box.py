"""The Model box: a repository by id, a Hub URL with its GGUF file picker, and a GGUF
URL, each loaded, shown with its provenance and shared. A local server with the Hub's
URL layout stands in for the Hub (`PLAYGROUND_HF_ENDPOINT`), and a loopback file server
for the GGUF host (`PLAYGROUND_URL_ALLOW_PRIVATE=1`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_uploads import record_upload_messages
from tests.support.fake_hub import FakeHub, RangeHost, Repo
from tests.support.remote_fixtures import gguf_file, transformers_repo, write_files
from tests.support.server import Server, start_gunicorn

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Iterator[FakeHub]:
    root = tmp_path_factory.mktemp("page-hub")
    server = FakeHub()
    gguf = root / "gguf"
    gguf_file(gguf / "Tiny-Q2_K.gguf", "Tiny Q2_K")
    gguf_file(gguf / "Tiny-Q4_K_M.gguf", "Tiny Q4_K_M")
    gguf_file(gguf / "Tiny-Q8_0.gguf", "Tiny Q8_0")
    write_files(gguf, {"README.md": "GGUF"})
    server.repos = {
        "org/templates": Repo(transformers_repo(root / "templates")),
        "org/Tiny-GGUF": Repo(gguf),
        "org/slow": Repo(transformers_repo(root / "slow"), delay=1.0),
        # Its files name no model (no `name_or_path`): only the repository says gpt-oss.
        "openai/gpt-oss-20b": Repo(transformers_repo(root / "gpt-oss")),
    }
    yield server
    server.close()


@pytest.fixture(scope="module")
def gguf_host(tmp_path_factory) -> Iterator[RangeHost]:
    host = RangeHost()
    host.files["/files/loose.gguf"] = gguf_file(
        tmp_path_factory.mktemp("page-url") / "loose.gguf", "Loose model", size=2 * 10**9
    )
    yield host
    host.close()


@pytest.fixture(scope="module")
def browser_server(hub: FakeHub) -> Iterator[Server]:
    """The playground reading its Hub from the fake one (overrides the session's)."""
    server = start_gunicorn(
        {
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_THREADS": "4",
            "PLAYGROUND_HF_ENDPOINT": hub.url,
            "PLAYGROUND_URL_ALLOW_PRIVATE": "1",
        }
    )
    yield server
    server.close()


def load_model(page: Page, text: str) -> None:
    page.fill("#model-ref", text)
    page.press("#model-ref", "Enter")


def share(page: Page, new_page: Callable[[], Page]) -> Page:
    """Share the state, and open the link in a new page."""
    page.click("#share-button")
    expect(page.locator("#share-url")).to_have_value(re.compile(r"/s/[0-9a-f]{24}$"))
    shared = new_page()
    shared.goto(page.locator("#share-url").input_value())
    expect(shared.locator(".cm-editor")).to_be_visible()
    return shared


def test_a_repo_by_id_loads_shows_its_commit_and_is_shared(
    page: Page, hub: FakeHub, new_page
) -> None:
    sha = hub.repos["org/templates"].sha
    load_model(page, "org/templates")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^JINJA <s>"))
    provenance = page.locator("#source-provenance")
    expect(provenance).to_contain_text("org/templates")
    expect(provenance).to_contain_text(sha[:12])
    expect(page.locator(".template-tab")).to_have_count(2)
    expect(page.locator('.template-tab[data-template-name="tool_use"]')).to_be_visible()
    expect(page.locator("#upload-message")).to_contain_text(sha[:12])

    shared = share(page, new_page)
    expect(shared.locator("#prompt-raw")).to_have_value(re.compile(r"^JINJA <s>"))
    expect(shared.locator("#source-provenance")).to_contain_text(sha[:12])
    link = shared.locator("#source-provenance a")
    expect(link).to_have_attribute("href", f"{hub.url}/org/templates/tree/{sha}")


def test_the_repository_id_reaches_the_vllm_caveat(page: Page) -> None:
    load_model(page, "openai/gpt-oss-20b")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^JINJA <s>"))
    page.select_option("#engine", "vllm")
    expect(page.locator("#caveats")).to_contain_text("Harmony")


def test_a_hub_url_offers_its_gguf_files_and_reads_the_picked_one(
    page: Page, hub: FakeHub, new_page
) -> None:
    load_model(page, f"{hub.url}/org/Tiny-GGUF")
    options = page.locator("#model-file option")
    expect(options).to_have_count(3)
    expect(options.nth(0)).to_contain_text(re.compile(r"Tiny-Q2_K\.gguf \(\d+(\.\d)? KB\)"))
    expect(page.locator("#model-file")).to_have_value("Tiny-Q4_K_M.gguf")  # a middle one
    record_upload_messages(page)
    with page.expect_response("**/api/sources/hub") as answer:
        page.click("#model-file-load")
    assert answer.value.status == 200
    messages = page.evaluate("window.uploadMessages")
    assert any(re.match(r"Reading the header of Tiny-Q4_K_M\.gguf \(\d", m) for m in messages)
    expect(page.locator("#template-origin")).to_contain_text("Tiny-Q4_K_M.gguf")
    expect(page.locator("#source-provenance")).to_contain_text("org/Tiny-GGUF")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^<s>"))

    shared = share(page, new_page)
    expect(shared.locator("#template-origin")).to_contain_text("Tiny-Q4_K_M.gguf")
    expect(shared.locator("#source-provenance")).to_contain_text("org/Tiny-GGUF")


def test_a_gguf_url_is_read_by_its_header(page: Page, gguf_host: RangeHost, new_page) -> None:
    url = f"{gguf_host.url}/files/loose.gguf"
    with page.expect_response("**/api/sources/url") as answer:
        load_model(page, url)
    assert answer.value.status == 200
    expect(page.locator("#template-origin")).to_contain_text("loose.gguf")
    expect(page.locator("#source-provenance")).to_have_text(url)
    assert gguf_host.bytes_sent() < 8 << 20  # of a 2 GB file

    shared = share(page, new_page)
    expect(shared.locator("#source-provenance")).to_have_text(url)


def test_a_second_load_while_one_is_read_waits_for_it(page: Page, hub: FakeHub) -> None:
    # A client has one remote load at a time (PLAYGROUND_CLIENT_FETCHES): pressing Enter
    # again sent a second, which the server refused with a 429 the page then showed.
    hub.reset()
    load_model(page, "org/slow")
    page.press("#model-ref", "Enter")
    expect(page.locator("#upload-message")).to_contain_text("Still reading org/slow")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile(r"^JINJA <s>"))
    expect(page.locator("#upload-message")).to_contain_text("Loaded org/slow")
    infos = [path for method, path, _ in hub.requests if path.startswith("/api/models/org/slow")]
    assert len(infos) == 1, infos


def test_what_the_box_does_not_recognise_is_explained(page: Page) -> None:
    load_model(page, "not a model")
    expect(page.locator("#upload-message")).to_contain_text("Type a model id (ORG/NAME)")


def test_without_scripts_the_box_is_hidden(new_page) -> None:
    page = new_page(java_script_enabled=False)
    page.goto("/")
    expect(page.locator("#model-box")).to_be_hidden()
