"""vLLM's newest parsers (DeepSeek V3.2 and V4's DSML, Gemma 4, Kimi K3, and the reasoning
parsers vLLM pairs with them): what is theirs alone.

Their recordings and vLLM's own test cases are checked with the others in
`tests/test_vllm_answers_model_parsers.py`; here, the call each model's own template
writes is read as vLLM 0.33.0 read it, hostile 100 kB answers are read in linear time,
and the notes say what vLLM did silently.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import REPO
from tests.support.shared_data import TEMPLATES_DIR, needs_shared
from tests.test_vllm_answers_model_parsers import _read, assert_linear, assert_noted, hostile_params

ANSWERS = REPO / "oracles" / "vllm" / "answers"


def _menu_call(stem: str, template: str) -> dict[str, Any]:
    doc = json.loads((ANSWERS / f"{stem}.json").read_text(encoding="utf-8"))
    return next(c for c in doc["cases"] if c["name"] == f"menu/{template}/tool_call")


@pytest.mark.parametrize(
    "stem, template",
    [
        ("tool_deepseek_v32", "deepseek-ai-DeepSeek-V3.2"),
        ("tool_deepseek_v4", "deepseek-ai-DeepSeek-V4"),
        ("tool_gemma4", "google-gemma-4-31B-it"),
        ("tool_kimi_k3", "Kimi-K3"),
    ],
)
def test_the_models_own_tool_call_is_read_as_vllm_reads_it(stem: str, template: str) -> None:
    """The call each template writes for an assistant (the Completion menu's text) is a
    call to get_weather for Paris, in vLLM 0.33.0's recording and in ours."""
    case = _menu_call(stem, template)
    assert case["vllm"]["tool_calls"] == [["get_weather", '{"city": "Paris"}', None]]
    assert _read(stem, case, case["tools"]) == case["vllm"]


_DS = ("<｜DSML｜function_calls>", '<｜DSML｜invoke name="', '<｜DSML｜parameter name="')
_V4 = "<｜DSML｜tool_calls>"
_S = '<|"|>'
_K3 = "<|open|>tools<|sep|>"
#: (head, repeated unit, times, tail), each about 100 kB: repeated openers, unclosed
#: markup, deep nesting, long lines.
HOSTILE: dict[str, tuple[tuple[str, str, int, str], ...]] = {
    "tool_deepseek_v32": (
        (_DS[0], _DS[1], 5000, ""),
        (_DS[0] + _DS[1] + 'f">', _DS[2] + 'a" string="false">1', 2500, ""),
        (_DS[0] + _DS[1] + 'f">', _DS[2] + 'a" string="true">', 3000, ""),
        (_DS[0] + _DS[1] + 'f">' + _DS[2] + 'a">', "[", 50000, ""),
    ),
    "tool_deepseek_v4": (
        (_V4, _DS[1] + 'f">' + _DS[2] + 'a">1</｜DSML｜parameter>', 1500, ""),
        ("", "<think>", 12000, _V4),
    ),
    "tool_gemma4": (
        ("", "<|tool_call>call:", 6000, ""),
        ("<|tool_call>call:f{", "a:{", 30000, "<tool_call|>"),
        ("<|tool_call>call:f{", f"a:{_S}x{_S},", 8000, "<tool_call|>"),
        ("<|tool_call>call:f{a:", "[", 50000, "<tool_call|>"),
        ("", "<|tool_call>call:f{}<tool_call|>", 3000, ""),
    ),
    "tool_kimi_k3": (
        (_K3, '<|open|>call tool="f"<|sep|>', 4000, ""),
        (_K3 + '<|open|>call tool="f"<|sep|>', '<|open|>argument key="a"<|sep|>', 3000, ""),
        ("", "<|open|>response<|sep|>", 4000, _K3),
        (_K3, "<|open|>call " + "x" * 40, 2000, ""),
    ),
    "reasoning_deepseek_v3": (("", "</think>", 12000, ""),),
    "reasoning_deepseek_v4": (("", "<think>", 14000, ""), ("", _V4, 5000, "")),
    "reasoning_gemma4": (("", "<|channel>", 10000, ""), ("thought\n", "<channel|>", 10000, "")),
    "reasoning_kimi_k3": (
        ("", "<|open|>think<|sep|>", 5000, ""),
        ("", "<|close|>response<|sep|>", 4000, ""),
        ("", "<|open|> response <|sep|>", 4000, ""),
    ),
}


@pytest.mark.parametrize("stem, shape", hostile_params(HOSTILE))
def test_hostile_answers_take_linear_time(stem: str, shape: tuple[str, str, int, str]) -> None:
    assert_linear(stem, shape)


_K3_CALL = '<|open|>call index="1"<|sep|><|close|>call<|sep|>'
NOTES = [
    ("tool_gemma4", "<|tool_call>call:f{n:" + "{a:" * 500 + "<tool_call|>", "RecursionError"),
    (
        "tool_deepseek_v32",
        '<｜DSML｜function_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="n" '
        'string="false">' + "[" * 5000 + "</｜DSML｜parameter></｜DSML｜invoke>",
        "nests too deeply",
    ),
    ("tool_kimi_k3", f"<|open|>tools<|sep|>{_K3_CALL}<|close|>tools<|sep|>", "reads no call"),
    ("reasoning_kimi_k3", "still thinking", "never closes its think channel"),
    ("reasoning_gemma4", "Hmm.<channel|>Paris.", "as if it opened one"),
    ("reasoning_deepseek_v3", "Hmm.</think>Paris.", "does not set `thinking`"),
    ("reasoning_deepseek_v4", "still thinking", "no `</think>`"),
]


@pytest.mark.parametrize("stem, text, words", NOTES, ids=[n[0] for n in NOTES])
def test_notes_say_what_vllm_did(stem: str, text: str, words: str) -> None:
    assert_noted(stem, text, words)


#: The shared templates whose own tool call vLLM reads with its newest parsers: the
#: pair `vllm serve` is started with, as the playground suggests it.
OUTSIDE = {
    "google-gemma-4-31B-it": "gemma4+gemma4",
    "Kimi-K3": "kimi_k3+kimi_k3",
    "deepseek-ai-DeepSeek-V3.2": "deepseek_v32+deepseek_v3",
    "deepseek-ai-DeepSeek-V4": "deepseek_v4+deepseek_v4",
}


@needs_shared
@pytest.mark.parametrize("template", OUTSIDE)
def test_the_page_reads_the_models_tool_call_as_vllm_serve_did(client, template: str) -> None:
    """Through the API, as a visitor does it: the template's own tool call (the Completion
    menu's) is read by the suggested pair into the message `vllm serve` answered for it."""
    body = {
        "template": (TEMPLATES_DIR / f"{template}.jinja").read_text(encoding="utf-8"),
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "add_generation_prompt": True,
        "engines": ["vllm"],
    }
    made = client.post("/api/completion", json={**body, "kind": "tool_call"}).get_json()
    recorded = json.loads((ANSWERS / f"serve_{OUTSIDE[template]}.json").read_text("utf-8"))
    case = next(c for c in recorded["cases"] if c["name"] == f"menu/{template}/tool_call")
    assert (made["completion"], made["tools"]) == (case["text"], case["tools"])
    answer = client.post("/api/parse", json={**body, **made}).get_json()
    (entry,) = answer["engines"]
    assert entry["parser"] == OUTSIDE[template].replace("+", " + ")
    message = entry["message"]
    calls = [[c["function"]["name"], c["function"]["arguments"]] for c in message["tool_calls"]]
    assert (
        calls
        == [call[:2] for call in case["vllm"]["tool_calls"]]
        == [["get_weather", '{"city": "Paris"}']]
    )
    said = (message["content"], message.get("reasoning_content"))
    assert said == (case["vllm"]["content"], case["vllm"]["reasoning"])
