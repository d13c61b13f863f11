"""Where the read-only test data lives: `../shared` beside the repository (CI has it too)."""

from pathlib import Path

#: The shared folder beside the repository checkout.
SHARED = Path(__file__).resolve().parents[2] / "shared"
#: Real model templates collected by llama.cpp.
TEMPLATES_DIR = SHARED / "upstream" / "llama.cpp" / "templates"
#: Vocabulary-only GGUF files with llama.cpp's tokenizer test strings and ids.
VOCAB_DIR = SHARED / "upstream" / "llama.cpp" / "vocab"
#: What a real llama-server rendered for every template.
LLAMA_SERVER_RENDERS = SHARED / "upstream" / "llama.cpp" / "renders-b10573.json"


def template_files() -> list[Path]:
    """Every upstream `.jinja` template, sorted by name."""
    return sorted(TEMPLATES_DIR.glob("*.jinja"))
