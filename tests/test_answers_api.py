"""POST /api/parse, /api/roundtrip and /api/completion: the Response view's data over
HTTP, bounded like every other input."""

from __future__ import annotations

import json

import pytest

from app.render.engines import ENGINES
from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

QUESTION = [{"role": "user", "content": "What's the weather and the local time in Paris?"}]


def post(client, path: str, body: dict):
    # Key order is part of the input (tojson writes it): send the body as it is.
    return client.post(path, data=json.dumps(body), content_type="application/json")


@pytest.fixture(scope="module")
def qwen3() -> str:
    return (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")


@pytest.fixture()
def parallel(client, qwen3) -> dict:
    """Qwen3's own parallel tool calls, from the Completion menu, as a parse body."""
    body = {"template": qwen3, "messages": QUESTION, "add_generation_prompt": True}
    made = post(client, "/api/completion", {**body, "kind": "parallel_tool_calls"})
    assert made.status_code == 200, made.get_json()
    entry = made.get_json()
    assert entry["tools"], "the menu brings its tools to a conversation without any"
    return {**body, "tools": entry["tools"], "completion": entry["completion"]}


@needs_shared
def test_parse_answers_every_engine_with_its_parser_or_what_it_does_instead(client, parallel):
    answer = post(client, "/api/parse", parallel)
    assert answer.status_code == 200, answer.get_json()
    engines = {entry["engine"]: entry for entry in answer.get_json()["engines"]}
    assert list(engines) == list(ENGINES)
    for engine in ("llama.cpp", "vllm", "edge-llm"):
        message = engines[engine]["message"]
        assert [c["function"]["name"] for c in message["tool_calls"]] == [
            "get_weather",
            "get_local_time",
        ], engine
        arguments = [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]]
        assert arguments == [{"city": "Paris"}, {"city": "Paris"}]
    assert engines["vllm"]["parser"].startswith("hermes")
    # No model name here (a typed template): Edge-LLM's auto takes its generic parser.
    assert engines["edge-llm"]["parser"] == "generic"
    for engine in ("tgi", "transformers.js", "transformers"):
        assert engines[engine]["message"] is None and engines[engine]["no_parser"], engine
    assert "round_trip" not in engines["vllm"]


@needs_shared
def test_roundtrip_says_per_engine_whether_the_cache_is_reused(client, parallel):
    answer = post(client, "/api/roundtrip", {**parallel, "engines": ["llama.cpp", "vllm"]})
    assert answer.status_code == 200, answer.get_json()
    engines = answer.get_json()["engines"]
    assert [e["engine"] for e in engines] == ["llama.cpp", "vllm"]
    for entry in engines:
        trip = entry["round_trip"]
        assert trip["reused"] in (True, False) and trip["reason"]
        if trip["reused"] is False:
            assert trip["at"] is not None and trip["expected"] != trip["actual"]


@needs_shared
def test_broken_json_is_explained_not_a_500(client, parallel):
    broken = parallel["completion"].replace('"city": "Paris"}', '"city": "Paris"', 1)
    answer = post(client, "/api/parse", {**parallel, "completion": broken})
    assert answer.status_code == 200, answer.get_json()
    engines = {entry["engine"]: entry for entry in answer.get_json()["engines"]}
    for engine in ("llama.cpp", "vllm", "edge-llm"):
        entry = engines[engine]
        assert entry["problem"] is None, entry
        said = " ".join(entry["notes"]) + (entry["error"] or "")
        assert said, f"{engine} says nothing about the broken call"
    # Edge-LLM keeps the call it reads and returns the broken block as content.
    edge = engines["edge-llm"]
    assert [c["function"]["name"] for c in edge["message"]["tool_calls"]] == ["get_local_time"]
    assert "<tool_call>" in edge["message"]["content"] and "not valid JSON" in str(edge["notes"])


def test_a_completion_over_the_limit_is_refused_naming_it(client):
    body = {"template": "x", "messages": [], "completion": "x" * (256 * 1024 + 1)}
    answer = post(client, "/api/parse", body)
    assert answer.status_code == 422
    error = answer.get_json()["error"]
    assert error["limit"] == "completion_kb" and "PLAYGROUND_COMPLETION_KB" in error["message"]


def test_bad_fields_are_named(client):
    for body, field in [
        ({"template": "x", "messages": [], "completion": 3}, "completion"),
        ({"template": "x", "messages": [], "engines": ["nope"]}, "engines"),
        ({"template": "x", "messages": [], "parsers": {"vllm": 1}}, "parsers.vllm"),
    ]:
        answer = post(client, "/api/parse", body)
        assert answer.status_code == 400, body
        assert answer.get_json()["error"]["field"] == field


def test_the_menu_refuses_an_unknown_entry(client):
    answer = post(client, "/api/completion", {"template": "x", "messages": [], "kind": "poem"})
    assert answer.status_code == 422
    assert "no entry 'poem'" in answer.get_json()["error"]["message"]


@needs_shared
def test_a_share_keeps_the_completion_and_the_parser_choices(client, parallel):
    state = {**parallel, "parsers": {"vllm": {"tool_call_parser": "hermes"}}}
    made = post(client, "/api/shares", state)
    assert made.status_code in (200, 201), made.get_json()
    share = client.get(f"/s/{made.get_json()['id']}.json").get_json()
    kept = share.get("state", share)
    assert kept["completion"] == parallel["completion"]
    assert kept["parsers"] == {"vllm": {"tool_call_parser": "hermes"}}


