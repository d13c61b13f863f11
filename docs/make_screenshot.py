"""Make docs/screenshot.png: the playground tokenizing a tool-calling conversation.

    python docs/make_screenshot.py [OUTPUT.png]

Starts gunicorn as the tests do (one worker, a throwaway data folder), drives Debian's
Chromium (`/usr/bin/chromium`, or `PLAYGROUND_CHROMIUM`) with Playwright, loads the
llama SentencePiece test vocabulary from llama.cpp as a GGUF upload, writes the
Hermes-style tool-calling template of `docs/tool_calling.jinja`, tools and a
conversation with a tool call and its result, opens the Tokens tab and saves the page
at 1440x900, the width the browser tests check.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from playwright.sync_api import expect, sync_playwright  # noqa: E402

from tests.support.chromium import CHROMIUM_ARGS  # noqa: E402
from tests.support.server import start_gunicorn  # noqa: E402
from tests.support.shared_data import VOCAB_DIR  # noqa: E402

VOCAB = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
OUTPUT = REPO / "docs" / "screenshot.png"

#: A Hermes / Qwen style tool-calling template, with a BOS token as Hermes 2 Pro has.
#: (Its leading comment is left out of the editor.)
TEMPLATE = re.sub(
    r"\A\{#.*?#\}\n", "", (REPO / "docs" / "tool_calling.jinja").read_text(), flags=re.S
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What's the weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 18, "sky": "cloudy"}'},
]


def chromium_path() -> str:
    path = os.environ.get("PLAYGROUND_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        sys.exit(f"no Chromium at {path}: install Debian's chromium or set PLAYGROUND_CHROMIUM")
    return path


def main(output: Path) -> None:
    server = start_gunicorn({"PLAYGROUND_WORKERS": "1", "PLAYGROUND_THREADS": "4"})
    errors: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS
            )
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(15_000)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.goto(server.url + "/")
            expect(page.locator(".cm-editor")).to_be_visible()

            page.set_input_files("#gguf-file", str(VOCAB))
            expect(page.locator("#source-arch")).to_have_text("llama")
            expect(page.locator("#upload-message")).to_contain_text(f"Loaded {VOCAB.name}")

            page.evaluate("text => window.playground.setTemplate(text)", TEMPLATE)
            page.click("#conversation-panel details.tools summary")
            page.fill("#tools", json.dumps(TOOLS, indent=2))
            page.click("#toggle-raw")
            page.fill("#messages", json.dumps(MESSAGES, indent=2))
            page.click("#toggle-raw")  # back to the structured editor
            page.check("#add_generation_prompt")

            page.click(".tab[data-view=tokens]")
            raw = page.locator("#prompt-raw")
            last_turn = re.compile(r"</tool_response><\|im_end\|>\n<\|im_start\|>assistant\n$")
            expect(raw).to_have_value(last_turn)
            expect(raw).to_have_value(re.compile(r'<tool_call>\n\{"name": "get_weather"'))
            expect(page.locator("#tokens span.tok.special").first).to_be_visible()
            count = page.locator("#tokens span.tok").count()
            expect(page.locator("#token-count")).to_have_text(f"{count} tokens")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(output))
            browser.close()
    finally:
        server.process.terminate()
        server.process.wait(timeout=30)
    if errors:
        sys.exit("errors in the page:\n" + "\n".join(errors))
    print(f"wrote {output} ({count} tokens)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT)
