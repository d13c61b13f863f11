"""axe-core (pinned in package-lock.json) on every view, at 1440 px and on a phone.

A page must show no critical, serious or moderate violation (minor ones are counted,
not failed). axe injects styles while it checks, which the page's CSP forbids; these
tests alone open the page with CSP bypassed (every other browser test keeps it, so the
page's own code is still held to it).

With real content, the test prints each view's count of elements in violation by
impact, at each width, with and without a template error (`-s` shows it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import compare_with
from tests.browser.library import load_library
from tests.support import REPO
from tests.support.shared_data import VOCAB_DIR, needs_shared

pytestmark = pytest.mark.browser

#: axe-core as npm installs it (`./playground` runs `npm ci`).
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
#: axe's impacts, worst first; all but the last fail a test.
IMPACTS = ("critical", "serious", "moderate", "minor")
FAILING = IMPACTS[:3]
WIDTHS = [1440, 390]

#: Each view, and what shows it has been drawn (Analysis and Command render on opening).
VIEWS = {
    "prompt": "#prompt",
    "tokens": "#view-tokens .empty",
    "diff": "#diff-unified",
    "analysis": "#capabilities",
    "response": "#responses",
    "command": "#commands",
}


def axe(page: Page, within: str | None = None) -> list[dict]:
    """Every axe violation on the page as it is shown now (only inside the elements
    `within` selects, when given): one per rule, with its impact and elements."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(
        "async (within) => (await axe.run(within ? {include: [within]} : document,"
        " {resultTypes: ['violations']})).violations",
        within,
    )


def failing(found: list[dict]) -> list[str]:
    """The critical, serious and moderate violations of `found`, in words."""
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:5]}"
        for v in found
        if v["impact"] in FAILING
    ]


def violations(page: Page, within: str | None = None) -> list[str]:
    """The critical, serious and moderate axe violations on the page as it is shown now."""
    return failing(axe(page, within))


def counts(found: list[dict]) -> dict[str, int]:
    """Elements in violation by impact (an element breaking two rules counts twice)."""
    return {
        impact: sum(len(v["nodes"]) for v in found if v["impact"] == impact) for impact in IMPACTS
    }


def table(width: int, found: dict[str, list[dict]]) -> str:
    """One line per view: its counts by impact."""
    lines = [f"axe at {width} px: elements in violation by impact"]
    lines.append(f"{'view':<20}" + "".join(f"{impact:>10}" for impact in IMPACTS))
    for view, violations_found in found.items():
        row = counts(violations_found)
        lines.append(f"{view:<20}" + "".join(f"{row[impact]:>10}" for impact in IMPACTS))
    return "\n".join(lines)


def open_page(new_page: Callable[..., Page], width: int) -> Page:
    page = new_page(viewport={"width": width, "height": 900}, bypass_csp=True)
    page.goto("/")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("im_start"))
    return page


def show(page: Page, view: str, drawn: str) -> None:
    """Open a view (on a phone, the Output pane first) and wait until it is drawn."""
    output = page.locator('.pane-button[data-pane="outputs"]')
    if output.is_visible():
        output.click()
    page.click(f"#tab-{view}")
    expect(page.locator(drawn).first).to_be_visible()


@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is missing: run ./playground (npm ci)")
@pytest.mark.parametrize("width", WIDTHS)
def test_no_serious_violations_on_any_view(new_page: Callable[..., Page], width: int) -> None:
    page = open_page(new_page, width)
    found = {"editors": violations(page)}
    show(page, "diff", "#compare_template")
    compare_with(page, "{{ messages[0].content }}")  # so the Diff has content
    expect(page.locator("#diff-unified")).to_be_visible()
    for view, drawn in VIEWS.items():
        show(page, view, drawn)
        found[view] = violations(page)
    assert not any(found.values()), "\n".join(f"{k}: {v}" for k, v in found.items() if v)


@needs_shared
@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is missing: run ./playground (npm ci)")
@pytest.mark.parametrize("width", WIDTHS)
def test_no_serious_violations_in_tokens_with_a_vocabulary(
    new_page: Callable[..., Page], width: int
) -> None:
    page = open_page(new_page, width)
    vocab = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
    page.set_input_files("#gguf-file", str(vocab))
    expect(page.locator("#source-file")).to_have_text(vocab.name, timeout=30_000)
    show(page, "tokens", "#tokens .tok")
    assert not violations(page)


@needs_shared
@pytest.mark.skipif(not AXE.is_file(), reason="axe-core is missing: run ./playground (npm ci)")
@pytest.mark.parametrize("width", WIDTHS)
def test_no_serious_violations_with_real_content(new_page: Callable[..., Page], width: int) -> None:
    # A long real template, a vocabulary, a multi-message tool conversation, every view,
    # then the error state with the last good output kept stale.
    page = open_page(new_page, width)
    vocab = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
    page.set_input_files("#gguf-file", str(vocab))
    expect(page.locator("#source-file")).to_have_text(vocab.name, timeout=30_000)
    edit = page.locator('.pane-button[data-pane="inputs"]')
    if edit.is_visible():
        edit.click()
    load_library(page, "qwen3")
    page.select_option("#example-select", "parallel-tools")
    page.click("#example-load")
    expect(page.locator("#prompt-raw")).to_have_value(re.compile("get_local_time"))
    found = {"editors": axe(page)}
    show(page, "diff", "#compare_template")
    compare_with(page, "{{ messages[0].content }}")  # so the Diff has content
    drawn = {**VIEWS, "tokens": "#tokens .tok", "response": "#responses"}
    for view, shown in drawn.items():
        show(page, view, shown)
        page.wait_for_timeout(300)
        found[view] = axe(page)
    # The error state: every view keeps its last good output, marked stale.
    if edit.is_visible():
        edit.click()
    page.evaluate("text => window.playground.setTemplate(text)", "{% if %}")
    expect(page.locator("#problem")).to_have_count(1)
    expect(page.locator(".cm-lintRange-error").first).to_be_visible()
    found["error, editors"] = axe(page)
    for view in VIEWS:
        show(page, view, f"#view-{view} .stale")
        expect(page.locator("#problem")).to_be_visible()
        page.wait_for_timeout(300)
        found[f"error, {view}"] = axe(page)
    print("\n" + table(width, found))
    problems = {view: failing(v) for view, v in found.items()}
    assert not any(problems.values()), "\n".join(f"{k}: {v}" for k, v in problems.items() if v)