@needs_shared
def test_the_vllm_command_carries_the_parsers_in_force(client, qwen3):
    def vllm_command(parsers: dict | None = None) -> str:
        body = {"template": qwen3, "kwargs": {}, **({"parsers": parsers} if parsers else {})}
        commands = post(client, "/api/command", body).get_json()["commands"]
        return next(c["command"] for c in commands if c["engine"] == "vllm")

    suggested = vllm_command()
    assert "--enable-auto-tool-choice --tool-call-parser hermes" in suggested
    assert "--reasoning-parser qwen3" in suggested
    chosen = vllm_command({"vllm": {"tool_call_parser": "qwen3_xml", "reasoning_parser": "none"}})
    assert "--tool-call-parser qwen3_xml" in chosen and "--reasoning-parser" not in chosen
    unknown = vllm_command({"vllm": {"tool_call_parser": "$(reboot)"}})
    assert "reboot" not in unknown and "--tool-call-parser hermes" in unknown


@needs_shared
def test_a_mistral_tool_call_goes_round_with_vllms_9_character_id(client):
    """vLLM's mistral parser gives a call a random 9-character id (MistralToolCall), and
    Mistral's templates refuse any other; the round trip must render, not raise."""
    template = (TEMPLATES_DIR / "Mistral-Small-3.2-24B-Instruct-2506.jinja").read_text("utf-8")
    body = {
        "template": template,
        "messages": QUESTION,
        "add_generation_prompt": True,
        "special_tokens": {"bos_token": "<s>", "eos_token": "</s>"},
        "engines": ["vllm"],
    }
    made = post(client, "/api/completion", {**body, "kind": "tool_call"}).get_json()
    body |= {"tools": made["tools"], "completion": made["completion"]}
    (entry,) = post(client, "/api/roundtrip", body).get_json()["engines"]
    assert entry["parser"] == "mistral"
    (call,) = entry["message"]["tool_calls"]
    assert len(call["id"]) == 9 and call["id"].isalnum(), call
    assert "length 9" not in entry["round_trip"]["reason"], entry["round_trip"]
    assert entry["round_trip"]["reused"] is not None, entry["round_trip"]


def test_the_llama_cpp_commands_carry_a_chosen_reasoning_format(client):
    """A --reasoning-format picked for llama.cpp's parser goes on every llama-server and
    llama-cli line that reads the answer with Jinja (the flag and its environment
    variable, LLAMA_ARG_THINK in common/arg.cpp); the default `auto` adds nothing."""

    def llama_commands(parsers: dict | None = None) -> dict[str, str]:
        body = {"template": "{{ messages[0].content }}", "messages": QUESTION}
        commands = post(client, "/api/command", {**body, "parsers": parsers or {}})
        assert commands.status_code == 200, commands.get_json()
        return {
            f"{c['engine']} {c['form']}": c["command"]
            for c in commands.get_json()["commands"]
            # The program is under "engine"; the curl line asks a running server to render.
            if c["engine"] in ("llama-server", "llama-cli") and c["form"] != "curl"
        }

    default = llama_commands()
    assert default and not any("--reasoning-format" in c for c in default.values())
    assert not any("LLAMA_ARG_THINK" in c for c in default.values())
    for chosen in ("none", "deepseek"):
        lines = llama_commands({"llama.cpp": {"reasoning_format": chosen}})
        assert set(lines) == set(default)
        for name, line in lines.items():
            if name.endswith("env"):
                assert f"LLAMA_ARG_THINK={chosen}" in line, line
            elif name.endswith("builtin"):  # --no-jinja: a content-only reading
                assert "--reasoning-format" not in line, line
            else:
                assert f"--reasoning-format {chosen}" in line, line
    assert llama_commands({"llama.cpp": {"reasoning_format": "auto"}}) == default
    unknown = llama_commands({"llama.cpp": {"reasoning_format": "$(reboot)"}})
    assert unknown == default


def test_transformers_reads_with_the_response_template_of_uploaded_files(client):
    import io

    cases = (REPO / "oracles/transformers/parse_response_cases.json").read_text("utf-8")
    response_template = json.loads(cases)["templates"]["qwen3"]
    config = {"chat_template": QWEN_LIKE, "response_template": response_template}
    upload = {"f0": (io.BytesIO(json.dumps(config).encode()), "tokenizer_config.json")}
    loaded = client.post("/api/sources/hf", data=upload, content_type="multipart/form-data")
    assert loaded.status_code in (200, 201), loaded.get_json()
    body = {
        "template": QWEN_LIKE,
        "messages": [{"role": "user", "content": "Is 7 prime?"}],
        "add_generation_prompt": True,
        "completion": "<think>\nIt has no divisors.\n</think>\n\nYes.",
        "source": loaded.get_json()["id"],
        "engines": ["transformers"],
    }
    entry = post(client, "/api/parse", body).get_json()["engines"][0]
    assert entry["no_parser"] is None and entry["parser"] == "parse_response"
    # transformers' own Qwen3 response template has fields for thinking and tool calls
    # only: parse_response keeps no content (checked against transformers in
    # tests/test_transformers_answers.py).
    assert entry["message"]["reasoning_content"] == "It has no divisors."
    assert entry["message"]["content"] is None
    without = post(client, "/api/parse", {**body, "source": None}).get_json()["engines"][0]
    assert without["message"] is None and "response_template" in without["no_parser"]


QWEN_LIKE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
