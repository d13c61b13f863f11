"""A completion pasted with its stop token is read as the runtime reads it: without it.

A runtime stops generating at the template's stop token (its EOS, or the end-of-turn
marker it writes after an assistant message) and never hands it to its parser; a raw log
shows it all the same (`...</tool_call><|im_end|>`). Found by an outside check (issue 36):
the llama.cpp engine answered "HTTP 500, not peg-native" for such a completion, while the
vLLM engine read it and the Edge-LLM engine stripped it. Each engine now reads the
completion up to the stop token, and the Response view says it left the token out.
"""

from __future__ import annotations

import json

import pytest

from app.answers.stop_tokens import cut_stop_token
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

QUESTION = [{"role": "user", "content": "What's the weather in Paris?"}]
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


@pytest.fixture(scope="module")
def qwen3() -> str:
    return (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")


def parse(client, template: str, completion: str, path: str = "/api/parse") -> dict:
    body = {"template": template, "messages": QUESTION, "add_generation_prompt": True}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    body.update(tools=tools, completion=completion)
    answer = client.post(path, data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


@needs_shared
def test_every_engine_reads_a_tool_call_pasted_with_its_stop_token(client, qwen3):
    answer = parse(client, qwen3, CALL + "<|im_end|>\n")
    assert answer["stop_token"] == "<|im_end|>"
    for entry in answer["engines"]:
        if entry["engine"] in ("llama.cpp", "vllm", "edge-llm"):
            calls = entry["message"]["tool_calls"]
            assert [c["function"]["name"] for c in calls] == ["get_weather"], entry
    # The same as without the token, engine by engine.
    without = parse(client, qwen3, CALL)
    assert without["stop_token"] is None
    strip = lambda entries: [{k: v for k, v in e.items()} for e in entries]  # noqa: E731
    assert strip(answer["engines"]) == strip(without["engines"])


@needs_shared
def test_a_stop_token_in_the_middle_stays(client, qwen3):
    middle = "Paris.<|im_end|>\n<|im_start|>user\nThanks"
    answer = parse(client, qwen3, middle)
    assert answer["stop_token"] is None
    vllm = next(e for e in answer["engines"] if e["engine"] == "vllm")["message"]
    assert "<|im_end|>" in (vllm.get("content") or "") + (vllm.get("reasoning_content") or "")


def test_which_tokens_stop_a_template():
    chatml = "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}"
    assert cut_stop_token("Hi<|im_end|>  \n", chatml, {}) == ("Hi", "<|im_end|>")
    assert cut_stop_token("Hi\n<|im_end|>", chatml, {}) == ("Hi\n", "<|im_end|>")
    # The EOS the special tokens name, whatever the template writes.
    assert cut_stop_token("Hi</s>", chatml, {"eos_token": "</s>"}) == ("Hi", "</s>")
    # A marker this template never writes is no stop token of its runtime.
    assert cut_stop_token("Hi<|eot_id|>", chatml, {}) == ("Hi<|eot_id|>", None)
    assert cut_stop_token("Hi", chatml, {}) == ("Hi", None)
    assert cut_stop_token("<|im_end|>", chatml, {}) == ("", "<|im_end|>")


@needs_shared
def test_the_response_view_says_it_left_the_token_out(client, qwen3):
    form = {
        "template": qwen3,
        "messages": json.dumps(QUESTION),
        "add_generation_prompt": "on",
        "completion": "Paris is sunny.<|im_end|>",
        "view": "response",
    }
    page = client.post("/fragments/output", data=form).get_data(as_text=True)
    assert 'id="stop-token"' in page
    assert "&lt;|im_end|&gt;" in page and "stops generating at it" in page
