"""The Ollama engine through the API: `POST /api/render` with `"engine": "ollama"`.

A Go template (`"template_kind": "go"`) renders in the Go worker, as Ollama's /api/chat
would; a Jinja template takes the path Ollama's choice names (for now llama-server's, the
llama.cpp engine with the options Ollama passes). Other engines refuse Go templates.
"""

from __future__ import annotations

import pytest

from app.render.engines.ollama.gotemplate.build import build
from tests.support.shared_data import SHARED

OLLAMA = SHARED / "upstream" / "ollama"
CHAT = [{"role": "user", "content": "Hello, how are you?"}]
RANGE = "{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}"


@pytest.fixture(scope="module", autouse=True)
def worker() -> None:
    """The worker built from its sources, as ./playground builds it."""
    build()


def _render(client, **body):
    return client.post("/api/render", json={"messages": CHAT, "engine": "ollama", **body})


def test_a_go_template_renders_as_ollama_does(client):
    template = (OLLAMA / "llama3-instruct.gotmpl").read_text()
    response = _render(client, template=template, template_kind="go")
    assert response.status_code == 200, response.json
    golden = (OLLAMA / "testdata" / "llama3-instruct.gotmpl" / "user").read_text()
    assert response.json["prompt"] == golden
    assert response.json["engine"] == "ollama"
    assert response.json["ollama"] == {
        "path": "go-template",
        "name": None,
        "distance": None,
        "harmony": False,
    }


#: A thinking-capable template: Ollama infers `<think>`/`</think>` around .Thinking.
THINKING = (
    "{{ .Think }}/{{ .ThinkLevel }}/{{ .IsThinkSet }}{{ range .Messages }}<{{ .Role }}>"
    "{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}{{ end }}"
)
PLAIN = "{{ .Think }}/{{ .ThinkLevel }}/{{ .IsThinkSet }}" + RANGE


@pytest.mark.parametrize(
    ("template", "kwargs", "flags"),
    [
        (PLAIN, {}, "false//false"),
        # A thinking-capable template: /api/chat turns thinking on when not told.
        (THINKING, {}, "true/medium/true"),
        (THINKING, {"enable_thinking": False}, "false//true"),
        (THINKING, {"enable_thinking": True, "reasoning_effort": "high"}, "true/high/true"),
    ],
)
def test_think_comes_from_enable_thinking_and_the_templates_capability(
    client, template, kwargs, flags
):
    response = _render(client, template=template, template_kind="go", kwargs=kwargs)
    assert response.status_code == 200, response.json
    assert response.json["prompt"] == flags + "<user>Hello, how are you?"


def test_what_the_template_cannot_do_is_refused_as_ollama_refuses_it(client):
    thinking = _render(client, template=PLAIN, template_kind="go", kwargs={"enable_thinking": True})
    assert thinking.status_code == 422
    assert "does not support thinking" in thinking.json["error"]["message"]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    refused = _render(client, template=RANGE, template_kind="go", tools=tools)
    assert refused.status_code == 422
    assert "does not support tools" in refused.json["error"]["message"]


def test_openai_shaped_messages_reach_the_template_as_ollamas(client):
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "hm",
            "tool_calls": [{"function": {"name": "f", "arguments": '{"x": 1}'}}],
        },
        {"role": "tool", "name": "f", "content": "2"},
    ]
    template = (
        "{{ range .Messages }}[{{ .Role }}|{{ .Content }}|{{ .Thinking }}|{{ .ToolName }}"
        "{{ range .ToolCalls }}|{{ .Function.Name }}{{ .Function.Arguments }}{{ end }}]{{ end }}"
    )
    response = _render(client, template=template, template_kind="go", messages=messages)
    assert response.json["prompt"] == '[user|a\n\nb||][assistant||hm||f{"x":1}][tool|2||f]'


def test_a_jinja_template_takes_the_llama_server_path(client):
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    response = _render(client, template=template)
    assert response.status_code == 200, response.json
    assert response.json["prompt"] == "<user>Hello, how are you?"
    assert response.json["ollama"]["path"] == "llama-server"


