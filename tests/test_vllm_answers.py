"""vLLM's hermes, llama3_json, pythonic, llama4_pythonic, Qwen3 XML, granite and mistral tool
parsers, and the whole chat answer (`read_answer`), against vLLM itself.

`oracles/vllm/answers/tool_<name>.json` holds what vLLM 0.33.0's own parser classes
returned (recorded by `oracles/vllm/record_answers.py`); our module must return the same.
`serve_<tool>+<reasoning>.json` holds the message `vllm serve` with those two flags answers
for the Completion menu's texts (with the menu's tools, with none, with thinking off):
`read_answer` must give the same content, reasoning and tool calls. `parser_cases/` holds
vLLM's own test inputs with its expected values. Hostile 100 kB answers must come back in
time about linear in their length. The suggestion for each shared template is pinned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from app.render.answer import AnswerRequest
from app.render.core import RenderRequest
from app.render.engines.vllm.answers import READER
from app.render.engines.vllm.answers.base import ParserInput
from app.render.engines.vllm.answers.registry import REASONING_PARSERS, TOOL_PARSERS
from oracles.vllm.answer_cases import suggest_each
from oracles.vllm.expectations import meets
from tests.support import REPO
from tests.support.reading import read_by
from tests.support.shared_data import needs_shared, template_files
from tests.support.timing import cpu_seconds

ANSWERS = REPO / "oracles" / "vllm" / "answers"
CASES = REPO / "oracles" / "vllm" / "parser_cases"
#: What `suggest` picks for each shared template (--tool-call-parser, --reasoning-parser).
SUGGESTIONS = ANSWERS / "suggestions.json"

MINE = (
    "hermes",
    "llama3_json",
    "pythonic",
    "llama4_pythonic",
    "qwen3_coder",
    "qwen3_xml",
    "granite",
    "mistral",
)


def _ours_tool(name: str, case: dict[str, Any]) -> dict[str, Any]:
    given = ParserInput(
        case.get("tools"),
        case.get("kwargs") or {},
        with_reasoning_parser=not case.get("no_reasoning_parser"),
    )
    found = TOOL_PARSERS[name](case["text"], given)
    return {
        "tools_called": found.tools_called,
        "tool_calls": [[c.name, c.arguments, c.id] for c in found.tool_calls],
        "content": found.content,
    }


def _without_ids(answer: dict[str, Any]) -> dict[str, Any]:
    """vLLM's answer with its (random) tool-call ids left out."""
    if "tool_calls" not in answer:
        return answer
    return {**answer, "tool_calls": [call[:2] for call in answer["tool_calls"]]}


def _fixture_cases(pattern: str) -> list[Any]:
    params = []
    for path in sorted(ANSWERS.glob(pattern)):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for case in doc["cases"]:
            params.append(pytest.param(doc["parser"], case, id=f"{path.stem}:{case['name']}"))
    return params


@pytest.mark.parametrize(
    ("parser", "case"), [p for n in MINE for p in _fixture_cases(f"tool_{n}.json")]
)
def test_tool_parser_matches_vllm(parser: str, case: dict[str, Any]) -> None:
    """Our module returns what vLLM's parser class returned, field for field."""
    ours = _ours_tool(parser.split(":")[1], case)
    assert _without_ids(ours) == _without_ids(case["vllm"])


@pytest.mark.parametrize(("parser", "case"), _fixture_cases("serve_*.json"))
def test_read_answer_matches_vllm_serve(parser: str, case: dict[str, Any]) -> None:
    """`read_answer` gives the message vLLM's chat API answered with these flags."""
    tool, reasoning = parser.split(":")[1].split("+")
    render = RenderRequest(
        template="", messages=[], tools=case["tools"], kwargs=case.get("kwargs") or {}
    )
    options = {"tool_call_parser": tool, "reasoning_parser": reasoning}
    answer = read_by("vllm", AnswerRequest(render, case["text"], options))
    ours = {
        "content": answer.content,
        "reasoning": answer.reasoning_content,
        "tool_calls": [[c.name, c.arguments] for c in answer.tool_calls],
    }
    assert ours == _without_ids(case["vllm"])
    assert answer.parser == (" + ".join(n for n in (tool, reasoning) if n != "none") or "none")


