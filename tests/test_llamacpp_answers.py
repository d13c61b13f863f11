"""llama-server's reading of a completion (app.render.engines.llamacpp.answers).

Checked against what llama.cpp itself says, as data:

- `autoparser_cases.json`: the diff helpers' cases of tests/test-chat-auto-parser.cpp;
- `autoparser_analysis.json`: the markers that test asserts the analysis finds;
- `answers.json` (the real library's answers, oracles/llamacpp/record.py): every
  shared template, menu completion (and broken variants) and server option, our message
  or error equals the recorded one exactly;
- `test_chat_parse_cases.json`: tests/test-chat.cpp's parse cases with the library's
  own non-partial results (partial, streaming-only cases are left out).

Then the behaviours the issue names (refusal, trailing newline kept, empty ids, the
options), and hostile completions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.render.answer import AnswerRequest
from app.render.core import RenderRequest
from app.render.engines.llamacpp.answers import LlamaCppReader, read_completion
from app.render.engines.llamacpp.apply.derive import analysis_for, chat_template
from app.render.engines.llamacpp.autoparser import diffing
from app.render.limits import DEFAULT_LIMITS
from tests.support import REPO
from tests.support.reading import read_by
from tests.support.shared_data import TEMPLATES_DIR, needs_shared
from tests.support.timing import cpu_seconds

DATA = REPO / "oracles" / "llamacpp"


def _load(name: str) -> dict[str, Any] | None:
    path = DATA / name
    return json.loads(path.read_text()) if path.is_file() else None


#: llama.cpp's cases of its diff helpers, for the one the autoparser port uses
#: (`calculate_diff_split`; `until_common_prefix` and `after_common_suffix` it does not).
_DIFF_CASES = [
    case
    for case in (_load("autoparser_cases.json") or {"cases": []})["cases"]
    if case["function"] == "calculate_diff_split"
]
_ANALYSIS = (_load("autoparser_analysis.json") or {"templates": {}})["templates"]

WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
USER = [{"role": "user", "content": "What is the weather in Paris?"}]


def _template(name: str) -> str:
    return (TEMPLATES_DIR / name).read_text()


def _read(name: str, completion: str, tools: bool = False, **options: str):
    request = RenderRequest(
        template=_template(name),
        messages=USER,
        tools=WEATHER if tools else None,
        add_generation_prompt=True,
    )
    return read_by("llama.cpp", AnswerRequest(request, completion, dict(options)))


@pytest.mark.parametrize("case", _DIFF_CASES, ids=lambda c: f"{c['function']}{c['args']}")
def test_diff_helpers_match_llama_cpp(case: dict[str, Any]) -> None:
    split = diffing.diff_split(*case["args"])
    got = {field: getattr(split, field) for field in case["expected"]}
    assert got == case["expected"]


@needs_shared
@pytest.mark.parametrize("name", sorted(_ANALYSIS))
def test_analysis_finds_llama_cpp_markers(name: str) -> None:
    request = RenderRequest(template=_template(name), messages=USER)
    analysis = analysis_for(chat_template(request, DEFAULT_LIMITS))
    for key, expected in _ANALYSIS[name].items():
        target: Any = analysis
        for part in key.split("."):
            target = getattr(target, part)
        assert target == expected, key


@needs_shared
def test_reasoning_then_answer_keeps_the_trailing_newline() -> None:
    answer = _read("Qwen-Qwen3-0.6B.jinja", "<think>\nLet me think\n</think>\n\nHello")
    assert answer.parser == "peg-native"
    assert answer.error is None
    assert (answer.reasoning_content, answer.content) == ("Let me think\n", "Hello")


@needs_shared
def test_tool_call_read_with_an_empty_id() -> None:
    completion = (
        '<think>\n\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Paris"}}\n</tool_call>'
    )
    answer = _read("Qwen-Qwen3-0.6B.jinja", completion, tools=True)
    assert answer.error is None
    assert [(c.name, c.arguments, c.id) for c in answer.tool_calls] == [
        ("get_weather", '{"city": "Paris"}', "")
    ]
    assert answer.content == ""


@needs_shared
def test_broken_tool_call_is_refused_as_llama_server_does() -> None:
    completion = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call>'
    answer = _read("Qwen-Qwen3-0.6B.jinja", completion, tools=True)
    assert answer.error == (
        "The model produced output that does not match the expected peg-native format"
    )
    assert answer.message() is None


@needs_shared
def test_reasoning_format_none_leaves_reasoning_in_the_content() -> None:
    completion = "<think>\nLet me think\n</think>\n\nHello"
    answer = _read("Qwen-Qwen3-0.6B.jinja", completion, reasoning_format="none")
    assert answer.reasoning_content is None
    assert answer.content == completion
    deepseek = _read("Qwen-Qwen3-0.6B.jinja", completion, reasoning_format="deepseek")
    assert (deepseek.reasoning_content, deepseek.content) == ("Let me think\n", "Hello")


@needs_shared
def test_parse_tool_calls_false_changes_nothing_but_says_so() -> None:
    completion = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    on = _read("Qwen-Qwen2.5-7B-Instruct.jinja", completion, tools=True)
    off = _read("Qwen-Qwen2.5-7B-Instruct.jinja", completion, tools=True, parse_tool_calls="false")
    assert on.tool_calls == off.tool_calls and len(on.tool_calls) == 1
    assert any("parse_tool_calls" in note for note in off.notes)


def test_options_are_llama_servers() -> None:
    options = {o.name: o for o in LlamaCppReader().options(RenderRequest(template="", messages=[]))}
    assert options["reasoning_format"].choices == ("auto", "none", "deepseek")
    assert options["reasoning_format"].default == "auto"
    assert options["parse_tool_calls"].default == "true"


_HOSTILE = {
    "tool_call tags": "<tool_call>" * 9000,
    "unclosed braces": '<tool_call>\n{"name": "get_weather", "arguments": ' + "{" * 20000,
    "deep arrays": '<tool_call>\n{"name": "get_weather", "arguments": ' + "[" * 20000,
    "think tags": "<think>" * 12000,
    "plain text": "word " * 20000,
}


@needs_shared
@pytest.mark.parametrize("kind", sorted(_HOSTILE))
def test_hostile_completion_returns_quickly(kind: str) -> None:
    completion = _HOSTILE[kind][:100_000]
    _read("Qwen-Qwen3-0.6B.jinja", "warm up", tools=True)  # the analysis, cached
    answer = _read("Qwen-Qwen3-0.6B.jinja", completion, tools=True)
    assert answer.error is not None or answer.content is not None
    elapsed = cpu_seconds(lambda: _read("Qwen-Qwen3-0.6B.jinja", completion, tools=True))
    scan = cpu_seconds(lambda: sum(1 for char in completion if char == "<"), repeat=20)
    # Parsing is a handful of linear passes; a backtracking blow-up is thousands of them.
    assert elapsed / max(scan, 1e-6) < 2000


# ---------------------------------------------------------------------------------------
# The real library's answers (helper A's answers.json: oracles/llamacpp/record.py).

_ANSWERS = _load("answers.json") or {}
_ANSWER_CASES = _ANSWERS.get("cases", [])


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['request']}:{case['kind']}"


def answer_for(case: dict[str, Any]):
    """Our reading of one recorded case, with the request the recorder made."""
    options = case["options"]
    request = RenderRequest(
        template=_template(case["template"]),
        messages=_ANSWERS["question"],
        tools=_ANSWERS["tool_definitions"] if case["tools"] else None,
        add_generation_prompt=True,
        # "special_tokens": false records the request without a BOS/EOS (the probes then
        # render no "</s>", which changes what the autoparser finds for some templates).
        special_tokens=_ANSWERS["special_tokens"] if options.get("special_tokens", True) else {},
    )
    overrides = {
        name: options[name]
        for name in ("enable_thinking", "parallel_tool_calls")
        if options.get(name) is not None
    }
    return read_completion(
        request, case["completion"], DEFAULT_LIMITS, options["reasoning_format"], overrides
    )


@needs_shared
@pytest.mark.skipif(not _ANSWER_CASES, reason="answers.json (real llama.cpp results) not recorded")
@pytest.mark.parametrize("case", _ANSWER_CASES, ids=_case_id)
def test_answer_matches_the_real_library(case: dict[str, Any]) -> None:
    answer = answer_for(case)
    if "error" in case:
        assert answer.error == case["error"]
        return
    assert answer.error is None, answer.error
    assert answer.parser == case["format"]
    # The response's message: the raw text when the parse is empty, ids left out when
    # the parser gives none (the server then makes up random ones).
    expected = case["message"]
    message = answer.message()
    assert message is not None
    for call in message.get("tool_calls", []):
        if not call["id"]:
            del call["id"]
    assert message == expected


# ---------------------------------------------------------------------------------------
# llama.cpp's own parse cases (tests/test-chat.cpp), as helper A dumped and re-verified them.

_TEST_CHAT = _load("test_chat_parse_cases.json") or {}
_TEST_CHAT_CASES = [c for c in _TEST_CHAT.get("cases", []) if "result" in c["verified"]]
#: common_chat_tool_choice and common_chat_continuation, by their enum values.
_TOOL_CHOICES = ("auto", "required", "none")
_CONTINUATIONS: tuple[bool | str, ...] = (False, True, "reasoning_content", "content")


def _test_chat_answer(case: dict[str, Any]):
    """Our reading of one test-chat.cpp case, with the inputs that test sets."""
    request = RenderRequest(
        template=_template(case["template"]),
        messages=case["messages"],
        tools=case["tools"],
        add_generation_prompt=case["add_generation_prompt"],
        continue_final_message=_CONTINUATIONS[case["continue_final_message"]],
    )
    overrides: dict[str, Any] = {
        "enable_thinking": case["enable_thinking"],
        "parallel_tool_calls": case["parallel_tool_calls"],
        "tool_choice": _TOOL_CHOICES[case["tool_choice"]],
    }
    if case["json_schema"]:
        overrides["json_schema"] = json.loads(case["json_schema"])
    return read_completion(
        request, case["input"], DEFAULT_LIMITS, case["reasoning_format"], overrides
    )


@needs_shared
@pytest.mark.skipif(not _TEST_CHAT_CASES, reason="test_chat_parse_cases.json not recorded")
@pytest.mark.parametrize("case", _TEST_CHAT_CASES, ids=lambda c: f"{c['index']}:{c['template']}")
def test_llama_cpp_test_chat_case(case: dict[str, Any]) -> None:
    answer = _test_chat_answer(case)
    verified = case["verified"]
    if "error" in verified:
        assert answer.error == verified["error"]
        return
    assert answer.error is None, answer.error
    assert answer.parser == verified["format"]
    result = verified["result"]
    assert answer.content == result["content"]
    assert (answer.reasoning_content or "") == result["reasoning_content"]
    calls = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in answer.tool_calls]
    assert calls == result["tool_calls"]


def test_fixture_folder_exists() -> None:
    assert Path(DATA).is_dir()
