"""llama.cpp's PEG parser and chat mapper, reproduced (app/render/engines/llamacpp/answers).

The cases of llama.cpp's own PEG tests (tests/peg-parser/*.cpp, tests/test-chat-peg-
parser.cpp at b11434, the same facts as at b10568) are data in peg_cases.json: a grammar as
builder calls, an input and what upstream asserts. Below them: how common_chat_peg_parse
wraps the parse, and the parse time on hostile 100 kB completions.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from functools import reduce
from typing import Any

import pytest

from app.render.engines.llamacpp.chat_peg.chat_peg import ChatBuilder, build_chat_peg_parser
from app.render.engines.llamacpp.chat_peg.chat_peg_mapper import (
    ChatMsg,
    ChatParseError,
    Mapper,
    normalize_quotes_to_json,
    parse_and_extract,
    peg_parse,
)
from app.render.engines.llamacpp.peg import peg
from app.render.engines.llamacpp.peg.peg_builder import Builder
from tests.support import REPO
from tests.support.timing import cpu_seconds

FIXTURE = json.loads((REPO / "oracles/llamacpp/peg_cases.json").read_text())
#: llama.cpp's cases, but those of `parse_anywhere_and_extract` (its autoparser's probe
#: of rendered prompts, which the port does not make).
CASES = [case for case in FIXTURE["cases"] if case.get("mode") != "anywhere"]
OPERATORS = {"+": lambda a, b: a + b, "|": lambda a, b: a | b, "<<": lambda a, b: a << b}


def build(p: Builder, expr: Any) -> Any:
    """A fixture expression as builder calls: [method, args...], operators, plain values."""
    if isinstance(expr, list) and expr and isinstance(expr[0], str):
        op, *args = expr
        if op in OPERATORS:
            return reduce(OPERATORS[op], [build(p, a) for a in args])
        if op == "rule_fn":
            return p.rule(args[0], lambda: build(p, args[1]))
        return getattr(p, op)(*[build(p, a) for a in args])
    if isinstance(expr, dict):
        if "list" in expr:
            return [build(p, item) for item in expr["list"]]
        if "tools" in expr:
            return FIXTURE["tools"][expr["tools"]]
        return expr.get("dict", expr.get("json"))
    return expr


def arena_of(case: dict[str, Any]) -> peg.Arena:
    p = ChatBuilder() if case["builder"] == "chat" else Builder()
    for definition in case.get("defs", []):
        build(p, definition)
    p.set_root(build(p, case["grammar"]))
    return p.build()


def check_result(case: dict[str, Any], result: peg.Result) -> None:
    expect, text = case["expect"], case["input"]
    kind = {peg.FAIL: "fail", peg.SUCCESS: "success", peg.NEED_MORE_INPUT: "need_more_input"}
    wanted = expect["type"]
    if wanted == "not_fail":
        assert not result.fail()
    elif wanted == "not_success":
        assert not result.success()
    else:
        assert kind[result.type] == wanted.replace("success_subset", "success")
    if "end" in expect:
        end = len(text.encode()) if expect["end"] == "all" else expect["end"]
        assert len(text[: result.end].encode()) == end  # upstream counts UTF-8 bytes
    if "text" in expect:
        assert text[result.start : result.end] == expect["text"]


def check_msg(expected: dict[str, Any], msg: ChatMsg) -> None:
    assert msg.content == expected["content"]
    assert msg.reasoning_content == expected["reasoning_content"]
    assert [c.name for c in msg.tool_calls] == [c["name"] for c in expected["tool_calls"]]
    for call, want in zip(msg.tool_calls, expected["tool_calls"], strict=True):
        if want["arguments"] is not None:
            assert call.arguments == want["arguments"]


def simple_tokenize(text: str) -> list[str]:
    """The pieces of tests/peg-parser/simple-tokenize.cpp: a new piece before each of
    its break characters."""
    pieces: list[str] = []
    for char in text:
        if not pieces or char in ' \n\t{},["].<>=/':
            pieces.append(char)
        else:
            pieces[-1] += char
    return pieces


def mapped(arena: peg.Arena, text: str, flags: int) -> tuple[peg.Result, ChatMsg]:
    ctx = peg.Context(text, flags)
    result = arena.parse(ctx)
    msg = ChatMsg()
    Mapper(msg).from_ast(ctx.ast, result)
    return result, msg


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['source'].split('/')[-1]}:{c['name']}" for c in CASES]
)
def test_upstream_case(case: dict[str, Any]) -> None:
    """Every extracted case gives what llama.cpp's test asserts."""
    arena = arena_of(case)
    flags = peg.FLAG_LENIENT if case["lenient"] else peg.FLAG_NONE
    if "expect_tags" in case:
        tagged = parse_and_extract(arena, case["input"], flags)
        check_result(case, tagged.result)
        for tag, text in (case["expect_tags"] or {}).items():
            assert tagged.tags[tag] == text
        if case["expect_tags"] is not None and case["expect"]["type"] != "success_subset":
            assert tagged.tags == case["expect_tags"]
    elif case.get("incremental"):
        pieces = simple_tokenize(case["input"])
        for count in range(1, len(pieces) + 1):
            last = count == len(pieces)
            result, msg = mapped(arena, "".join(pieces[:count]), 0 if last else peg.FLAG_LENIENT)
            assert not result.fail()
            forbidden = case.get("forbid_tool_name")
            assert all(call.name != forbidden for call in msg.tool_calls)
        if case["expect_msg"] is not None:  # upstream asserts only "not fail" for some
            check_msg(case["expect_msg"], msg)
    else:
        result, msg = mapped(arena, case["input"], flags)
        check_result(case, result)
        if "expect_msg" in case:
            check_msg(case["expect_msg"], msg)