def test_tool_call_ids_have_vllms_shape() -> None:
    """The stand-in id has the shape of the random one vLLM 0.33.0 gave when recorded with
    its id kept (`extra/id_shape`: `chatcmpl-tool-` and 16 hex digits, its random_uuid)."""
    doc = json.loads((ANSWERS / "tool_hermes.json").read_text(encoding="utf-8"))
    case = next(c for c in doc["cases"] if c["name"] == "extra/id_shape")
    (theirs,) = [call[2] for call in case["vllm"]["tool_calls"]]
    (ours,) = [call[2] for call in _ours_tool("hermes", case)["tool_calls"]]
    assert re.sub("[0-9a-f]", "h", ours) == re.sub("[0-9a-f]", "h", theirs), (ours, theirs)


def _vllm_test_cases() -> list[Any]:
    params = []
    for name in MINE:
        path = CASES / f"tool_{name}.json"
        if path.exists():
            for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
                params.append(pytest.param(name, case, id=f"{name}:{case['name']}"))
    return params


@pytest.mark.parametrize(("name", "case"), _vllm_test_cases())
def test_vllm_own_test_cases(name: str, case: dict[str, Any]) -> None:
    """vLLM's own test inputs: our module meets the test's expectation exactly where vLLM
    0.33.0 does (`holds_in_vllm_0_33_0`; later vLLM tests expect what 0.33.0 did not do)."""
    assert meets(case["expect"], _ours_tool(name, case)) == case["holds_in_vllm_0_33_0"]


def _best_time(run: Callable[[], object]) -> float:
    """The least CPU time of two calls (`tests.support.timing`)."""
    return cpu_seconds(run, repeat=2)


def _scan(text: str) -> Callable[[], object]:
    return lambda: sum(1 for ch in text if ch == "<")


W = '{"name": "f", "arguments": {}}'
#: (parser, head, repeated unit, count for ~100 kB, tail).
HOSTILE = (
    ("hermes", "", "<tool_call>", 9000, ""),
    ("hermes", "", "<tool_call>" + W + "</tool_call>", 2500, ""),
    ("hermes", "<tool_call>", "{", 100_000, ""),
    ("hermes", "<tool_call>", "[", 100_000, "</tool_call>"),
    ("llama3_json", "", "{", 100_000, ""),
    ("llama3_json", "", '{"name": "f", "parameters": {}}; ', 3000, ""),
    ("llama3_json", "", "[", 100_000, "{}"),
    ("pythonic", "[f(", "a", 100_000, ""),
    ("pythonic", "[", "f(), ", 20_000, "g(x=1)]"),
    ("pythonic", "[f(x=", "(", 100_000, ")]"),
    ("llama4_pythonic", "<|python_start|>[", "f(x=[1]), ", 10_000, "g()]"),
    ("granite", "<|tool_call|>[", '{"name": "f", "arguments": {}}, ', 3000, "]"),
    ("granite", "", "<|tool_call|>", 7000, ""),
    ("granite", "<|tool_call|>[{", '"a": "\\"}{', 9000, ""),
    ("mistral", "", "[TOOL_CALLS]", 8000, ""),
    ("mistral", "", "[TOOL_CALLS]f{", 7000, ""),
    ("mistral", "[THINK]", "[TOOL_CALLS]f[ARGS]{", 5000, ""),
    ("qwen3_coder", "", "<tool_call>", 9000, ""),
    ("qwen3_coder", "<tool_call><function=f>", "<parameter=", 9000, ""),
    ("qwen3_coder", "<tool_call><function=f>", "< parameter =a>", 7000, "</function>"),
    ("qwen3_coder", "<tool_call><function=f><parameter=a>", "<" + " " * 50, 2000, ""),
)


