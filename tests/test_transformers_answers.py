"""transformers' parse_response reproduced (`app.render.engines.transformers`) against itself.

Every case of `tests/support/transformers/parse_response_cases.json` (transformers' own
parse_response tests as data, and ours) goes through the real
`transformers.utils.chat_parsing.parse_response` and through our reading, with the same
template, text, prefix and tools: the messages must be equal, or both must raise the
same error. Hostile inputs must come back, in time linear in their length.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.render.answer import AnswerRequest
from app.render.core import RenderRequest
from app.render.engines.transformers import answers
from app.render.engines.transformers.response_template import parse
from app.render.limits import DEFAULT_LIMITS
from tests.support import REPO
from tests.support.timing import cpu_seconds

DATA = json.loads((REPO / "tests/support/transformers/parse_response_cases.json").read_text())
TEMPLATES, CASES = DATA["templates"], DATA["cases"]
real = pytest.importorskip("transformers.utils.chat_parsing")


def _both(template: dict, text: str, prefix: str, tools: list | None) -> tuple[Any, Any]:
    def run(fn):
        try:
            return {"message": fn()}
        except Exception as error:  # compared by type and message
            return {"raises": type(error).__name__, "text": str(error)}

    theirs = run(lambda: real.parse_response(text, template, prefix=prefix, tools=tools))
    ours = run(lambda: parse(template, text, prefix, tools))
    return theirs, ours


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_same_as_transformers(case: dict) -> None:
    theirs, ours = _both(
        TEMPLATES[case["template"]], case["text"], case["prefix"], case.get("tools")
    )
    if "raises" in theirs:
        assert ours.get("raises") in (theirs["raises"], "ResponseTemplateError"), ours
        assert ours["text"].split("\n")[0][:60] == theirs["text"].split("\n")[0][:60]
    else:
        assert ours == theirs
    if "message" in case["expect"]:  # transformers still returns what it did when written
        assert theirs == {"message": case["expect"]["message"]}


BAD_TEMPLATES = [
    {"fields": {"content": {}}},
    {"start_anchor": "", "fields": {"content": {}}},
    {"start_anchor": "a", "fields": {}},
    {"start_anchor": "a", "version": 2, "fields": {"c": {}}},
    {"start_anchor": "a", "extra": 1, "fields": {"c": {}}},
    {"start_anchor": "a", "fields": {"c": {}, "d": {}}},
    {"start_anchor": "a", "fields": {"c": {"content": "yaml"}}},
    {"start_anchor": "a", "fields": {"c": {"open": "<", "open_pattern": "<"}}},
    {"start_anchor": "a", "fields": {"c": {"open_pattern": "(?P<x>a)"}}},
    {"start_anchor": "a", "fields": {"c": {"join": ","}}},
    {"start_anchor": "a", "fields": {"c": {"transform": "x {content}"}}},
    {"start_anchor": "a", "fields": {"c": {"open_pattern": "("}}},
    {"start_anchor": "a", "fields": {"c": {"content": "int"}}},
    {"start_anchor": "a", "fields": {"c": {"optional": False, "open": "<c>"}}},
]


@pytest.mark.parametrize("template", BAD_TEMPLATES, ids=[str(i) for i in range(len(BAD_TEMPLATES))])
def test_refused_templates_as_transformers(template: dict) -> None:
    theirs, ours = _both(template, "a x", "", None)
    assert ("raises" in ours) == ("raises" in theirs), (theirs, ours)
    if "raises" not in theirs:
        assert ours == theirs


def _request(schema: dict | None, completion: str) -> AnswerRequest:
    render = RenderRequest(
        template="{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n<think>{% endif %}",
        messages=[{"role": "user", "content": "Hi"}],
        add_generation_prompt=True,
    )
    return AnswerRequest(render, completion, response_template=schema)


def test_read_answer_uses_the_rendered_prompt_as_prefix() -> None:
    found = answers.read_answer(_request(TEMPLATES["smollm"], "Hmm.</think>Hello!"), DEFAULT_LIMITS)
    assert (found.parser, found.reasoning_content, found.content) == (
        "parse_response",
        "Hmm.",
        "Hello!",
    )


def test_read_answer_tool_calls_as_json_text() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    found = answers.read_answer(_request(TEMPLATES["smollm"], "</think>" + text), DEFAULT_LIMITS)
    assert [(c.name, c.arguments) for c in found.tool_calls] == [
        ("get_weather", '{"city": "Paris"}')
    ]


@pytest.mark.parametrize("schema", [None, {"type": "object", "properties": {}}])
def test_no_response_template(schema: dict | None) -> None:
    found = answers.read_answer(_request(schema, "Hello"), DEFAULT_LIMITS)
    assert found.error and "response_template" in found.error and found.notes
    assert answers.parser_options(_request(None, "").render) == ()


def test_read_answer_reports_transformers_error() -> None:
    found = answers.read_answer(
        _request(TEMPLATES["smollm"], "</think><tool_call>{</tool_call>"), DEFAULT_LIMITS
    )
    assert found.error.startswith("ValueError: json parser could not parse region as JSON")


HOSTILE = {
    "opens": "<tool_call>" * 9_000,
    "closes": "</think>" * 12_000,
    "unclosed_json": "<tool_call>" + '{"a":' * 20_000,
    "deep_json": "<tool_call>" + "[" * 50_000 + "</tool_call>",
    "plain": "x" * 100_000,
    "many_regions": "<think>a</think>" * 6_000,
    "many_calls": '<tool_call>{"name": "f", "arguments": {}}</tool_call>' * 2_000,
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_inputs(name: str) -> None:
    text = HOSTILE[name]
    request = _request(TEMPLATES["smollm"], text)
    assert answers.read_answer(request, DEFAULT_LIMITS).parser == "parse_response"
    ours = cpu_seconds(lambda: answers.read_answer(request, DEFAULT_LIMITS))
    scan = 5 * cpu_seconds(lambda: sum(1 for char in text if char == "<"))
    assert ours < 60 * scan + 0.5


#: Pieces the fuzz test strings together: every template's markers, JSON bits, text.
PIECES = (
    "<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", "<response>\n",
    "\n</response>", "<|channel|>analysis<|message|>", "<|channel|>final<|message|>", "<|end|>",
    "<|channel|>commentary to=functions.f json<|message|>", "<|call|>", "<|start|>assistant",
    "<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
    "<|channel>thought\n", "<channel|>", "<|tool_call>call:f", "<tool_call|>", "<turn|>",
    '<|"|>', "<function=g>", "<parameter=a>", "</parameter>", "<|message_model|>",
    "<|content_text|>", "<|content_thinking|>", "<|end_message|>", '{"name": "f", "arguments": {}}',
    '[{"tool_name": "t", "parameters": {"a": 1}}]', "{a:1}", "[", "}", " ", "\n", "hi", "x y",
)  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
def test_fuzz_same_as_transformers(seed: int) -> None:
    import random

    rng = random.Random(seed)
    for _ in range(40):
        name = rng.choice(sorted(TEMPLATES))
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        prefix = rng.choice(
            ("", "<|im_start|>assistant\n<think>", "<|start|>assistant", "Assistant:")
        )
        theirs, ours = _both(TEMPLATES[name], text, prefix, None)
        assert ("raises" in ours) == ("raises" in theirs), (name, text, prefix, theirs, ours)
        if "raises" not in theirs:
            assert ours == theirs, (name, text, prefix)
