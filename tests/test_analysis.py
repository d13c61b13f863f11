"""Analysis: each diagnostic fires on a template built for it and stays silent on a clean one."""

from __future__ import annotations

from functools import partial

import pytest

from app.analysis.analyze import analyze
from app.analysis.diagnostics import template_diagnostics
from app.render.core import RenderRequest
from app.render.engines import render_exactly
from app.render.engines.vllm.content_format import detect_content_format
from app.sources.library import Library
from tests.support.shared_data import TEMPLATES_DIR, VOCAB_DIR, needs_shared

TURN = "<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
GEN = "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"

#: ChatML that keeps everything: tools, calls with ids, results, reasoning.
CLEAN = (
    "{% if tools %}<|im_start|>system\n{% for t in tools %}{{ t|tojson }}\n{% endfor %}"
    "<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
    "{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>{{ c.id }} {{ c.function|tojson }}"
    "</tool_call>{% endfor %}"
    "{% if m.tool_call_id %} ({{ m.tool_call_id }}){% endif %}<|im_end|>\n{% endfor %}" + GEN
)

#: Templates each built to trigger one diagnostic (by id).
TRIGGERS = {
    "default-system-prompt": (
        "{% if messages[0].role != 'system' %}<|im_start|>system\nYou are a pirate.<|im_end|>\n"
        "{% endif %}{% for m in messages %}" + TURN + "{% endfor %}" + GEN
    ),
    "date-dependent": "Today is {{ strftime_now('%d %B %Y') }}.\n"
    "{% for m in messages %}" + TURN + "{% endfor %}" + GEN,
    "tools-ignored": "{% for m in messages %}" + TURN + "{% endfor %}" + GEN,
    "tool-results-dropped": (
        "{% for m in messages if m.role != 'tool' %}" + TURN + "{% endfor %}" + GEN
    ),
    "tool-call-ids-dropped": (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
        "{% for c in m.tool_calls or [] %}{{ c.function|tojson }}{% endfor %}<|im_end|>\n"
        "{% endfor %}" + GEN
    ),
    "reasoning-dropped": "{% for m in messages %}" + TURN + "{% endfor %}" + GEN,
    "raises-on-non-alternating": (
        "{% for m in messages %}{% if loop.index0 > 0 and m.role == loop.previtem.role %}"
        "{{ raise_exception('Roles must alternate') }}{% endif %}" + TURN + "{% endfor %}" + GEN
    ),
    "raises-on-system-refused": (
        "{% for m in messages %}\n{% if m.role == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        + TURN
        + "{% endfor %}"
        + GEN
    ),
    "no-generation-prompt": "{% for m in messages %}" + TURN + "{% endfor %}",
}

TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}


def request(template: str, **changes) -> RenderRequest:
    fields = {
        "messages": [{"role": "user", "content": "Hi"}],
        "add_generation_prompt": True,
        "tools": [TOOL],
    }
    return RenderRequest(template=template, **{**fields, **changes})


def diagnostic_ids(template: str, **changes) -> set[str]:
    found = template_diagnostics(request(template, **changes), lambda r: render_exactly(r).prompt)
    return {d.id for d in found}


def test_a_clean_template_has_no_findings():
    assert diagnostic_ids(CLEAN) == set()


@pytest.mark.parametrize("finding", TRIGGERS)
def test_each_diagnostic_fires_on_its_template(finding):
    assert finding in diagnostic_ids(TRIGGERS[finding])


def test_findings_carry_lines_where_they_can():
    found = template_diagnostics(
        request(TRIGGERS["raises-on-system-refused"]), lambda r: render_exactly(r).prompt
    )
    refused = next(d for d in found if d.id == "raises-on-system-refused")
    assert refused.line == 2 and "System role not supported" in refused.message
    dated = template_diagnostics(
        request(TRIGGERS["date-dependent"]), lambda r: render_exactly(r).prompt
    )
    assert next(d for d in dated if d.id == "date-dependent").line == 1


CHAT = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hello!"},
    {"role": "assistant", "content": "Hi! How can I help?"},
    {"role": "user", "content": "Tell me a joke."},
]


def analysis_of(app, template: str, source=None, **changes) -> dict:
    with app.app_context():
        pool = app.extensions["sandbox_pool"]
        store = app.extensions["source_store"]
        token_ids = partial(store.token_ids, source) if source is not None else None
        fields = {"messages": CHAT, "add_generation_prompt": True}
        request = RenderRequest(template=template, **{**fields, **changes})
        return analyze(request, pool, source, token_ids).to_json()