def test_parse_errors_are_422_with_their_line(client):
    response = _render(client, template="ok\n\n{{ if .Messages }", template_kind="go")
    assert response.status_code == 422
    assert response.json["error"]["type"] == "TemplateSyntaxError"
    assert response.json["error"]["line"] == 3


def test_recursion_is_422_naming_the_limit_and_the_engine_renders_after(client):
    template = '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" .Messages }}'
    response = _render(client, template=template, template_kind="go")
    assert response.status_code == 422
    assert response.json["error"]["limit"] == "recursion"
    after = _render(client, template=RANGE, template_kind="go")
    assert after.json["prompt"] == "<user>Hello, how are you?"


def test_other_engines_refuse_go_templates(client):
    response = client.post(
        "/api/render",
        json={"template": RANGE, "messages": CHAT, "engine": "llama.cpp", "template_kind": "go"},
    )
    assert response.status_code == 422
    assert response.json["error"]["type"] == "UnsupportedTemplateKind"
    assert "go templates" in response.json["error"]["message"]


def test_an_unknown_template_kind_is_refused(client):
    response = _render(client, template=RANGE, template_kind="mustache")
    assert response.status_code == 400
    assert "template_kind" in response.json["error"]["message"]


QWEN_LIKE = (
    "{{ if .Tools }}<tools>{{ range .Tools }}{{ . }}{{ end }}</tools>{{ end }}"
    "{{ range .Messages }}<{{ .Role }}>{{ .Content }}"
    "{{ if .ToolCalls }}<tool_call>{{ range .ToolCalls }}{{ json .Function }}{{ end }}"
    "</tool_call>{{ end }}{{ end }}<assistant>"
)
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def _parse(client, completion, **body):
    request = {
        "template": QWEN_LIKE,
        "template_kind": "go",
        "messages": CHAT,
        "tools": WEATHER,
        "completion": completion,
        "engines": ["ollama"],
        **body,
    }
    answer = client.post("/api/parse", json=request)
    assert answer.status_code == 200, answer.json
    (entry,) = answer.json["engines"]
    return entry


def test_parse_reads_tool_calls_after_the_templates_tag(client):
    completion = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    entry = _parse(client, completion)
    assert entry["parser"] == "ollama-tools"
    (call,) = entry["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert entry["message"]["content"] == ""


def test_parse_without_tools_sends_the_text_and_a_template_without_tools_refuses(client):
    completion = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    assert _parse(client, completion, tools=None)["message"]["content"] == completion
    refused = _parse(client, completion, template=RANGE)
    assert refused["message"] is None and "does not support tools" in refused["error"]


def test_a_share_keeps_the_template_kind(client):
    state = {"template": RANGE, "template_kind": "go", "messages": CHAT, "engine": "ollama"}
    made = client.post("/api/shares", json=state)
    assert made.status_code in (200, 201), made.json
    share = client.get(f"/s/{made.json['id']}.json").get_json()
    kept = share.get("state", share)
    assert (kept["template_kind"], kept["engine"]) == ("go", "ollama")
    jinja = client.post("/api/shares", json={**state, "template_kind": "jinja"}).json
    plain = client.get(f"/s/{jinja['id']}.json").get_json()
    assert "template_kind" not in plain.get("state", plain)


def test_parse_splits_thinking_at_the_templates_tags_then_reads_tools(client):
    template = (
        "{{ .Tools }}{{ range .Messages }}<{{ .Role }}>{{ if .Thinking }}<think>{{ .Thinking }}"
        "</think>{{ end }}{{ .Content }}{{ if .ToolCalls }}<tool_call>{{ end }}{{ end }}"
    )
    completion = (
        '<think>Paris, then.</think>\n<tool_call>{"name": "get_weather", '
        '"arguments": {"city": "Paris"}}'
    )
    entry = _parse(client, completion, template=template)
    message = entry["message"]
    assert message["reasoning_content"] == "Paris, then."
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["get_weather"]
    # Thinking off: the tags stay in the text, which then holds content before the tag.
    off = _parse(client, completion, template=template, kwargs={"enable_thinking": False})
    assert off["message"]["content"].startswith("<think>Paris, then.</think>")
    assert "reasoning_content" not in off["message"]
