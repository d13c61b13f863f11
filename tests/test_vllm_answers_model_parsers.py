"""vLLM's DeepSeek (V3 to V4), Kimi K2 and K3, GLM, MiniMax M2, Gemma 4, Qwen3 and Granite
parsers against vLLM itself.

`oracles/vllm/answers/<kind>_<name>.json` holds what vLLM 0.33.0's own parser
classes returned for each case (vLLM's test inputs, the Completion menu's answers for the
shared templates, malformed variants and mixed markup); our module must return the same,
field for field. `oracles/vllm/parser_cases/` holds vLLM's test inputs with the
values its tests expect: our module must meet an expectation exactly where vLLM 0.33.0
does. Hostile 100 kB inputs must come back in time linear in their length.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from app.render.engines.vllm.answers.base import ParserInput
from app.render.engines.vllm.answers.registry import REASONING_PARSERS, TOOL_PARSERS
from oracles.vllm.expectations import meets
from tests.support import REPO
from tests.support.timing import cpu_seconds

ANSWERS = REPO / "oracles" / "vllm" / "answers"
CASES = REPO / "oracles" / "vllm" / "parser_cases"
PACKAGE = "app.render.engines.vllm.answers"

#: The parsers these tests cover, as `<kind>_<name>` (module and file names).
PARSERS = (
    "tool_deepseek_v3",
    "tool_deepseek_v31",
    "tool_kimi_k2",
    "tool_glm45",
    "tool_minimax_m2",
    "tool_deepseek_v32",
    "tool_deepseek_v4",
    "tool_gemma4",
    "tool_kimi_k3",
    "reasoning_deepseek_r1",
    "reasoning_qwen3",
    "reasoning_glm45",
    "reasoning_granite",
    "reasoning_deepseek_v3",
    "reasoning_deepseek_v4",
    "reasoning_gemma4",
    "reasoning_kimi_k3",
)


def _module(stem: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{stem}")


def _read(stem: str, case: dict[str, Any], tools: list[dict] | None) -> dict[str, Any]:
    """Our module's answer for a case, in the recording's shape."""
    kind, name = stem.split("_", 1)
    given = ParserInput(
        tools,
        case.get("kwargs") or {},
        tuple(case.get("special_tokens") or ()),
        case.get("prompt"),
        with_reasoning_parser=not case.get("no_reasoning_parser"),
        tool_choice_none=case.get("tool_choice") == "none",
    )
    if kind == "reasoning":
        split = REASONING_PARSERS[name](case["text"], given)
        return {"reasoning": split.reasoning, "content": split.content}
    found = TOOL_PARSERS[name](case["text"], given)
    return {
        "tools_called": found.tools_called,
        # vLLM's random ids are not comparable; the ids it reads from the text are.
        "tool_calls": [
            [call.name, call.arguments, None if call.id.startswith("chatcmpl-tool-") else call.id]
            for call in found.tool_calls
        ],
        "content": found.content,
    }


def _recorded() -> list[Any]:
    params = []
    for stem in PARSERS:
        doc = json.loads((ANSWERS / f"{stem}.json").read_text(encoding="utf-8"))
        for case in doc["cases"]:
            # The recording's tokenizer may have special tokens besides the markers.
            case.setdefault("special_tokens", doc.get("special_tokens"))
            params.append(pytest.param(stem, case, case["tools"], id=f"{stem}:{case['name']}"))
    return params


@pytest.mark.parametrize("stem, case, tools", _recorded())
def test_module_answers_as_vllm_does(stem: str, case: dict, tools: list[dict] | None) -> None:
    assert _read(stem, case, tools) == case["vllm"]


@pytest.mark.parametrize("stem", PARSERS)
def test_recordings_are_vllm_0_33_0(stem: str) -> None:
    doc = json.loads((ANSWERS / f"{stem}.json").read_text(encoding="utf-8"))
    assert doc["vllm"] == "0.33.0"
    assert doc["parser"] == stem.replace("_", ":", 1)
    assert len(doc["cases"]) >= 30


def _meets(stem: str, expect: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Whether an answer meets what vLLM's test asserts for it."""
    if stem.startswith("reasoning_"):
        return ours["reasoning"] == expect["reasoning"] and ours["content"] == expect["content"]
    return meets(expect, ours)


