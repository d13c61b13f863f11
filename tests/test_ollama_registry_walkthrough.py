"""The issue's walkthrough through the API: load `qwen3` by name from a local Ollama
registry, render its Go template as Ollama's /api/chat does, and read the model's tool
call as Ollama's qwen3 parser (the model's PARSER) reads it."""

from __future__ import annotations

import json

import pytest

from app.render.engines.ollama.parsers import PARSERS
from tests.support.fake_registry import PARAMS, SYSTEM, TEMPLATE, WEIGHTS, FakeRegistry, Model
from tests.test_remote_ollama import remote_with  # noqa: F401 (the fixture)

pytestmark = pytest.mark.usefixtures("remote_with")

#: A qwen3-like TEMPLATE that offers tools (as Ollama's library qwen3 does) and no RENDERER.
GO_TEMPLATE = (
    "{{- if .Tools }}<|im_start|>system\n<tools>\n{{ range .Tools }}{{ json .Function }}\n"
    "{{ end }}</tools><|im_end|>\n{{ end }}"
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}"
    "{{ if .ToolCalls }}<tool_call>\n{{ range .ToolCalls }}{{ json .Function }}{{ end }}\n"
    "</tool_call>{{ end }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
)
CHAT = [{"role": "user", "content": "Weather in Paris?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
ANSWER = (
    '<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n{"name": "get_weather", '
    '"arguments": {"city": "Paris"}}\n</tool_call><|im_end|>'
)


@pytest.fixture()
def registry():
    server = FakeRegistry()
    server.models["library/qwen3:latest"] = Model(
        layers=[
            (WEIGHTS, b"GGUF" + b"\0" * 64),
            (TEMPLATE, GO_TEMPLATE.encode()),
            (SYSTEM, b"You are terse."),
            (PARAMS, json.dumps({"stop": ["<|im_start|>", "<|im_end|>"]}).encode()),
        ],
        config={"parser": "qwen3-thinking"},
        claimed_sizes={WEIGHTS: 5_200_000_000},
    )
    yield server
    server.close()


def test_qwen3_by_name_renders_and_its_tool_call_reads_as_ollamas_parser_does(client, registry):
    loaded = client.post("/api/sources/ollama", json={"name": f"{registry.url}/library/qwen3"})
    assert loaded.status_code == 200, loaded.get_data(as_text=True)
    source = loaded.json
    assert source["template_kind"] == "go" and source["ollama"]["parser"] == "qwen3-thinking"
    body = {
        "template": source["templates"]["default"],
        "messages": CHAT,
        "tools": TOOLS,
        "source": source["id"],
        "engine": "ollama",
    }
    rendered = client.post("/api/render", json=body)
    assert rendered.status_code == 200, rendered.get_data(as_text=True)
    assert rendered.json["ollama"]["path"] == "go-template"
    prompt = rendered.json["prompt"]
    # The registry's SYSTEM opens the chat, after the tools the template writes.
    assert '<tools>\n{"name":"get_weather"' in prompt
    assert prompt.index("You are terse.") < prompt.index("Weather in Paris?")
    parsed = client.post("/api/parse", json={**body, "completion": ANSWER, "engines": ["ollama"]})
    assert parsed.status_code == 200, parsed.get_data(as_text=True)
    (entry,) = parsed.json["engines"]
    assert entry["parser"] == "qwen3-thinking"
    # What Ollama's parser makes of the answer the runner returns (cut at <|im_end|>).
    expected = PARSERS["qwen3-thinking"](ANSWER.removesuffix("<|im_end|>"), TOOLS, None)
    message = entry["message"]
    assert message["reasoning_content"] == expected.thinking == "The user wants weather."
    (call,) = message["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert [(name, args) for name, args in expected.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