def test_case_count() -> None:
    """The fixture keeps every case extracted (a shrinking file would hide lost ones)."""
    assert len(FIXTURE["cases"]) >= 147 and len(CASES) >= 144


# common_chat_peg_parse around the parse.
def thinking(p: ChatBuilder) -> Any:
    think = p.optional("<think>" + p.reasoning(p.until("</think>")) + "</think>")
    return think + p.content(p.until("<tool_call>")) + p.end()


def test_generation_prompt_is_read_before_the_completion() -> None:
    msg = peg_parse(build_chat_peg_parser(thinking), "why</think>Hi", fmt="peg-native",
                    generation_prompt="<think>")  # fmt: skip
    assert (msg.reasoning_content, msg.content) == ("why", "Hi")


def test_no_parser_reads_everything_as_content() -> None:
    assert peg_parse(None, "<think>x</think> y").content == "<think>x</think> y"


def test_a_failed_parse_is_llama_cpp_error() -> None:
    with pytest.raises(ChatParseError, match="does not match the expected peg-native format"):
        peg_parse(build_chat_peg_parser(thinking), "a<tool_call>b", fmt="peg-native")


def test_lenient_unclosed_json_call_still_maps() -> None:
    """LENIENT: an unfinished call needs more input, which is no failure; the call is
    kept with the arguments written so far (what llama-server returns)."""
    tools = FIXTURE["tools"]["create_tools"]
    arena = build_chat_peg_parser(
        lambda p: (
            p.content(p.until("<tool_call>"))
            + p.standard_json_tools("<tool_call>", "</tool_call>", tools, True, False)
            + p.end()
        )
    )
    msg = peg_parse(arena, 'Hi<tool_call>{"name": "get_forecast", "arguments": {"days": 3')
    assert msg.content == "Hi"
    assert [(c.name, c.arguments) for c in msg.tool_calls] == [("get_forecast", '{"days": 3')]


def test_until_stops_before_a_cut_delimiter() -> None:
    arena = build_chat_peg_parser(lambda p: p.content(p.until("</think>")))
    assert peg_parse(arena, "abc</thi").content == "abc"


@pytest.mark.parametrize(
    ("python", "json_text"),
    [
        ("{'a': 'it\\'s', 'b': True, 'c': None}", '{"a": "it\'s", "b": true, "c": null}'),
        ("['say \"hi\"', False]", '["say \\"hi\\"", false]'),
        ("Tru", "tru"),
    ],
)
def test_normalize_quotes_to_json(python: str, json_text: str) -> None:
    assert normalize_quotes_to_json(python) == json_text


# Hostile completions: the parse stays linear in the text.
def tool_grammar(p: ChatBuilder) -> Any:
    tools = FIXTURE["tools"]["create_tools"]
    think = p.optional("<think>" + p.reasoning(p.until("</think>")) + "</think>")
    calls = p.standard_json_tools("<tool_call>", "</tool_call>", tools, True, False)
    return think + p.content(p.until("<tool_call>")) + p.zero_or_more(p.space() + calls) + p.end()


HOSTILE = {
    "repeated open tags": lambda n: "<tool_call>" * (n // 11),
    "unclosed braces": lambda n: "<tool_call>" + "{" * n,
    "open strings": lambda n: '<tool_call>{"name": "' + "a" * n,
    "calls without end": lambda n: (
        '<tool_call>{"name": "get_forecast", "arguments": {}}' * (n // 52)
    ),
    "cut delimiters": lambda n: "</think" * (n // 7),
    "spaces": lambda n: "<tool_call>{" + " " * n,
    "escapes": lambda n: '<tool_call>{"name": "' + "\\n" * (n // 2),
    "deep arrays": lambda n: '<tool_call>{"name": "get_forecast", "arguments": ' + "[" * n,
}


@pytest.mark.parametrize("grammar", [tool_grammar], ids=["json-tools"])
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_text_parses_in_linear_time(grammar: Callable, name: str) -> None:
    """Ten times the text takes about ten times as long (a quadratic parse: a hundred)."""
    arena = build_chat_peg_parser(grammar)

    def run(text: str) -> None:
        # llama-server's error (or its stack running out) is an answer too.
        with contextlib.suppress(ChatParseError, peg.DepthError):
            peg_parse(arena, text, fmt="peg-native")

    small, big = HOSTILE[name](10_000), HOSTILE[name](100_000)
    assert len(big) >= 90_000
    ratio = cpu_seconds(lambda: run(big)) / max(cpu_seconds(lambda: run(small)), 2e-3)
    assert ratio < 30, f"{name}: 10x the text took {ratio:.0f}x the time"


def test_deep_nesting_is_a_depth_error_not_a_crash() -> None:
    arena = build_chat_peg_parser(lambda p: p.content(p.json()) + p.end())
    with pytest.raises(peg.DepthError):
        peg_parse(arena, "[" * 100_000)
    assert peg_parse(arena, "[" * 200 + "]" * 200).content == "[" * 200 + "]" * 200