def _parser_cases() -> list[Any]:
    params = []
    for stem in PARSERS:
        doc = json.loads((CASES / f"{stem}.json").read_text(encoding="utf-8"))
        assert doc["parser"] == stem.replace("_", ":", 1)
        for case in doc["cases"]:
            params.append(pytest.param(stem, case, id=f"{stem}:{case['name']}"))
    return params


@pytest.mark.parametrize("stem, case", _parser_cases())
def test_vllm_test_expectations(stem: str, case: dict) -> None:
    """Our module meets the upstream test's expectation exactly where vLLM 0.33.0 does
    (a test read from a later commit may expect a behaviour 0.33.0 lacks)."""
    ours = _read(stem, case, case.get("tools"))
    assert _meets(stem, case["expect"], ours) is case["holds_in_vllm_0_33_0"]


@pytest.mark.parametrize("stem", PARSERS)
def test_module_contract(stem: str) -> None:
    module = _module(stem)
    kind, name = stem.split("_", 1)
    table = TOOL_PARSERS if kind == "tool" else REASONING_PARSERS
    assert name == module.NAME and table[name] is module.extract


def test_deepseek_parsers_name_the_tokens_vllm_requires() -> None:
    for stem in ("tool_deepseek_v3", "tool_deepseek_v31"):
        assert _module(stem).NEEDS_TOKENS == ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
    assert _module("reasoning_deepseek_r1").NEEDS_TOKENS == ("<think>", "</think>")


# Hostile answers, as (head, unit, times, tail): repeated openers, unclosed markup,
# deep nesting, long lines; each about 100 kB.
_DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>")
_KIMI = "<|tool_calls_section_begin|><|tool_call_begin|>"
_MM = '<minimax:tool_call><invoke name="f">'
HOSTILE: dict[str, tuple[tuple[str, str, int, str], ...]] = {
    "tool_deepseek_v3": (
        (_DS[0], _DS[1], 5000, "\n"),
        (_DS[0], _DS[1] + "function" + _DS[2] + "f\n```json\n", 3000, ""),
        (_DS[0], _DS[1] + _DS[2], 4000, "\n```json\n"),
    ),
    "tool_deepseek_v31": (
        (_DS[0], _DS[1], 5000, _DS[2]),
        (_DS[0], _DS[1] + "\n", 5000, _DS[2] + _DS[3]),
        (_DS[0], _DS[1] + "f" + _DS[2] + "{", 3000, ""),
    ),
    "tool_kimi_k2": (
        ("<|tool_calls_section_begin|>", "<|tool_call_begin|>", 5000, ""),
        (_KIMI + "x<|tool_call_argument_begin|>", '{"name": "', 8000, ""),
        (_KIMI, "a:", 40000, "<|tool_call_argument_begin|>" + "[" * 20000),
    ),
    "tool_glm45": (
        ("<tool_call>f", "<arg_key>", 10000, ""),
        ("<tool_call>f", "<arg_key>k</arg_key>", 5000, "<arg_value>"),
        ("<tool_call>f<arg_key>k</arg_key>", " ", 50000, "<arg_value>" + "{" * 20000),
    ),
    "tool_minimax_m2": (
        ("<minimax:tool_call>", '<invoke name="', 6000, ""),
        (_MM, "<parameter name=", 6000, ""),
        (_MM, '<parameter name="a">', 5000, ""),
    ),
    "reasoning_deepseek_r1": (("", "<think>", 14000, ""), ("", "</think>", 12000, "")),
    "reasoning_qwen3": (
        ("", "<think>", 14000, ""),
        ("", "<tool_call><function=", 5000, ""),
        ("", ">", 100000, ""),
    ),
    "reasoning_glm45": (("", "<think>", 14000, ""), ("", "<tool_call><arg_key>", 5000, "")),
    "reasoning_granite": (
        ("", "Here is my thought process:", 3500, ""),
        ("", "Here's my", 11000, ""),
    ),
}


