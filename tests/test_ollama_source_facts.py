"""A loaded Modelfile's facts reach the Ollama engine through the pipeline: its SYSTEM
and RENDERER shape the prompt, its PARSER reads the answer, its stop strings end it, and
its TEMPLATE is a Go template without the body saying so."""

from __future__ import annotations

from app.render.engines.ollama.parsers import PARSERS

CHATML = """{{ range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
CHAT = [{"role": "user", "content": "Weather in Paris?"}]
WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def _modelfile(*lines: str) -> str:
    return f'FROM qwen3:8b\nTEMPLATE """{CHATML}"""\n' + "".join(f"{line}\n" for line in lines)


def _load(client, *lines: str) -> dict:
    answer = client.post("/api/sources/modelfile", json={"modelfile": _modelfile(*lines)})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return answer.json


def _render(client, source: dict, **body):
    request = {
        "template": source["templates"]["default"],
        "messages": CHAT,
        "engine": "ollama",
        "source": source["id"],
        **body,
    }
    return client.post("/api/render", json=request)


def _parse(client, source: dict, completion: str, **body) -> dict:
    request = {
        "template": source["templates"]["default"],
        "messages": CHAT,
        "tools": WEATHER,
        "source": source["id"],
        "completion": completion,
        "engines": ["ollama"],
        **body,
    }
    answer = client.post("/api/parse", json=request)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    (entry,) = answer.json["engines"]
    return entry


def test_the_sources_template_renders_as_go_and_its_system_opens_the_chat(client):
    source = _load(client, "SYSTEM You are terse.")
    answer = _render(client, source)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.json["ollama"]["path"] == "go-template"
    assert answer.json["prompt"].startswith("<|im_start|>system\nYou are terse.<|im_end|>\n")
    # A chat with its own system message keeps it, and gets no other.
    own = [{"role": "system", "content": "Be kind."}, *CHAT]
    prompt = _render(client, source, messages=own).json["prompt"]
    assert "You are terse." not in prompt and "Be kind." in prompt


def test_without_the_source_the_same_template_is_read_as_jinja(client):
    source = _load(client, "SYSTEM You are terse.")
    body = {"template": source["templates"]["default"], "messages": CHAT, "engine": "ollama"}
    answer = client.post("/api/render", json=body)
    # As Jinja (the GGUF's chat template) `{{ range .Messages }}` does not even parse.
    assert answer.status_code == 422
    assert _render(client, source).status_code == 200


def test_the_modelfiles_renderer_writes_the_prompt(client):
    source = _load(client, "RENDERER qwen3-coder", "SYSTEM You are terse.")
    answer = _render(client, source, tools=WEATHER)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.json["ollama"] == {
        "path": "renderer",
        "name": "qwen3-coder",
        "distance": None,
        "harmony": False,
    }
    prompt = answer.json["prompt"]
    # qwen3-coder's renderer writes the tools as XML functions, which the TEMPLATE has not.
    assert "<function>\n<name>get_weather</name>" in prompt and "You are terse." in prompt


def test_an_unmodelled_renderer_is_said(client):
    answer = _render(client, _load(client, "RENDERER nemotron-3-nano"))
    assert answer.status_code == 422
    assert "nemotron-3-nano" in answer.json["error"]["message"]


def test_the_lfm2_and_cohere_renderers_write_the_prompt(client):
    lfm2 = _render(client, _load(client, "RENDERER lfm2", "SYSTEM Be brief."), tools=WEATHER)
    assert lfm2.status_code == 200, lfm2.get_data(as_text=True)
    assert lfm2.json["ollama"] == {
        "path": "renderer",
        "name": "lfm2",
        "distance": None,
        "harmony": False,
    }
    # LFM2's system block: the SYSTEM, then the tools' functions as HF's tojson spaces them.
    assert lfm2.json["prompt"].startswith(
        '<|startoftext|><|im_start|>system\nBe brief.\nList of tools: <|tool_list_start|>[{"name": '
        '"get_weather", "parameters": {"type": "object", "properties": {"city": {"type": '
        '"string"}}}}]<|tool_list_end|><|im_end|>\n'
    )
    cohere = _render(client, _load(client, "RENDERER cohere"), kwargs={"enable_thinking": False})
    assert cohere.status_code == 200, cohere.get_data(as_text=True)
    prompt = cohere.json["prompt"]
    assert "<|USER_TOKEN|><|START_TEXT|>Weather in Paris?<|END_TEXT|>" in prompt
    assert prompt.endswith("<|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|>")


def test_the_modelfiles_parser_reads_the_answer(client):
    source = _load(client, "PARSER qwen3")
    call = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    completion = f"<tool_call>\n{call}\n</tool_call>"
    entry = _parse(client, source, completion)
    expected = PARSERS["qwen3"](completion, WEATHER, None)
    assert entry["parser"] == "qwen3"
    (call,) = entry["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert [call["function"]["name"] for call in entry["message"]["tool_calls"]] == [
        name for name, _ in expected.tool_calls
    ]


def test_gpt_oss_answers_are_read_by_the_harmony_parser(client):
    source = _load(client, "PARSER harmony")
    completion = (
        "<|channel|>analysis<|message|>Need the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris"}'
    )
    entry = _parse(client, source, completion)
    assert entry["parser"] == "harmony"
    assert entry["message"]["reasoning_content"] == "Need the weather."
    (call,) = entry["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"


def test_the_olmo3_renderer_and_parser(client):
    source = _load(client, "RENDERER olmo3", "PARSER olmo3")
    prompt = _render(client, source, tools=WEATHER).json["prompt"]
    assert prompt.startswith("<|im_start|>system\nYou are a helpful function-calling AI")
    assert '<functions>[{"type": "function", "function": {"name": "get_weather"' in prompt
    completion = 'Checking.<function_calls>get_weather(city="Paris")</function_calls>'
    entry = _parse(client, source, completion)
    assert (entry["parser"], entry["message"]["content"]) == ("olmo3", "Checking.")
    (call,) = entry["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}


def test_an_unmodelled_parser_is_said(client):
    entry = _parse(client, _load(client, "PARSER nemotron-3-nano"), "Hi")
    assert "message" not in entry or entry["message"] is None
    assert "nemotron-3-nano" in entry["no_parser"]


def test_the_lfm2_and_cohere_parsers_read_the_answer(client):
    lfm2 = _parse(
        client,
        _load(client, "PARSER lfm2-thinking"),
        "<think>Need it.</think>Checking.<|tool_call_start|>[get_weather(city='Paris')]"
        "<|tool_call_end|>",
        kwargs={"enable_thinking": True},
    )
    assert (lfm2["parser"], lfm2["message"]["content"]) == ("lfm2-thinking", "Checking.")
    assert lfm2["message"]["reasoning_content"] == "Need it."
    (call,) = lfm2["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    cohere = _parse(
        client,
        _load(client, "PARSER cohere"),
        'Plan.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": '
        '"get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>',
    )
    assert cohere["message"]["reasoning_content"] == "Plan."
    (call,) = cohere["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}


def test_the_answer_ends_at_the_first_stop_string(client):
    source = _load(client, "PARAMETER stop <|im_end|>", "PARAMETER stop <|endoftext|>")
    entry = _parse(client, source, "It is sunny.<|im_end|>\n<|im_start|>user", tools=None)
    assert entry["message"]["content"] == "It is sunny."
    assert any("<|im_end|>" in note for note in entry["notes"])
