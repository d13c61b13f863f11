"""transformers' parse_response reproduced (`app.render.engines.transformers`) against itself.

Every case of `oracles/transformers/parse_response_cases.json` (transformers' own
parse_response tests as data, and ours) goes through the real
`transformers.utils.chat_parsing.parse_response` and through our reading, with the same
template, text, prefix and tools: the messages must be equal, or both must raise the
same error; ours must also meet what the upstream test asserts (`upstream_asserts`). The
coercion helpers the upstream tests call directly are checked as data too, and every
upstream test is either extracted or skipped with its reason. Hostile inputs must come
back, in time linear in their length. transformers is in the test lock, so it is
imported outright: the suite cannot skip itself.
"""

from __future__ import annotations

import contextlib
import copy
import json
import multiprocessing
import re
from typing import Any

import pytest
import transformers.utils.chat_parsing as real
from transformers.utils.chat_parsing import response_parser

from app.render.answer import AnswerRequest
from app.render.core import RenderRequest
from app.render.engines.transformers import answers, content_parsers
from app.render.engines.transformers.response_template import _tool_params, parse
from app.render.limits import DEFAULT_LIMITS
from oracles.transformers import PARSE_RESPONSE_CASES
from tests.support.reading import read_by
from tests.support.timing import cpu_seconds

DATA = json.loads(PARSE_RESPONSE_CASES.read_text())
TEMPLATES, CASES = DATA["templates"], DATA["cases"]
BY_NAME = {case["name"]: case for case in CASES}


def _both(template: dict, text: str, prefix: str, tools: list | None) -> tuple[Any, Any]:
    def run(fn):
        try:
            return {"message": fn()}
        except Exception as error:  # compared by type and message
            kind = "ValueError" if type(error).__name__ == "ResponseTemplateError" else None
            return {"raises": kind or type(error).__name__, "text": str(error)}

    theirs = run(lambda: real.parse_response(text, template, prefix=prefix, tools=tools))
    ours = run(lambda: parse(template, text, prefix, tools))
    return theirs, ours


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_same_as_transformers(case: dict) -> None:
    theirs, ours = _both(
        TEMPLATES[case["template"]], case["text"], case["prefix"], case.get("tools")
    )
    if "raises" in theirs:
        assert ours.get("raises") == theirs["raises"], ours
        assert ours["text"] == theirs["text"]
    else:
        assert ours == theirs
    if "message" in case["expect"]:  # transformers still returns what it did when written
        assert theirs == {"message": case["expect"]["message"]}
    if "upstream_asserts" in case:
        assert _meets(ours, case["upstream_asserts"]), (ours, case["upstream_asserts"])


def _meets(ours: dict, asserts: dict) -> bool:
    """Whether our result meets what the upstream test asserts for its case."""
    if "raises" in asserts:
        text = ours.get("text", "")
        return (
            ours.get("raises") == asserts["raises"]
            and re.search(asserts.get("matches", ""), text) is not None
            and asserts.get("matches_lower", "") in text.lower()
            and all(piece in text for piece in asserts.get("contains", ()))
        )
    message = ours.get("message")
    if message is None:
        return False
    checks = []
    if "same_as" in asserts:
        checks.append(ours == {"message": BY_NAME[asserts["same_as"]]["expect"]["message"]})
    if "message" in asserts:
        checks.append(message == asserts["message"])
    if "arguments" in asserts:
        checks.append(message["tool_calls"][0]["function"]["arguments"] == asserts["arguments"])
    for key, value in asserts.get("fields", {}).items():
        checks.append(message.get(key) == value)
    if "path" in asserts:
        value = message
        for key in asserts["path"]:
            value = value[key]
        checks += [value == asserts["value"], len(message["tool_calls"]) == asserts["count"]]
    return bool(checks) and all(checks)


COERCION = DATA["coercion"]


@pytest.mark.parametrize("case", COERCION["coerce"], ids=lambda c: f"{c['raw']}:{c['types']}")
def test_coerce_as_the_upstream_test_asserts(case: dict) -> None:
    types = tuple(case["types"])
    for coerce in (content_parsers._coerce, response_parser._coerce):
        value = coerce(case["raw"], types)
        assert (value, type(value)) == (case["expect"], type(case["expect"])), coerce


@pytest.mark.parametrize("case", COERCION["schema_types"], ids=lambda c: json.dumps(c["schema"]))
def test_schema_types_as_the_upstream_test_asserts(case: dict) -> None:
    assert content_parsers._types(case["schema"]) == tuple(case["expect"])
    assert response_parser._schema_types(case["schema"]) == tuple(case["expect"])


@pytest.mark.parametrize("case", COERCION["tool_calls"], ids=lambda c: c["test"])
def test_tool_call_coercion_as_the_upstream_test_asserts(case: dict) -> None:
    ours = content_parsers.coerce_tool_calls(
        copy.deepcopy(case["value"]), _tool_params(case["tools"])
    )
    theirs = response_parser.ResponseParser(
        TEMPLATES["xml_string_args"], prefix="", tools=case["tools"]
    )._coerce_tool_calls(copy.deepcopy(case["value"]))
    assert ours == theirs == case["expect"]


def test_every_upstream_test_is_extracted_or_skipped_with_a_reason() -> None:
    """transformers' test_chat_parsing.py, test by test: a case here, or a reason."""
    extracted = {case["test"] for case in CASES if "test" in case}
    extracted |= {
        entry["test"] for kind in COERCION.values() if isinstance(kind, list) for entry in kind
    }
    skipped = DATA["skipped"]
    upstream = set(DATA["upstream_tests"])
    assert len(upstream) == len(DATA["upstream_tests"]) == 79
    assert extracted | set(skipped) == upstream and not extracted & set(skipped)
    assert all(len(reason) > 30 for reason in skipped.values())


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
    kept = None if schema is None else json.dumps(schema)  # as the web process keeps it
    return AnswerRequest(render, completion, response_template=kept)