def test_chatml_keeps_the_whole_first_request(app):
    pairs = analysis_of(app, Library().template("chatml"))["prefix_stability"]
    assert len(pairs) == 1
    pair = pairs[0]
    assert pair["shared_chars"] == pair["request_chars"]
    assert pair["reused_share"] == 1.0 and pair["first_difference"] is None
    assert pair["answer_stays_prefix"] is True


@needs_shared
def test_mistral_nemo_keeps_only_its_first_nine_characters(app):
    template = (TEMPLATES_DIR / "mistralai-Mistral-Nemo-Instruct-2407.jinja").read_text()
    tokens = {"bos_token": "<s>", "eos_token": "</s>"}
    pair = analysis_of(app, template, special_tokens=tokens)["prefix_stability"][0]
    assert pair["shared_chars"] == 9 and pair["before"] == "<s>[INST]"
    assert pair["first_difference"] == 9


@needs_shared
def test_agent_loop_measure_catches_dropped_reasoning(app):
    chat = [
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi!", "reasoning_content": "Greet back."},
        {"role": "user", "content": "Bye."},
    ]
    qwen3 = (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    assert (
        analysis_of(app, qwen3, messages=chat)["prefix_stability"][0]["answer_stays_prefix"]
        is False
    )
    clean = analysis_of(app, CLEAN, messages=chat)["prefix_stability"][0]
    assert clean["answer_stays_prefix"] is True


@needs_shared
def test_vocabulary_findings_with_a_real_vocabulary(app, client):
    gguf = (VOCAB_DIR / "ggml-vocab-llama-spm.gguf").read_bytes()
    source_id = client.post(
        "/api/sources/gguf", data=gguf, content_type="application/octet-stream"
    ).json["id"]
    source = app.extensions["source_store"].get(source_id)
    tokens = {"bos_token": "<s>", "eos_token": "</s>"}
    chatml = "{{ bos_token }}" + Library().template("chatml")
    ids = {d["id"] for d in analysis_of(app, chatml, source, special_tokens=tokens)["diagnostics"]}
    # llama-spm adds BOS itself, has no <|im_end|> token, and splits <|im_start|>.
    assert {"doubled-bos", "end-marker-split", "marker-split"} <= ids
    llama2 = "{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} [/INST]"
    llama2 += "{% else %}{{ m.content }}{{ eos_token }}{% endif %}{% endfor %}"
    ids = {d["id"] for d in analysis_of(app, llama2, source, special_tokens=tokens)["diagnostics"]}
    assert not {"doubled-bos", "end-marker-split", "end-marker-not-eog"} & ids


def test_analyze_api(client):
    body = {
        "template": Library().template("chatml"),
        "messages": CHAT,
        "add_generation_prompt": True,
    }
    answer = client.post("/api/analyze", json=body).json
    assert answer["content_format"] == "string"
    assert answer["capabilities"]["supports_system_role"] is True
    assert answer["prefix_stability"][0]["reused_share"] == 1.0
    hostile = {
        **body,
        "template": "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}"
        "{% endfor %}",
    }
    assert client.post("/api/analyze", json=hostile).status_code == 422


#: Templates and what vLLM 0.33.0's `_detect_content_format` answers for each (asked in
#: oracles.vllm.record's environment).
CONTENT_FORMATS = [
    ("{% for m in messages %}{{ m.content }}{% endfor %}", "string"),
    ("{% for m in messages %}{% for part in m.content %}{{ part.text }}{% endfor %}{% endfor %}",
     "openai"),
    ("{% for m in messages %}{% for part in m['content'] | list %}x{% endfor %}{% endfor %}",
     "openai"),
    ("{% set msgs = messages[1:] %}{% for m in msgs %}{% for p in m.content %}{% endfor %}"
     "{% endfor %}", "openai"),
    # A bare `content` counts outside macros only; inside one, only a parameter that some
    # call passes a message's content (positionally or by keyword).
    ("{% macro show(content) %}{% for item in content %}{{ item }}{% endfor %}{% endmacro %}",
     "string"),
    ("{% macro show(content) %}{% for item in content %}{{ item }}{% endfor %}{% endmacro %}"
     "{% for m in messages %}{{ show(m.content) }}{% endfor %}", "openai"),
    ("{% macro show(parts) %}{% for item in parts %}{{ item }}{% endfor %}{% endmacro %}"
     "{% for m in messages %}{{ show(parts=m['content']) }}{% endfor %}", "openai"),
    ("{% macro show(parts) %}{% for item in parts %}{{ item }}{% endfor %}{% endmacro %}"
     "{% for m in messages %}{{ show(m.get('content')) }}{% endfor %}", "string"),
    ("{% for m in messages %}{% set content = m.content %}{% for item in content %}{% endfor %}"
     "{% endfor %}", "openai"),
    # Namespace aliases of the messages.
    ("{% set ns = namespace(rest=messages) %}{% for m in ns.rest %}{% for p in m.content %}"
     "{% endfor %}{% endfor %}", "openai"),
    ("{% set ns = namespace(rest=[]) %}{% set ns.rest = messages[1:] %}{% for m in ns.rest %}"
     "{% for p in m.content %}{% endfor %}{% endfor %}", "openai"),
    ("{% for a, b in messages %}{% endfor %}", "string"),
    ("{% if %}", "string"),
]  # fmt: skip


@pytest.mark.parametrize(("template", "expected"), CONTENT_FORMATS)
def test_content_format_as_vllm_decides(template, expected):
    assert detect_content_format(template) == expected


def test_diff_api(client):
    body = {
        "left": {"template": "A{{ messages[0].content }}", "messages": CHAT[1:2]},
        "right": {"template": "B{{ messages[0].content }}", "messages": CHAT[1:2]},
    }
    answer = client.post("/api/diff", json=body).json
    assert (answer["left"]["prompt"], answer["right"]["prompt"]) == ("AHello!", "BHello!")
    assert answer["opcodes"][0] == ["replace", 0, 1, 0, 1]
    assert answer["token_opcodes"] is None
    broken = {**body, "right": {"template": "{% if %}", "messages": CHAT[1:2]}}
    assert (
        client.post("/api/diff", json=broken).json["right"]["error"]["type"]
        == "TemplateSyntaxError"
    )


def test_command_api_gives_every_engine(client):
    body = {
        "template": Library().template("chatml"),
        "kwargs": {"enable_thinking": False},
        "model": "model.gguf",
        "messages": CHAT,
    }
    answer = client.post("/api/command", json=body).json
    forms = {(c["engine"], c["form"]) for c in answer["commands"]}
    assert {
        ("llama-server", "inline"),
        ("llama-server", "file"),
        ("llama-server", "builtin"),
    } <= forms
    assert {("vllm", "serve"), ("transformers", "python"), ("llama-cli", "env")} <= forms
    assert answer["builtin"] == "chatml"
    inline = next(c for c in answer["commands"] if c["form"] == "inline")
    assert inline["command"].index("--jinja") < inline["command"].index("--chat-template")
    assert client.post("/api/command", json={"kwargs": {}}).status_code == 400


WEATHER_TOOL = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
}