def hostile_params(shapes: dict[str, tuple[tuple[str, str, int, str], ...]]) -> list[Any]:
    """One test parameter per hostile shape, named by its parser and number."""
    return [
        pytest.param(stem, shape, id=f"{stem}:{i}")
        for stem, each in shapes.items()
        for i, shape in enumerate(each)
    ]


#: The yardstick: one linear pass over the text, cutting it at each markup character.
SCAN = re.compile(r"[<>|｜:\n]|[^<>|｜:\n]+")


@pytest.mark.parametrize("stem, shape", hostile_params(HOSTILE))
def test_hostile_answers_take_linear_time(stem: str, shape: tuple[str, str, int, str]) -> None:
    assert_linear(stem, shape)


def assert_linear(stem: str, shape: tuple[str, str, int, str]) -> None:
    """A 100 kB hostile answer returns, and four times the text costs about four times the
    time (a quadratic reader would take sixteen), measured against a linear scan."""
    head, unit, times, tail = shape
    text, small = (head + unit * n + tail for n in (times, times // 4))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]

    def read(answer: str) -> Callable[[], object]:
        return lambda: _read(stem, {"text": answer, "kwargs": {}}, tools)

    def scan(answer: str) -> Callable[[], object]:
        # A linear pass that cuts the text where markup could start, as a lexer must.
        return lambda: len(SCAN.findall(answer))

    read(text)()  # it returns
    big = cpu_seconds(read(text))
    if big < 0.002:
        return  # too quick for a ratio of timings to mean anything
    parse_growth = big / max(cpu_seconds(read(small)), 1e-6)
    scan_growth = cpu_seconds(scan(text)) / max(cpu_seconds(scan(small)), 1e-6)
    assert parse_growth < max(2 * scan_growth, 12)  # quadratic: 16
    assert big < 200 * max(cpu_seconds(scan(text)), 1e-5)


NOTES = [
    (
        "tool_glm45",
        "<tool_call>get_stock<arg_key>t</arg_key><arg_value>X</arg_value></tool_call>",
        "drops the call to `get_stock`",
    ),
    (
        "tool_minimax_m2",
        '<minimax:tool_call><invoke name="f"><parameter name="n">3</parameter>'
        "</invoke></minimax:tool_call> bye",
        "drops the text after the tool calls",
    ),
    (
        "tool_kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0"
        '<|tool_call_argument_begin|>{"n": "3"}<|tool_call_end|>',
        "retypes the arguments of `f`",
    ),
    (
        "tool_deepseek_v3",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool<｜tool▁sep｜>f\n```json\n{}"
        "\n```<｜tool▁call▁end｜>",
        "type is not `function`",
    ),
    (
        "tool_deepseek_v31",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f{}<｜tool▁call▁end｜>",
        "do not match the layout",
    ),
    ("reasoning_deepseek_r1", "still thinking", "no `</think>`"),
    ("reasoning_qwen3", "still thinking", "no `</think>`"),
    ("reasoning_glm45", "still thinking", "no `</think>`"),
    ("reasoning_granite", "Just an answer.", "returns it all as content"),
]


@pytest.mark.parametrize("stem, text, words", NOTES, ids=[n[0] for n in NOTES])
def test_notes_say_what_vllm_did(stem: str, text: str, words: str) -> None:
    assert_noted(stem, text, words)


def assert_noted(stem: str, text: str, words: str) -> None:
    """Our module's notes on `text` say `words` (what vLLM did silently)."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
            },
        }
    ]
    given = ParserInput() if stem.startswith("reasoning_") else ParserInput(tools)
    found = _module(stem).extract(text, given)
    assert any(words in note for note in found.notes), found.notes


def test_hostile_notes_stay_few() -> None:
    text = "<tool_call>x<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>" * 2000
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    assert len(_module("tool_glm45").extract(text, ParserInput(tools)).notes) <= 5
