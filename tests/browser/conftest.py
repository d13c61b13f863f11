"""Fixtures for the browser tests: one gunicorn, one Chromium, a fresh page per test.

Chromium is Debian's (`/usr/bin/chromium`), driven by Playwright's
sync API; Playwright downloads no browser. Every page fails its test on an uncaught
script error or a console error (a CSP violation, a failed request, ...) unless the test
allowed that message with `page_errors.allow(pattern)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from tests.support.chromium import CHROMIUM_ARGS, find_chromium
from tests.support.page_data import synthetic_vocab
from tests.support.server import Server, start_gunicorn

Browser = sync_api.Browser
BrowserContext = sync_api.BrowserContext
Page = sync_api.Page

#: How long `expect(...)` and page actions wait before failing: a CI machine running
#: the suite on both cores beside the servers took more than 10 s for a render twice.
TIMEOUT_MS = 20_000

sync_api.expect.set_options(timeout=TIMEOUT_MS)


def chromium_path() -> str:
    """Debian's Chromium, which `./playground test` installs when it is missing."""
    found = find_chromium()
    if found is None:
        pytest.fail("no Chromium: `./playground test` installs Debian's chromium package")
    return found


@pytest.fixture(scope="session")
def browser_server() -> Iterator[Server]:
    """The playground under gunicorn, as `./playground serve` runs it (one worker).

    Every test's pages come from one address, so the per-client concurrency is lifted:
    with it, requests a finished test left running (renders its page had asked for, which
    the server completes after the page closed) counted against the next test's first
    page load, and a busy machine turned that into a 429 page. The limit itself is kept
    where a page is tested against it (test_model_box's server, test_busy_server). For
    the same reason no sandbox is kept for known clients, and a render may wait 10 s for
    one: on CI's busy machine a 1 s wait ran out and the page's retry came after the
    test's own wait (the page's retry after a refusal is test_busy_server's).
    """
    server = start_gunicorn(
        {
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_THREADS": "4",
            "PLAYGROUND_CLIENT_CONCURRENCY": "0",
            "PLAYGROUND_KNOWN_SLOTS": "0",
            "PLAYGROUND_QUEUE_SECONDS": "10",
        }
    )
    yield server
    server.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class PageErrors:
    """Script errors and console errors of every page a test opened."""

    messages: list[str] = field(default_factory=list)
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        """Expect console errors matching `pattern` (a regex) in this test."""
        self.allowed.append(re.compile(pattern))

    def console(self, message: sync_api.ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location.get("url") or "?"
            self.messages.append(f"console error: {message.text} at {where}")

    def unexpected(self) -> list[str]:
        return [m for m in self.messages if not any(p.search(m) for p in self.allowed)]


@pytest.fixture()
def page_errors() -> PageErrors:
    return PageErrors()


@pytest.fixture()
def new_page(
    browser: Browser, browser_server: Server, page_errors: PageErrors
) -> Iterator[Callable[..., Page]]:
    """Open a page in a new browser context (fresh storage), watched for errors.

    Keyword arguments go to `browser.new_context` (`viewport`, `bypass_csp`, ...).
    """
    contexts: list[BrowserContext] = []

    def open_page(**options: Any) -> Page:
        defaults = {"base_url": browser_server.url, "viewport": {"width": 1400, "height": 1000}}
        context = browser.new_context(**{**defaults, **options})
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: page_errors.messages.append(f"pageerror: {error}"))
        page.on("console", page_errors.console)
        return page

    yield open_page
    for context in contexts:
        context.close()
    unexpected = page_errors.unexpected()
    assert not unexpected, "errors in the page:\n" + "\n".join(unexpected)


@pytest.fixture()
def page(new_page: Callable[[], Page]) -> Page:
    """The playground's page, loaded and rendered."""
    opened = new_page()
    opened.goto("/")
    sync_api.expect(opened.locator("#prompt-raw")).to_have_value(re.compile("<\\|im_start\\|>"))
    sync_api.expect(opened.locator(".cm-editor")).to_be_visible()
    assert opened.evaluate("Boolean(window.playground && window.playground.editor)")
    return opened


@pytest.fixture(scope="module")
def small_vocab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthetic SentencePiece vocabulary, small enough to build in a moment."""
    return synthetic_vocab(tmp_path_factory.mktemp("vocab") / "synthetic.gguf", 4000)


def load_vocab(page: Page, vocab: Path) -> None:
    """Upload `vocab` as a user does, and wait for the output rendered with it (the
    tokens themselves, only where the Tokens or Diff view is open)."""
    page.set_input_files("#gguf-file", str(vocab))
    rendered = page.locator("#token-count, #tokens-later")
    sync_api.expect(rendered).to_have_count(1, timeout=30_000)


def compare_with(page: Page, template: str) -> None:
    """Set the second template with one input event and no focus: `fill` leaves the field
    focused, and its change event on leaving starts a second render, whose late answer
    can switch the view back (issue 13, bug 1)."""
    page.locator("#compare_template").evaluate(
        "(field, text) => { field.value = text;"
        " field.dispatchEvent(new Event('input', {bubbles: true})); }",
        template,
    )
