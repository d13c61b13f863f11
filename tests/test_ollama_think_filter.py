"""/api/chat strips the <think> blocks of earlier assistant turns for a qwen3 or
deepseek-r1 model, as Ollama (fb30760) does (`filterThinkTags`, server/routes.go): its own
test (oracles/ollama/think_filter_cases.json, extracted from `server/routes_test.go` by
oracles/ollama/record_think_filter.py) runs as data, then the engine renders the
filtered conversation and its note says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.render.core import ModelFiles, RenderRequest
from app.render.engines.ollama.engine import OllamaEngine
from app.render.engines.ollama.think_filter import filter_think_tags, model_name
from app.render.limits import RenderLimits

DOC = json.loads(
    (Path(__file__).resolve().parents[1] / "oracles/ollama/think_filter_cases.json").read_text()
)
GO = "{{ range .Messages }}[{{ .Role }}]{{ .Content }}{{ end }}"
CHAT = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "<think>hmm</think>\n\nHello!"},
    {"role": "user", "content": "Again?"},
]


def test_the_extracted_cases_are_ollamas_at_the_engines_commit():
    assert DOC["ollama"].startswith("fb30760")
    assert len(DOC["cases"]) == 5


@pytest.mark.parametrize("case", DOC["cases"], ids=lambda case: case["name"])
def test_ollama_filter_think_tags(case):
    filtered, _ = filter_think_tags(case["messages"], case["family"], case["model_name"])
    assert filtered == case["want"]


def test_the_model_name_is_read_as_ollamas_parse_name_reads_it():
    assert model_name("registry.ollama.ai/library/deepseek-r1:latest") == "deepseek-r1"
    assert model_name("http://127.0.0.1:8080/library/deepseek-r1:8b") == "deepseek-r1"
    assert model_name("deepseek-r1") == "deepseek-r1"
    assert model_name("deepseek-r1-distill:8b") == "deepseek-r1-distill"


def _render(model: ModelFiles | None) -> tuple[str, list[str]]:
    request = RenderRequest(GO, CHAT, engine="ollama", template_kind="go", model=model)
    rendered = OllamaEngine().render(request, RenderLimits())
    return rendered.prompt, rendered.rewrites


def test_a_qwen3_model_renders_earlier_turns_without_their_thinking_and_says_so():
    prompt, said = _render(ModelFiles(family="qwen3"))
    assert prompt == "[user]Hi[assistant]Hello![user]Again?"
    assert any("filterThinkTags" in sentence and "1 earlier" in sentence for sentence in said)
    # Another family keeps the blocks, and nothing is said.
    prompt, said = _render(ModelFiles(family="llama"))
    assert "<think>hmm</think>" in prompt
    assert not any("filterThinkTags" in sentence for sentence in said)


def test_a_deepseek_r1_registry_model_is_filtered_by_its_name():
    prompt, _ = _render(ModelFiles(name="http://127.0.0.1:1/library/deepseek-r1:8b"))
    assert "<think>" not in prompt


def test_a_registry_models_name_reaches_the_engine_and_a_modelfiles_does_not():
    from app.analysis.model_files import model_files
    from app.sources.modelfile import OllamaModel
    from app.sources.source import Source

    name = {"name": "127.0.0.1:1/library/deepseek-r1:8b"}
    registry = Source("x", "ollama", {}, {}, None, None, None, metadata=name, ollama=OllamaModel())
    assert model_files(registry).name == name["name"]
    pasted = Source("y", "modelfile", {}, {}, None, None, None, metadata=name, ollama=OllamaModel())
    assert model_files(pasted).name is None
