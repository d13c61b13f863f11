"""Ollama's template data in the shared test folder, as the ollama engine's tests read it."""

from __future__ import annotations

import json

import pytest

from app.render.engines.ollama.template.named import SETTING
from tests.support.shared_data import OLLAMA, TEMPLATES_DIR


def upstream_jinja(model: str) -> str:
    """A model's chat template from llama.cpp's collection (`model`.jinja)."""
    return (TEMPLATES_DIR / f"{model}.jinja").read_text(encoding="utf-8")


def index_jinja(name: str) -> str:
    """The Jinja template Ollama's index lists for `name`."""
    entries = json.loads((OLLAMA / "index.json").read_text(encoding="utf-8"))
    return next(entry["template"] for entry in entries if entry["name"] == name)


def gotmpl(name: str) -> str:
    """The Go template `name` stands for, line ends read as Ollama reads them."""
    return (OLLAMA / f"{name}.gotmpl").read_text(encoding="utf-8").replace("\r\n", "\n")


@pytest.fixture
def ollama_templates(monkeypatch: pytest.MonkeyPatch) -> None:
    """PLAYGROUND_OLLAMA_TEMPLATES names the shared copy of Ollama's `template/`."""
    monkeypatch.setenv(SETTING, str(OLLAMA))
