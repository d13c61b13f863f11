"""vLLM's gpt-oss parsers (`openai`, `openai_gptoss`: its `HarmonyParser`) against vLLM.

`oracles/vllm/answers/harmony.json` holds what vLLM 0.33.0's `HarmonyParser.parse`
returned (run by `oracles/harmony/record.py`) with both flags, the reasoning parser alone
and the tool parser alone; `parser_cases/harmony.json` the values vLLM's own tests expect
(its Harmony parser's, and its OpenAI tool parser's, which runs the tool parser alone).
Our reading must return the same, and hostile inputs read in linear time.
"""

from __future__ import annotations

import json

import pytest

from app.render.engines.vllm.answers import reasoning_openai_gptoss, tool_openai
from app.render.engines.vllm.answers._harmony_reading import read
from app.render.engines.vllm.answers.base import ParserInput
from tests.support import REPO
from tests.support.timing import cpu_seconds

RECORDED = json.loads((REPO / "oracles/vllm/answers/harmony.json").read_text())["cases"]
EXPECTED = json.loads((REPO / "oracles/vllm/parser_cases/harmony.json").read_text())["cases"]
PAIRS = {
    "openai+openai_gptoss": (True, True),
    "openai_gptoss": (True, False),
    "openai": (False, True),
}


def _ours(text: str, reasoning_parser: bool, tool_parser: bool) -> dict:
    found = read(text, reasoning_parser=reasoning_parser, tool_parser=tool_parser)
    calls = [[call.name, call.arguments] for call in found.tool_calls] or None
    return {"reasoning": found.reasoning, "content": found.content, "tool_calls": calls}


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("case", RECORDED, ids=[c["name"] for c in RECORDED])
def test_same_as_vllm(case: dict, pair: str) -> None:
    assert _ours(case["text"], *PAIRS[pair]) == case[pair]


@pytest.mark.parametrize("case", EXPECTED, ids=[c["name"] for c in EXPECTED])
def test_vllm_own_expectations(case: dict) -> None:
    """The fields vLLM's test checks, read with the parsers it runs (both, unless `pair`)."""
    assert case["holds_in_vllm_0_33_0"]
    ours = _ours(case["text"], *PAIRS[case.get("pair", "openai+openai_gptoss")])
    assert {key: ours[key] for key in case["expect"]} == case["expect"]


def test_module_contract() -> None:
    assert tool_openai.NAME == "openai"
    assert reasoning_openai_gptoss.NAME == "openai_gptoss"
    text = (
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant to=functions.get_weather"
        '<|channel|>commentary json<|message|>{"city":"Paris"}<|call|>'
    )
    tools = tool_openai.extract(text, ParserInput())
    assert tools.tools_called and tools.content is None
    assert tools.tool_calls[0].arguments == '{"city": "Paris"}'
    assert tools.tool_calls[0].id.startswith("chatcmpl-tool-")
    assert any("analysis channel is dropped" in note for note in tools.notes)
    reasoning = reasoning_openai_gptoss.extract(text, ParserInput())
    assert (reasoning.reasoning, reasoning.content) == ("Think.", None)
    both = tool_openai.read_pair(text, reasoning_parser=True, tool_parser=True)
    assert both.reasoning == "Think." and len(both.tool_calls) == 1


def test_deep_arguments_say_vllm_fails() -> None:
    text = "<|channel|>commentary to=functions.f json<|message|>" + "[" * 100_000
    found = read(text, reasoning_parser=True, tool_parser=True)
    assert found.tool_calls[0].arguments.startswith("[[")
    assert any("RecursionError" in note or "not valid JSON" in note for note in found.notes)


HOSTILE = {
    "calls": '<|start|>assistant to=functions.f<|channel|>commentary<|message|>{"a":1}<|call|>'
    * 1_200,
    "garbage_between": "<|channel|>final<|message|>x<|end|>" + "junk " * 20_000,
    "open_header": "<|channel|>" + "to=x " * 20_000,
    "unclosed_json": "<|channel|>commentary to=functions.f<|message|>" + '{"a":' * 20_000,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_inputs_read_in_linear_time(name: str) -> None:
    text = HOSTILE[name]
    assert len(text) >= 90_000
    ours = 3 * cpu_seconds(lambda: read(text, reasoning_parser=True, tool_parser=True))
    scan = 6 * cpu_seconds(lambda: sum(1 for char in text if char == "<"))
    assert ours < 60 * scan + 0.05
