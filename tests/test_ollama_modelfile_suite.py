"""Ollama's own Modelfile parser tests about MESSAGE (oracles/ollama/modelfile_cases.json,
extracted from `parser/parser_test.go` at fb30760 by oracles/ollama/record_modelfile.py)
run against the playground's Modelfile reader: the commands it reads, the messages and
system a create request gets, and the refusals with their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.sources.modelfile import ModelfileError, parse, read_modelfile

DOC = json.loads(
    (Path(__file__).resolve().parents[1] / "oracles/ollama/modelfile_cases.json").read_text()
)
CASES = DOC["cases"]
PARSED = [case for case in CASES if case["test"] == "TestParseFileMessages"]
CREATED = [case for case in CASES if case["test"] == "TestCreateRequest"]


def _id(case: dict) -> str:
    return f"{case['test']}{case['name']}"


def test_the_extracted_suite_is_ollamas_at_the_engines_commit():
    assert DOC["ollama"].startswith("fb30760")
    assert {case["test"] for case in CASES} == {"TestParseFileMessages", "TestCreateRequest"}
    assert len(CASES) == 11


@pytest.mark.parametrize("case", PARSED, ids=_id)
def test_ollama_parse_file_messages(case):
    fields = case["fields"]
    if fields["err"] is None:
        commands = [(command.name, command.args) for command in parse(fields["input"])]
        assert commands == [(c["name"], c["Args"]) for c in fields["expected"]]
        return
    with pytest.raises(ModelfileError) as refused:
        read_modelfile(fields["input"].encode())
    if fields["err"]["line"] is not None:
        # Ollama's ParserError names the line; so does the refusal here, with the roles.
        assert refused.value.line == fields["err"]["line"]
        assert fields["err"]["error"].startswith("message role must be one of")
        assert all(role in refused.value.message for role in ("system", "user", "assistant"))


@pytest.mark.parametrize("case", CREATED, ids=_id)
def test_ollama_create_request(case):
    fields = case["fields"]
    model = read_modelfile(fields["input"].encode())
    expected = fields["expected"]
    assert model.model_from == expected["From"]
    assert model.template == expected.get("Template")
    assert model.system == expected.get("System")
    wanted = [(message["role"], message["content"]) for message in expected.get("Messages", [])]
    assert list(model.messages) == wanted