@needs_shared
def test_only_turn_delimiters_are_warned_as_split(app, client):
    """Qwen3 writes `<tools>` and `<function-name>` as plain text by design: only the
    markers that delimit turns (`<|im_start|>`) or end them must be single tokens."""
    gguf = (VOCAB_DIR / "ggml-vocab-llama-spm.gguf").read_bytes()  # splits every marker
    source_id = client.post(
        "/api/sources/gguf", data=gguf, content_type="application/octet-stream"
    ).json["id"]
    source = app.extensions["source_store"].get(source_id)
    qwen3 = (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    tokens = {"eos_token": "<|im_end|>"}
    found = analysis_of(app, qwen3, source, special_tokens=tokens, tools=[WEATHER_TOOL])
    split = [d["message"] for d in found["diagnostics"] if d["id"] == "marker-split"]
    assert any("'<|im_start|>'" in message for message in split)
    for plain in ("<tools>", "</tools>", "<function-name>", "<args-json-object>", "<tool_call>"):
        assert not any(repr(plain) in message for message in split), plain
    assert found["end_of_turn_marker"] == "<|im_end|>"
    assert "end-marker-split" in {d["id"] for d in found["diagnostics"]}


def test_a_finding_quotes_a_little_of_a_huge_token():
    # The BOS token is the request's own: 1,000,000 characters of it came back in the
    # finding that names it.
    from app.analysis.vocab_checks import doubled_bos
    from app.errors import MESSAGE_CHARS

    bos = "<s>" * 333_333
    [finding] = doubled_bos(bos + "Hello", "{{ bos_token }}", bos, True)
    assert len(finding.message) <= MESSAGE_CHARS and "characters cut" in finding.message
