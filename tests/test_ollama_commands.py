"""Ollama's command lines (a Modelfile pinning the TEMPLATE Ollama takes, `ollama create`,
`OLLAMA_GO_TEMPLATE`), its Modelfile quoting read back the way Ollama's parser reads it,
and the finding when Ollama would render a TEMPLATE without the chat template's tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.analysis import probes
from app.render.command_line import CommandContext
from app.render.engines.ollama import modelfile
from app.render.engines.ollama.commands import (
    DROPS_TOOLS,
    MODELFILE,
    WRITER,
    command_lines,
    command_notes,
    facts,
    findings,
)
from app.render.engines.ollama.template.named import SETTING
from tests.support import ollama_data as data
from tests.support.ollama_data import ollama_templates  # noqa: F401 (the fixture)
from tests.support.shared_data import OLLAMA, require_ollama

require_ollama()
pytestmark = pytest.mark.usefixtures("ollama_templates")

LLAMA_3_1 = data.upstream_jinja("meta-llama-Llama-3.1-8B-Instruct")
QWEN3 = data.upstream_jinja("Qwen-Qwen3-0.6B")
INDEX = json.loads((OLLAMA / "index.json").read_text(encoding="utf-8"))


def _lines(template: str) -> list:
    """The `ollama create` lines (the `hf.co/` ones, last, are test_ollama_hub_commands')."""
    context = CommandContext(template=template, kwargs={}, facts=facts(template, {}, None))
    lines = [line.to_json() for line in command_lines(context)]
    return [line for line in lines if not line["form"].startswith("hub-")]


def _read_modelfile(text: str) -> dict[str, list[str]]:
    """The commands a Modelfile holds, each value read back as Ollama's parser reads it
    (one command per line start; a value runs on while its quotes are open)."""
    commands: dict[str, list[str]] = {}
    rest = text
    while rest:
        line, _, rest = rest.partition("\n")
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition(" ")
        if name == "PARAMETER":
            name, _, value = value.partition(" ")
        while modelfile.read_back(value) is None and rest:
            more, _, rest = rest.partition("\n")
            value += "\n" + more
        commands.setdefault(name, []).append(modelfile.read_back(value))
    return commands


def test_a_chat_template_without_tools_pins_its_adopted_template_and_stops() -> None:
    lines = _lines(data.index_jinja("chatml"))
    create, env = lines
    assert create["command"] == "ollama create my-model -f Modelfile"
    read = _read_modelfile(create["files"][MODELFILE])
    assert read["FROM"] == ["./MODEL.gguf"]
    assert read["TEMPLATE"] == [data.gotmpl("chatml")]
    stops = json.loads((OLLAMA / "chatml.json").read_text(encoding="utf-8"))["stop"]
    assert read["stop"] == stops
    assert env["command"] == "OLLAMA_GO_TEMPLATE=1 ollama serve"


def test_every_index_template_survives_the_modelfile() -> None:
    for entry in INDEX:
        written = modelfile.value(data.gotmpl(entry["name"]), ('"""',))
        assert written is not None and modelfile.read_back(written) == data.gotmpl(entry["name"])


def test_llama_3_1_keeps_its_chat_template_and_says_what_create_adopts() -> None:
    create, env = _lines(LLAMA_3_1)
    text = create["files"][MODELFILE]
    assert "TEMPLATE" not in _read_modelfile(text) and "llama3-instruct" in text
    assert env["command"] == "OLLAMA_GO_TEMPLATE=0 ollama serve"


def test_a_template_far_from_the_index_needs_only_from() -> None:
    (create,) = _lines(QWEN3)
    assert create["files"][MODELFILE] == "FROM ./MODEL.gguf\n"


def test_the_notes_give_the_reasons() -> None:
    notes = command_notes(facts(LLAMA_3_1, {}, None))
    assert "llama3-instruct" in notes["ollama"] and "prefers it" in notes["ollama"]
    assert "OLLAMA_GO_TEMPLATE=1" in notes["ollama_tools"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a"""\nb', None),  # closed quotes before a newline end the value there
        ('a""" \t\nb', None),  # white space before that newline is trimmed
        ("a\x1bb", None),  # ESC is dropped by the reader
        ("a\u00a0b", None),  # a no-break space too
        ('a"""b', '"""a"""b"""'),  # quotes end a value only at a newline
        ('""" x', '"""""" x"""'),
        ("tab\tand\r\nCRLF", '"""tab\tand\r\nCRLF"""'),
        ('ends with a quote"', '"""ends with a quote""""'),
    ],
)
def test_modelfile_quoting_survives_or_is_refused(text: str, expected: str | None) -> None:
    assert modelfile.value(text, ('"""',)) == expected


def test_stop_strings_use_plain_quotes_unless_they_cannot() -> None:
    assert modelfile.value("<|eot_id|>") == '"<|eot_id|>"'
    assert modelfile.value('say" no') == '"say" no"'
    assert modelfile.value('two\nlines"\nhere') == '"""two\nlines"\nhere"""'


def test_a_template_that_cannot_be_written_is_left_out_with_a_note() -> None:
    given = {"ollama_path": "go-template", "ollama_template": 'x"""\ny', "ollama_stop": []}
    context = CommandContext(template="t", kwargs={}, facts=given)
    text = command_lines(context)[0].files[MODELFILE]
    assert "TEMPLATE" not in _read_modelfile(text)
    assert "ollama_modelfile" in command_notes(given)


# The finding.


def test_llama_3_1_is_told_that_older_ollamas_drop_its_tools() -> None:
    (finding,) = findings(LLAMA_3_1)
    assert (finding["id"], finding["severity"]) == (DROPS_TOOLS, "info")
    assert "llama3-instruct" in finding["message"] and "ollama#16031" in finding["message"]


def test_a_go_template_that_wins_without_the_tools_is_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An index of one entry whose Go template supports insert and thinking, no tools; the
    # chat template supports tools only: it has no more capabilities, nor the same ones,
    # so Ollama keeps the TEMPLATE and the tools are gone.
    jinja = "{{ tools }}{% for m in messages %}{{ m.content }}{% endfor %}"
    go = "{{ .Suffix }}{{ range .Messages }}<think>{{ .Thinking }}</think>{{ end }}"
    (tmp_path / "index.json").write_text(json.dumps([{"name": "custom", "template": jinja}]))
    (tmp_path / "custom.gotmpl").write_text(go)
    monkeypatch.setenv(SETTING, str(tmp_path))
    (finding,) = findings(jinja)
    assert (finding["id"], finding["severity"]) == (DROPS_TOOLS, "warning")
    assert "Ollama renders custom" in finding["message"]


def test_no_finding_without_tools_or_without_an_adopted_template() -> None:
    assert findings(data.index_jinja("chatml")) == []  # no tools to drop
    assert findings(QWEN3) == []  # no TEMPLATE adopted


def test_the_analysis_reports_the_writers_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probes, "command_writers", lambda: [WRITER])
    found = probes._runtime_findings(LLAMA_3_1)
    assert [d.id for d in found] == [DROPS_TOOLS]
