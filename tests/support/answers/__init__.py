"""The completions the suite and the answer recorders read: the Completion menu's
entries for every shared template, as the product makes them.

`python -m tests.support.answers.write` writes them to `completions.json` beside this file, so
that a recorder running another program (llama.cpp's harness, vLLM's parsers) reads the
same texts the suite checks; `tests/test_answer_menu.py` checks the file is current.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from app.answers.menu import EXAMPLE_TOOLS, KINDS, menu_completion
from app.problems import TemplateProblem
from app.render import engines
from app.render.core import RenderRequest
from tests.support.shared_data import template_files

COMPLETIONS = Path(__file__).with_name("completions.json")
#: The conversation every entry answers, and its clock.
QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
PINNED = datetime(2026, 1, 15, 9, 30)


def menu_request(template: str, special_tokens: dict[str, str]) -> RenderRequest:
    """The request every corpus entry continues (the question, the example tools)."""
    return RenderRequest(
        template=template,
        messages=QUESTION,
        tools=json.loads(json.dumps(EXAMPLE_TOOLS)),
        special_tokens=special_tokens,
        now=PINNED,
    )


def menu_corpus() -> list[dict[str, Any]]:
    """Every template × kind: its completion, or the template's refusal."""
    tokens = {"bos_token": "<s>", "eos_token": "</s>"}
    entries = []
    for path in template_files():
        template = path.read_text(encoding="utf-8")
        for kind in KINDS:
            entry: dict[str, Any] = {"template": path.name, "kind": kind}
            try:
                made = menu_completion(menu_request(template, tokens), kind, engines.render_exactly)
                entry["completion"] = made.completion
            except TemplateProblem as problem:
                entry["error"] = problem.message
            entries.append(entry)
    return entries


def load_completions() -> list[dict[str, Any]]:
    """The recorded corpus (`completions.json`)."""
    return json.loads(COMPLETIONS.read_text(encoding="utf-8"))["entries"]


def write_completions() -> int:
    """Write `completions.json` again; the number of entries."""
    document = {
        "about": "The Completion menu's entries for the shared templates (tests/support/answers).",
        "question": QUESTION,
        "tools": EXAMPLE_TOOLS,
        "special_tokens": {"bos_token": "<s>", "eos_token": "</s>"},
        "entries": menu_corpus(),
    }
    COMPLETIONS.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", "utf-8")
    return len(document["entries"])
