"""Benchmark the page's live loop in a real browser: `python -m bench.page`.

Keystroke to updated output, p50/p95 over `--edits` edits, in Debian's Chromium driven
by Playwright against gunicorn, for the goals of the page (docs/developing.md, Benchmarks):

- a small prompt with a synthetic 150k-token vocabulary loaded: p95 <= 100 ms beyond the
  150 ms debounce;
- a 200-message conversation, typing in the last message: p95 <= 300 ms beyond it;
- a 50k-token prompt in the Prompt view and in the Tokens view: p95 <= 500 ms beyond it;
- the first paint of a 50k-token Tokens view (a share link opened): <= 500 ms.

"Updated" is two frames after the new output is swapped in, so layout, paint and what
the page draws right after the swap count. `--repo OTHER_CHECKOUT` serves another
checkout's code (read only) with the same browser steps, for before/after figures; that
checkout needs its own npm assets (docs/developing.md, Benchmarks). `--vocab FILE.gguf` loads a real
vocabulary instead of the synthetic one, and `--words N` sizes the long prompt for it.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from playwright import sync_api

from tests.support.chromium import CHROMIUM_ARGS, find_chromium
from tests.support.page_data import (
    FIRST_PAINT,
    PROBE,
    long_conversation,
    many_messages,
    synthetic_vocab,
)
from tests.support.server import Server, running

#: The form's `delay:` before it sends an edit (page.html).
DEBOUNCE_MS = 150
#: Words of prose that make about 50k tokens in the synthetic vocabulary.
WORDS_50K = 38_300

Page = sync_api.Page


def p95(values: list[float]) -> float:
    """The nearest-rank 95th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def ready(page: Page) -> None:
    page.goto("/")
    sync_api.expect(page.locator("#prompt-raw")).to_have_count(1)
    page.wait_for_function("() => Boolean(window.playground && window.playground.editor)")


def upload(page: Page, vocab: Path) -> None:
    """Load the vocabulary as a user does, and wait for the output rendered with it (the
    tokens themselves, only where the Tokens or Diff view is open)."""
    page.set_input_files("#gguf-file", str(vocab))
    sync_api.expect(page.locator("#source-file")).to_have_text(vocab.name, timeout=120_000)
    rendered = page.locator("#token-count, #tokens-later")
    sync_api.expect(rendered).to_have_count(1, timeout=120_000)


def set_messages(page: Page, messages: list[dict], timeout_ms: float) -> None:
    """Paste the conversation into the raw JSON, as a user can, and wait for its prompt."""
    if page.locator("#raw-messages").is_hidden():
        page.click("#toggle-raw")
    page.fill("#messages", json.dumps(messages))
    tail = messages[-1]["content"][-40:]
    page.wait_for_function(
        "tail => (document.getElementById('prompt-raw') || {value: ''}).value.includes(tail)",
        arg=tail,
        timeout=timeout_ms,
    )


#: The template editor's text: CodeMirror 6's, or CodeMirror 5's in a checkout older than
#: issue 25 (`--repo`), so that one run can measure both.
EDITOR = ".cm-editor .cm-content, .CodeMirror"


def in_template(page: Page) -> None:
    """Put the cursor at the end of the template: each key typed adds to the prompt."""
    page.click(EDITOR)
    page.keyboard.press("Control+End")


def in_last_message(page: Page) -> None:
    """Put the cursor at the end of the last message's text."""
    field = page.locator("#message-editor textarea").last
    field.click()
    page.keyboard.press("Control+End")


#: The phases of one update, as the probe records them: (name, from, to).
PHASES = (
    ("debounce", "start", "sent"),
    ("server+transfer", "sent", "received"),
    ("swap", "received", "swapped"),
    ("draw", "swapped", "end"),
)


def timed(page: Page, act: Callable[[], None], timeout_ms: float) -> dict[str, float]:
    """`act` (a key, a click), then wait for the updated output: its probe's times."""
    act()
    page.wait_for_function("() => window.__probe.end > 0", timeout=timeout_ms, polling=20)
    return page.evaluate("({...window.__probe})")


def edits(page: Page, count: int, timeout_ms: float) -> list[dict[str, float]]:
    """The probe's times for `count` keys typed, one update each."""
    page.evaluate(PROBE)
    runs = []
    for _ in range(count):
        runs.append(timed(page, lambda: page.keyboard.press("x"), timeout_ms))
        page.wait_for_timeout(50)
    return runs


def tab_opens(page: Page, view: str, count: int, timeout_ms: float) -> list[dict[str, float]]:
    """The probe's times for opening the `view` tab `count` times: each time from the
    Prompt tab after an edit there, so the view's data is not on the page yet."""
    page.evaluate(PROBE)
    runs = []
    for _ in range(count):
        page.click(".tab[data-view=prompt]")
        in_template(page)
        timed(page, lambda: page.keyboard.press("x"), timeout_ms)
        runs.append(timed(page, lambda: page.click(f".tab[data-view={view}]"), timeout_ms))
        page.wait_for_timeout(50)
    return runs


def totals(runs: list[dict[str, float]]) -> list[float]:
    return [run["end"] - run["start"] for run in runs]


def phases(runs: list[dict[str, float]]) -> None:
    """Where the time of the median update goes: each phase's median, and the answer's size."""
    parts = [
        f"{name} {statistics.median(run[to] - run[since] for run in runs):.0f}"
        for name, since, to in PHASES
        if all(run[since] and run[to] for run in runs)
    ]
    size = statistics.median(run["bytes"] for run in runs) / 1000
    print(f"    medians (ms): {', '.join(parts)}; answer {size:,.0f} kB", flush=True)


