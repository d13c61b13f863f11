"""The Command view's lines for `ollama run hf.co/USER/REPO`: the run itself, and a
Modelfile `FROM hf.co/USER/REPO` that pins the TEMPLATE and stops the Hub serves, read
back with the Modelfile reader (itself checked against Ollama's parser tests) and
compared with what `@huggingface/ollama-utils` answers when Node calls it directly."""

from __future__ import annotations

import pytest

from app.render.command_line import CommandContext
from app.render.engines.ollama.commands import command_lines, command_notes, facts
from app.render.engines.ollama.hub.commands import HUB_MODEL, HUB_MODELFILE, hub_lines
from app.sources.modelfile import read_modelfile
from tests.support import ollama_data as data
from tests.test_ollama_hub import TOKENS, package_answers

LLAMA_3_1 = data.upstream_jinja("meta-llama-Llama-3.1-8B-Instruct")


def _by_form(template: str) -> tuple[dict, dict]:
    learnt = facts(template, TOKENS, None)
    context = CommandContext(template=template, kwargs={}, facts=learnt)
    return {line.form: line for line in command_lines(context)}, learnt


def test_llama_3_1_runs_from_the_hub_and_its_modelfile_pins_the_hubs_template():
    lines, learnt = _by_form(LLAMA_3_1)
    (answer,) = package_answers([LLAMA_3_1])
    entry = answer["entry"]
    assert learnt["ollama_hub"]["model"] == entry["model"] == "library/llama3.1:8b"
    assert list(lines)[-2:] == ["hub-run", "hub-modelfile"]  # after `ollama create`'s
    assert lines["hub-run"].command == f"ollama run {HUB_MODEL}"
    pinned = lines["hub-modelfile"]
    assert pinned.command == f"ollama create my-hf-model -f {HUB_MODELFILE}"
    model = read_modelfile(pinned.files[HUB_MODELFILE].encode())
    assert model.model_from == HUB_MODEL
    # The Hub's TEMPLATE has tools as the chat template does: Ollama renders it.
    assert learnt["ollama_hub"]["path"] == "go-template"
    assert model.template == entry["ollama"]["template"]
    assert list(model.stop) == entry["ollama"]["params"]["stop"]
    notes = command_notes(learnt)
    assert f"ollama run {HUB_MODEL}" in notes["ollama_hub"]


def test_when_the_chat_template_wins_the_modelfile_pins_no_template():
    hub = {
        "model": "library/x",
        "template": "{{ .Prompt }}",
        "stop": ["</s>"],
        "path": "llama-server",
    }
    (_, pinned) = hub_lines({"ollama_hub": hub})
    model = read_modelfile(pinned.files[HUB_MODELFILE].encode())
    assert (model.model_from, model.template, model.stop) == (HUB_MODEL, None, ())
    assert "OLLAMA_GO_TEMPLATE=0" in pinned.files[HUB_MODELFILE]


def test_no_template_no_hub_lines():
    assert hub_lines({"ollama_hub": None}) == []
    assert facts("", {}, None)["ollama_hub"] is None


@pytest.mark.parametrize("stop", [["<|eot_id|>"], ["a b", "<|im_end|>"]])
def test_the_hubs_stops_are_pinned_as_ollama_reads_them(stop):
    hub = {"model": "library/x", "template": "{{ .Prompt }}", "stop": stop, "path": "go-template"}
    (_, pinned) = hub_lines({"ollama_hub": hub})
    model = read_modelfile(pinned.files[HUB_MODELFILE].encode())
    assert (model.template, list(model.stop)) == ("{{ .Prompt }}", stop)
