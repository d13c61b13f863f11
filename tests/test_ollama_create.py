"""What `ollama create` sets by a GGUF's architecture, and how RENDERER gemma4 resolves,
as Ollama (fb30760) does: its own tests (oracles/ollama/create_cases.json, extracted from
`server/routes_create_test.go` and `server/gemma4_test.go` by
oracles/ollama/record_create.py) run against `create.py` and `renderer_resolution.py`;
then the engine, the reader and the Command view follow a GGUF's architecture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.analysis.commands import template_facts
from app.render.answer import AnswerRequest
from app.render.command_line import CommandContext
from app.render.core import ModelFiles, RenderRequest, read_with
from app.render.engines.ollama import commands
from app.render.engines.ollama.create import created
from app.render.engines.ollama.engine import OllamaEngine
from app.render.engines.ollama.renderer_resolution import human_number, resolve
from app.render.limits import RenderLimits

DOC = json.loads(
    (Path(__file__).resolve().parents[1] / "oracles/ollama/create_cases.json").read_text()
)
CREATE = [case for case in DOC["cases"] if case["test"].startswith("TestCreate")]
RESOLVE = [case for case in DOC["cases"] if case["test"] == "TestResolveGemma4Renderer"]
CHAT = [{"role": "user", "content": "Hello"}]
JINJA = "{% for m in messages %}{{ m.content }}{% endfor %}"


def _id(case: dict) -> str:
    return f"{case['test']}-{case['name']}"


def test_the_extracted_cases_are_ollamas_at_the_engines_commit():
    assert DOC["ollama"].startswith("fb30760")
    # 4 create tests (8 architectures run) and TestResolveGemma4Renderer's 10 rows less
    # its nil model, which no model here can be.
    assert (len(CREATE), len(RESOLVE)) == (8, 9)


@pytest.mark.parametrize("case", CREATE, ids=_id)
def test_ollama_create_sets_renderer_and_parser_by_architecture(case):
    made = created(case["architecture"], case["renderer"], case["parser"])
    assert (made.renderer, made.parser) == (case["want_renderer"], case["want_parser"])


@pytest.mark.parametrize("case", RESOLVE, ids=_id)
def test_ollama_resolves_the_gemma4_renderer(case):
    names = tuple(name for name in (case["short_name"], case["model_name"]) if name)
    assert resolve(case["renderer"], names, case["model_type"]) == case["want"]


def test_the_model_type_is_written_as_format_human_number_writes_it():
    # The create tests' parameter counts, and HumanNumber's own branches.
    assert [human_number(n) for n in (25_200_000_000, 12_000_000_000, 4_300_000_000)] == [
        "25.2B",
        "12B",
        "4.3B",
    ]
    assert [human_number(n) for n in (1_500_000, 2_000_000, 1_499, 0)] == [
        "1.50M",
        "2M",
        "1K",
        "0",
    ]


def test_gemma4_gets_its_stop_unless_the_modelfile_sets_one():
    assert created("gemma4").stop == ("<turn|>",)
    assert created("gemma4", stop=("<eos>",)).stop == ("<eos>",)
    assert created("laguna").stop == ()
    plain = created("llama")
    assert (plain.renderer, plain.parser, plain.said) == (None, None, "")


def _gguf(architecture: str, count: int | None = None) -> ModelFiles:
    return ModelFiles(family=architecture, architecture=architecture, parameter_count=count)


def test_a_gemma4_gguf_renders_with_the_renderer_create_sets_and_says_why():
    request = RenderRequest(JINJA, CHAT, engine="ollama", model=_gguf("gemma4", 25_200_000_000))
    rendered = OllamaEngine().render(request, RenderLimits())
    shown = rendered.details["ollama"]
    assert (shown["path"], shown["name"]) == ("renderer", "gemma4-large")
    said = " ".join(rendered.rewrites)
    assert "general.architecture is gemma4" in said and "25.2B" in said
    # The large renderer's prompt: an empty thought block when thinking is not asked.
    assert rendered.prompt.startswith("<bos><|turn>user\nHello<turn|>\n<|turn>model\n")
    small = RenderRequest(JINJA, CHAT, engine="ollama", model=_gguf("gemma4", 4_300_000_000))
    assert OllamaEngine().render(small, RenderLimits()).details["ollama"]["name"] == "gemma4-small"


def test_a_laguna_gguf_names_the_renderer_it_would_take():
    request = RenderRequest(JINJA, CHAT, engine="ollama", model=_gguf("laguna"))
    with pytest.raises(Exception) as refused:
        OllamaEngine().render(request, RenderLimits())
    assert "'laguna' is not modelled" in str(refused.value)
    assert "general.architecture is laguna" in str(refused.value)


def test_another_architecture_keeps_the_template_path():
    request = RenderRequest(JINJA, CHAT, engine="ollama", model=_gguf("llama"))
    assert OllamaEngine().render(request, RenderLimits()).details["ollama"]["path"] != "renderer"


def test_a_gemma4_ggufs_answer_is_cut_at_its_stop_and_read_by_the_gemma4_parser():
    request = RenderRequest(JINJA, CHAT, engine="ollama", model=_gguf("gemma4"))
    answer = AnswerRequest(request, "Hi there<turn|>ignored")
    reading = read_with(OllamaEngine(), answer, RenderLimits())
    parsed = reading.answer
    assert reading.no_parser is None and parsed is not None
    assert (parsed.parser, parsed.content) == ("gemma4", "Hi there")
    assert any("'<turn|>'" in note for note in parsed.notes)


def test_the_command_views_modelfile_pins_what_create_sets_for_a_gemma4_gguf():
    model = _gguf("gemma4", 25_200_000_000)
    facts = template_facts(JINJA, {}, {}, model, RenderLimits())
    assert (facts["ollama_path"], facts["ollama_name"]) == ("renderer", "gemma4-large")
    context = CommandContext(template=JINJA, kwargs={}, facts=facts, gguf="gemma-4.gguf")
    lines = commands.command_lines(context)
    text = lines[0].files[commands.MODELFILE]
    assert text.splitlines() == [
        "FROM ./gemma-4.gguf",
        "RENDERER gemma4",
        "PARSER gemma4",
        'PARAMETER stop "<turn|>"',
    ]
    assert not any(line.form == "env" for line in lines)
    assert "general.architecture is gemma4" in commands.command_notes(facts)["ollama"]


def test_a_gguf_source_gives_its_architecture_and_parameter_count():
    from app.analysis.model_files import model_files
    from app.sources.source import Source

    metadata = {"architecture": "gemma4", "parameter_count": 25_200_000_000}
    source = Source("x", "gguf", {}, {}, None, None, None, metadata=metadata)
    files = model_files(source)
    assert (files.architecture, files.parameter_count) == ("gemma4", 25_200_000_000)
    odd = Source("y", "gguf", {}, {}, None, None, None, metadata={"parameter_count": "many"})
    assert (model_files(odd).architecture, model_files(odd).parameter_count) == (None, None)


def _gemma4_gguf_bytes(path: Path) -> bytes:
    """A small GGUF whose architecture is gemma4, of 25.2B parameters, with a Jinja
    template (its tensors are one of 4 floats)."""
    import numpy as np
    from gguf import GGUFWriter

    writer = GGUFWriter(path, "gemma4")
    writer.add_uint64("general.parameter_count", 25_200_000_000)
    writer.add_chat_template(JINJA)
    writer.add_tensor("t", np.zeros(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


def test_a_loaded_gemma4_gguf_renders_and_commands_as_ollama_create_makes_it(client, tmp_path):
    data = _gemma4_gguf_bytes(tmp_path / "gemma-4.gguf")
    loaded = client.post(
        "/api/sources/gguf?name=gemma-4.gguf", data=data, content_type="application/octet-stream"
    )
    assert loaded.status_code == 200, loaded.get_data(as_text=True)
    body = {"template": JINJA, "messages": CHAT, "engine": "ollama", "source": loaded.json["id"]}
    rendered = client.post("/api/render", json=body)
    assert rendered.status_code == 200, rendered.get_data(as_text=True)
    assert rendered.json["ollama"]["path"] == "renderer"
    assert rendered.json["ollama"]["name"] == "gemma4-large"
    commanded = client.post("/api/command", json={**body, "model": "gemma-4.gguf"})
    assert commanded.status_code == 200, commanded.get_data(as_text=True)
    (line,) = [c for c in commanded.json["commands"] if c.get("form") == "modelfile"]
    assert "RENDERER gemma4\nPARSER gemma4\n" in line["files"]["Modelfile"]


def test_a_registry_gemma4_model_resolves_its_renderer_by_its_name():
    for name, chosen in (
        ("h:1/library/gemma4:31b", "gemma4-large"),
        ("gemma4:e4b", "gemma4-small"),
    ):
        model = ModelFiles(renderer="gemma4", parser="gemma4", name=name)
        request = RenderRequest(JINJA, CHAT, engine="ollama", model=model)
        rendered = OllamaEngine().render(request, RenderLimits())
        assert rendered.details["ollama"]["name"] == chosen
        assert any(f"the model's name {name} says" in said for said in rendered.rewrites)