def test_read_answer_uses_the_rendered_prompt_as_prefix() -> None:
    found = read_by(
        "transformers", _request(TEMPLATES["smollm"], "Hmm.</think>Hello!"), DEFAULT_LIMITS
    )
    assert (found.parser, found.reasoning_content, found.content) == (
        "parse_response",
        "Hmm.",
        "Hello!",
    )


def test_read_answer_tool_calls_as_json_text() -> None:
    text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    found = read_by(
        "transformers", _request(TEMPLATES["smollm"], "</think>" + text), DEFAULT_LIMITS
    )
    assert [(c.name, c.arguments) for c in found.tool_calls] == [
        ("get_weather", '{"city": "Paris"}')
    ]


@pytest.mark.parametrize("schema", [None, {"type": "object", "properties": {}}])
def test_no_response_template(schema: dict | None) -> None:
    found = read_by("transformers", _request(schema, "Hello"), DEFAULT_LIMITS)
    assert found.error and "response_template" in found.error and found.notes
    assert answers.TransformersReader().options(_request(None, "").render) == ()


def test_read_answer_reports_transformers_error() -> None:
    found = read_by(
        "transformers",
        _request(TEMPLATES["smollm"], "</think><tool_call>{</tool_call>"),
        DEFAULT_LIMITS,
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
    assert read_by("transformers", request, DEFAULT_LIMITS).parser == "parse_response"
    ours = cpu_seconds(lambda: read_by("transformers", request, DEFAULT_LIMITS))
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


# Found by the round-3 attack review: `repeats` with `join` concatenated every match onto
# the text so far, and the `json` parser's `string_delims` searched the rest of the text
# from every opener and then rewrote the whole text once per string it had taken out:
# quadratic, 2.2 and 3.0 s before the sandbox's CPU limit stopped them. The template and
# a text of each shape; the text's size grows with `n`.
UNCLOSED_DELIMS = {
    "start_anchor": "a",
    "fields": {
        "x": {
            "open": "<x>",
            "close": "</x>",
            "content": "json",
            "content_args": {"string_delims": [["<<", ">>"]]},
        }
    },
}
GROWING = {
    "join": (TEMPLATES["join"], lambda n: ("<think>" + "a" * 40 + "</think>") * n),
    "json strings": (
        TEMPLATES["gemma4"],
        lambda n: (
            "<|tool_call>call:f{"
            + ",".join(f'k{i}:<|"|>v<|"|>' for i in range(n))
            + "}<tool_call|>"
        ),
    ),
    "unclosed string delimiters": (UNCLOSED_DELIMS, lambda n: "<x>" + "<<" * n + "</x>"),
}


@pytest.mark.parametrize("name", GROWING)
def test_join_and_string_delimiters_read_as_transformers_in_linear_time(name: str) -> None:
    template, text_of = GROWING[name]
    theirs, ours = _both(template, text_of(40), "", None)
    assert ours == theirs
    small, big = text_of(4_000), text_of(16_000)

    def cost(text: str) -> float:
        def read() -> None:
            with contextlib.suppress(ValueError):  # the unclosed strings are no JSON
                parse(template, text, "")

        return max(cpu_seconds(read, repeat=2), 1e-4)

    scan = max(cpu_seconds(lambda: sum(1 for char in big if char == "<"), repeat=2), 1e-4)
    # Four times the text: four times the time, where a quadratic reading takes sixteen.
    assert cost(big) / cost(small) < 9
    assert cost(big) < 100 * scan


#: A field whose opener and closer both match empty text right here: transformers opens
#: and closes it at the same place forever (its list of matches grows until memory runs
#: out), so it never returns.
ZERO_WIDTH = {
    "start_anchor": "a",
    "fields": {"x": {"open_pattern": "(?=<b)", "close_pattern": "(?=<b)", "repeats": True}},
}


def test_a_zero_width_open_and_close_pair_is_said_to_never_return() -> None:
    found = read_by("transformers", _request(ZERO_WIDTH, "plain, then <b>"), DEFAULT_LIMITS)
    assert found.parser == "parse_response" and found.content is None
    assert found.error.startswith("parse_response never returns:")
    assert "field 'x'" in found.error and "at character 12 of the completion" in found.error
    # No loop until the CPU limit: a few milliseconds.
    elapsed = cpu_seconds(
        lambda: read_by("transformers", _request(ZERO_WIDTH, "<b>"), DEFAULT_LIMITS), repeat=1
    )
    assert elapsed < 0.5
    # Where the patterns match nothing, it reads as any template does.
    assert read_by("transformers", _request(ZERO_WIDTH, "no tags"), DEFAULT_LIMITS).error is None


def _real_parse_in_child(template: dict, text: str) -> None:
    """transformers' own parse_response, in a child with 1 GiB of memory at most."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    real.parse_response(text, template, prefix="", tools=None)


def test_transformers_itself_never_returns_there() -> None:
    """What the error says is what transformers does: its reading of the same text is
    still running after two seconds (or has run out of memory), where it reads the text
    without the tag at once."""
    context = multiprocessing.get_context("fork")
    outcomes = []
    for text in ("no tags", "plain, then <b>"):
        child = context.Process(target=_real_parse_in_child, args=(ZERO_WIDTH, text))
        child.start()
        child.join(timeout=2.0)
        outcomes.append("running" if child.is_alive() else child.exitcode)
        child.kill()
        child.join()
    assert outcomes[0] == 0
    assert outcomes[1] in ("running", 1)  # 1: a MemoryError, once its list filled 1 GiB
