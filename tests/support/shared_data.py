"""Where the read-only test data lives: `../shared` beside the repository (CI has it too).

`PLAYGROUND_TEST_SHARED` names another folder. Without the data, the tests that need it
skip, saying why, instead of failing: a module that needs it throughout calls
`require_shared()` at its top, a single test carries `@needs_shared`, and lists built
from the folder (`template_files()`) are empty rather than an error.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import REPO

#: The shared folder: `PLAYGROUND_TEST_SHARED`, or `shared` beside the repository checkout.
SHARED = Path(os.environ.get("PLAYGROUND_TEST_SHARED") or REPO.parent / "shared")
#: What llama.cpp's repository holds that the tests use.
LLAMA_CPP = SHARED / "upstream" / "llama.cpp"
#: Real model templates collected by llama.cpp.
TEMPLATES_DIR = LLAMA_CPP / "templates"
#: Vocabulary-only GGUF files with llama.cpp's tokenizer test strings and ids.
VOCAB_DIR = LLAMA_CPP / "vocab"
#: Ollama's template data and its template tests' goldens.
OLLAMA = SHARED / "upstream" / "ollama"
#: What a real llama-server rendered for every template.
LLAMA_SERVER_RENDERS = LLAMA_CPP / "renders-b10573.json"

#: Whether the shared data is there (its templates and vocabularies).
HAVE_SHARED = TEMPLATES_DIR.is_dir() and VOCAB_DIR.is_dir()
#: Why a test that needs the shared data skips.
MISSING = (
    f"needs the shared test data at {SHARED} (llama.cpp's templates and vocabularies): "
    "put the `shared` folder beside the checkout, or set PLAYGROUND_TEST_SHARED"
)

#: Marks a test that reads the shared data.
needs_shared = pytest.mark.skipif(not HAVE_SHARED, reason=MISSING)


def require_shared() -> None:
    """Skip the calling test module, at collection, when the shared data is missing."""
    if not HAVE_SHARED:
        pytest.skip(MISSING, allow_module_level=True)


def template_files() -> list[Path]:
    """Every upstream `.jinja` template, sorted by name (none without the shared data)."""
    return sorted(TEMPLATES_DIR.glob("*.jinja"))


def require_ollama() -> None:
    """Skip the calling test module, at collection, without the shared data or Ollama's."""
    require_shared()
    if not (OLLAMA / "index.json").is_file():
        pytest.skip(f"needs Ollama's template data at {OLLAMA}", allow_module_level=True)