def pastes(page: Page, conversations: list[list[dict]], timeout_ms: float) -> list[float]:
    """Milliseconds from pasting each conversation into the raw JSON to its prompt shown."""
    times = []
    for messages in conversations:
        started = page.evaluate("performance.now()")
        set_messages(page, messages, timeout_ms)
        times.append(page.evaluate("performance.now()") - started)
    return times


def first_paint(page: Page, runs: int, timeout_ms: float) -> list[float]:
    """Milliseconds from navigation to two frames after load, for the shared Tokens view."""
    page.click("#share-button")
    page.wait_for_function("() => document.getElementById('share-url').value.includes('/s/')")
    url = page.locator("#share-url").input_value()
    # The editing page leaves: a render of its own still asked (a retry after a busy
    # answer) would take this client's one heavy slot while the link opens (503).
    page.goto("about:blank")
    times = []
    for _ in range(runs):
        # A new tab each time, as a link is opened (the browser's cache kept): going to
        # the same address again in one tab keeps its history entry, whose saved state
        # the page would restore and render again.
        opened = page.context.new_page()
        opened.goto(url, wait_until="load", timeout=timeout_ms)
        times.append(opened.evaluate(FIRST_PAINT))
        sync_api.expect(opened.locator("#token-count")).to_have_count(1, timeout=timeout_ms)
        opened.close()
    return times


def report(name: str, times: list[float], goal: float, net: bool = True, since: str = "") -> None:
    """One line: p50 and p95 (less the debounce when `net`, else from `since`) against
    the goal."""
    less = DEBOUNCE_MS if net else 0
    p50, top = statistics.median(times) - less, p95(times) - less
    verdict = "meets" if top <= goal else "misses"
    what = "beyond the debounce" if net else f"from {since or 'navigation'}"
    print(
        f"{name:<34} p50 {p50:8.0f} ms  p95 {top:8.0f} ms  ({what}; goal p95 <= {goal:.0f} ms:"
        f" {verdict}; n={len(times)})",
        flush=True,
    )


def scenarios(page: Page, vocab: Path, args: argparse.Namespace) -> None:
    """Every scenario, on one page per scenario."""
    timeout = args.timeout * 1000

    def fresh() -> Page:
        new = page.context.browser.new_context(base_url=args.base_url).new_page()
        new.set_default_timeout(timeout)
        new.set_viewport_size({"width": 1400, "height": 1000})
        ready(new)
        return new

    run: dict[str, Callable[[], None]] = {}

    def small() -> None:
        p = fresh()
        upload(p, vocab)
        in_template(p)
        runs = edits(p, args.edits, timeout)
        report("small prompt, 150k vocabulary", totals(runs), 100)
        phases(runs)
        p.close()

    def messages() -> None:
        p = fresh()
        set_messages(p, many_messages(200), timeout)
        sync_api.expect(p.locator("#message-editor textarea").last).to_be_visible()
        in_last_message(p)
        runs = edits(p, args.edits, timeout)
        report("200 messages", totals(runs), 300)
        phases(runs)
        p.close()

    def long() -> None:
        p = fresh()
        upload(p, vocab)
        conversations = [long_conversation(args.words, turns=20, seed=k) for k in range(4)]
        pasted = pastes(p, conversations, timeout)
        report("50k tokens, paste to first render", pasted, 1000, net=False, since="the paste")
        in_template(p)
        runs = edits(p, args.edits, timeout)
        report("50k tokens, Prompt view", totals(runs), 500)
        phases(runs)
        opened = tab_opens(p, "tokens", max(3, args.edits // 4), timeout)
        report("50k tokens, opening Tokens", totals(opened), 1000, net=False, since="the click")
        phases(opened)
        p.click(".tab[data-view=tokens]")
        sync_api.expect(p.locator("#tokens .tok").first).to_be_visible()
        count = p.locator("#token-count").inner_text()
        print(
            f"  (the long prompt: {count}, {len(p.locator('#prompt-raw').input_value()):,} chars)"
        )
        in_template(p)
        runs = edits(p, args.edits, timeout)
        report("50k tokens, Tokens view", totals(runs), 500)
        phases(runs)
        report("50k tokens, Tokens first paint", first_paint(p, 5, timeout), 500, net=False)
        p.close()

    run.update(small=small, messages=messages, long=long)
    for name in args.only or list(run):
        run[name]()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=20, help="keys typed per scenario")
    parser.add_argument("--timeout", type=float, default=120, help="seconds one edit may take")
    parser.add_argument("--repo", help="serve this checkout's code instead (read only)")
    parser.add_argument("--only", nargs="*", choices=["small", "messages", "long"])
    parser.add_argument(
        "--vocab", type=Path, help="a GGUF to load instead of the synthetic 150k vocabulary"
    )
    parser.add_argument(
        "--words", type=int, default=WORDS_50K, help="words of prose in the long prompt"
    )
    args = parser.parse_args()
    print(f"bench.page: {args.edits} edits per scenario, serving {args.repo or 'this checkout'}")
    with tempfile.TemporaryDirectory() as folder:
        vocab = args.vocab or synthetic_vocab(Path(folder) / "synthetic-150k.gguf")
        env = {"PLAYGROUND_WORKERS": "1", "PLAYGROUND_THREADS": "4", "PYTHONDONTWRITEBYTECODE": "1"}
        with (
            running(Server(env, repo=args.repo)) as server,
            sync_api.sync_playwright() as playwright,
        ):
            args.base_url = server.url
            browser = playwright.chromium.launch(
                executable_path=find_chromium(), args=CHROMIUM_ARGS
            )
            page = browser.new_page()
            try:
                scenarios(page, vocab, args)
            finally:
                browser.close()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