@pytest.mark.parametrize(("name", "head", "unit", "count", "tail"), HOSTILE)
def test_hostile_answers_take_linear_time(
    name: str, head: str, unit: str, count: int, tail: str
) -> None:
    """A 100 kB hostile answer returns, and four times the text costs about four times the
    time (a quadratic reader would take sixteen; twelve allows for noise), measured
    against a linear scan."""
    text, small = (head + unit * n + tail for n in (count, count // 4))
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    parser = TOOL_PARSERS[name]

    def read(t: str) -> Callable[[], object]:
        return lambda: parser(t, ParserInput(tools))

    read(text)()  # returns, whatever it finds
    big = _best_time(read(text))
    growth = big / max(_best_time(read(small)), 1e-6)
    scan_growth = _best_time(_scan(text)) / max(_best_time(_scan(small)), 1e-6)
    if big > 0.002:  # below that, a ratio of timings means nothing
        assert growth < max(2 * scan_growth, 12)  # quadratic: 16
    # Python's own parser (`ast.parse`, as vLLM uses) costs ~1 ms per kB of calls.
    assert big < 1000 * max(_best_time(_scan(text)), 1e-4)


def test_registry_and_options() -> None:
    """Every module of this helper is registered under vLLM's name, and the options list
    "none" first and default to the suggestion."""
    assert set(MINE) <= set(TOOL_PARSERS)
    assert {"qwen3", "deepseek_r1"} <= set(REASONING_PARSERS)
    template = "{{ '<tool_call>' }}{{ '<think>' }}{{ '<|im_start|>' }}"
    tool, reasoning = READER.options(RenderRequest(template=template, messages=[]))
    assert (tool.name, tool.label, tool.choices[0]) == (
        "tool_call_parser",
        "--tool-call-parser",
        "none",
    )
    assert (tool.default, reasoning.default) == ("hermes", "qwen3")
    assert reasoning.label == "--reasoning-parser" and "Qwen3" in reasoning.why


def test_no_tools_means_tool_choice_none() -> None:
    """Without tools in the request vLLM does not return the calls, and says so."""
    text = "<tool_call>" + W + "</tool_call>"
    render = RenderRequest(template="", messages=[])
    answer = read_by("vllm", AnswerRequest(render, text, {"tool_call_parser": "hermes"}))
    assert answer.tool_calls == () and answer.content == text
    assert "tool_choice" in answer.notes[0]


def test_broken_json_is_explained() -> None:
    found = TOOL_PARSERS["hermes"](
        '<tool_call>{"name": "f", "arguments": }</tool_call>', ParserInput()
    )
    assert not found.tools_called
    assert "not valid JSON" in found.notes[0] and "line 1 column" in found.notes[0]


@needs_shared
def test_suggestions_for_shared_templates() -> None:
    """The pair suggested for each of the shared templates (the table in `SUGGESTIONS`)."""
    templates = {path.stem: path.read_text(encoding="utf-8") for path in template_files()}
    table = json.loads(SUGGESTIONS.read_text(encoding="utf-8"))["suggested"]
    assert suggest_each(templates) == {name: tuple(pair) for name, pair in table.items()}


@pytest.mark.parametrize(
    ("tool", "reasoning", "unit"),
    [
        ("hermes", "qwen3", "<think><tool_call>{"),
        ("qwen3_coder", "qwen3", "<tool_call><function=f><parameter=a>"),
        ("llama3_json", "none", '{"name": "f", "parameters": {'),
        ("granite", "deepseek_r1", "<|tool_call|>[{"),
        ("gemma4", "gemma4", "<|channel><|tool_call>call:f{a:{"),
        (
            "kimi_k3",
            "kimi_k3",
            '<|open|>think<|sep|><|open|>tools<|sep|><|open|>call tool="f"<|sep|>',
        ),
        ("deepseek_v4", "deepseek_v4", '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><think>'),
        ("deepseek_v32", "deepseek_v3", '</think><｜DSML｜function_calls><｜DSML｜invoke name="'),
    ],
)
def test_read_answer_on_hostile_completion(tool: str, reasoning: str, unit: str) -> None:
    """A 100 kB hostile completion through both parsers returns a message, in time
    about linear in its length."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    text = unit * (100_000 // len(unit))
    render = RenderRequest(template="", messages=[], tools=tools)
    options = {"tool_call_parser": tool, "reasoning_parser": reasoning}

    def read(t: str) -> Callable[[], object]:
        return lambda: read_by("vllm", AnswerRequest(render, t, options))

    assert read(text)() is not None
    assert _best_time(read(text)) < 300 * max(_best_time(_scan(text)), 1e-4)
