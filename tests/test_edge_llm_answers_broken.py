"""Broken and hostile completions read by the edge-llm engine: each is explained in words
(what Edge-LLM's server returns and why), none is a 500 or a hang, and reading stays
linear in the text where Edge-LLM's own regular expressions are not."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from app.render.answer import ParsedAnswer
from app.render.engines.edge_llm.answers.calls import ServerFailure, tools_of
from app.render.engines.edge_llm.answers.parse import parse
from app.render.engines.edge_llm.answers.reasoning import THINK
from oracles.edge_llm.answers import engine_reading
from tests.support.timing import cpu_seconds

W = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
PROPERTIES = {"city": {"type": "string"}, "days": {"type": "integer"}}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": PROPERTIES}}},
]  # fmt: skip


def read(completion: str, kwargs: dict | None = None) -> ParsedAnswer:
    """The engine's reading, for a Qwen3 model (its `auto` reasoning parser: qwen3)."""
    return engine_reading(completion, TOOLS, kwargs=kwargs)


def said(answer: ParsedAnswer) -> str:
    return " ".join(answer.notes)


def test_a_block_that_is_not_json_is_content_and_says_where_and_why() -> None:
    text = f'<tool_call>{W}</tool_call> and <tool_call>{{"name": "get_weather", "arg</tool_call>'
    answer = read(text)
    assert [call.name for call in answer.tool_calls] == ["get_weather"]
    assert answer.content == ' and <tool_call>{"name": "get_weather", "arg</tool_call>'
    assert (
        "The `<tool_call>` block at character 83 is not valid JSON (Unterminated string "
        "starting at: line 1 column 25 (char 24)) nor a Python literal"
    ) in said(answer)
    assert "returns it as content" in said(answer)


def test_an_unclosed_block_stays_content() -> None:
    answer = read(f"Sure. <tool_call>{W}")
    assert answer.tool_calls == () and answer.content == f"Sure. <tool_call>{W}"
    assert "`<tool_call>` at character 6 has no `</tool_call>` after it" in said(answer)


def test_calls_to_functions_the_request_does_not_offer() -> None:
    other = '{"name": "delete_everything", "arguments": {}}'
    alone = read(f"<tool_call>{other}</tool_call>")
    assert alone.tool_calls == () and "`delete_everything`, not one of the request's tools" in (
        said(alone)
    )
    mixed = read(f"<tool_calls>[{W}, {other}]</tool_calls>")
    assert len(mixed.tool_calls) == 1
    assert "drops the call to `delete_everything`" in said(mixed)
    forced = read(
        f"<tool_call>{other}</tool_call>",
        {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
    )
    assert "not `get_weather`, the function tool_choice forces" in said(forced)


def test_arguments_that_are_not_json_are_wrapped_and_said() -> None:
    answer = read('<tool_call>{"name": "get_weather", "arguments": "Paris"}</tool_call>')
    assert answer.tool_calls[0].arguments == '{"__raw__": "Paris"}'
    assert 'wrapped as {"__raw__": ...}' in said(answer)


def test_a_bare_call_without_markup_drops_the_text() -> None:
    answer = read('Let me check.\nget_weather(city="Paris", days=3)')
    assert answer.content is None and json.loads(answer.tool_calls[0].arguments) == {
        "city": "Paris",
        "days": 3,
    }
    assert "read the whole completion as one bare call" in said(answer)
    assert "content" not in (answer.message() or {})


def test_reasoning_without_its_end() -> None:
    answer = read("<think>still thinking", {"enable_thinking": True})
    assert (answer.reasoning_content, answer.content) == ("still thinking", "")
    assert "There is no `</think>`" in said(answer)
    before = read("Hi <think>plan</think>Paris", {"enable_thinking": True})
    assert before.content == "Paris" and "drops the text before `<think>`" in said(before)


@pytest.mark.parametrize(
    ("completion", "error"),
    [
        ("<tool_call>get_weather(city={1, 2})</tool_call>", "HTTP 400"),
        ("<tool_call>get_weather(city={[1]: 2})</tool_call>", "HTTP 400"),
        ("<tool_call>" + "[" * 5000 + "</tool_call>", "engine error"),  # JSON's recursion
        ("<tool_call>" + "[" * 3000 + "]" * 3000 + "</tool_call>", "engine error"),
    ],
)
def test_what_edge_llm_fails_on_is_its_error(completion: str, error: str) -> None:
    """Where Edge-LLM's parser raises, its server answers an error; so does the engine,
    saying which (a TypeError or ValueError is its HTTP 400, anything else an engine
    error), and there is no message to send back."""
    answer = read(completion)
    assert answer.error is not None and error in answer.error and answer.message() is None


def test_the_api_explains_broken_markup_and_never_fails(client) -> None:
    body = {
        "template": "{{ messages[0].content }}",
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": TOOLS,
        "add_generation_prompt": True,
    }
    for completion in (
        '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>',
        "<tool_call>get_weather(city={1})</tool_call>",
        "<function=get_weather><parameter=days>x</parameter>",
        "[TOOL_CALLS]" * 2000,
    ):
        answer = client.post(
            "/api/parse", data=json.dumps({**body, "completion": completion}),
            content_type="application/json",
        )  # fmt: skip
        assert answer.status_code == 200, answer.get_json()
        (entry,) = [e for e in answer.get_json()["engines"] if e["engine"] == "edge-llm"]
        assert entry["problem"] is None and (entry["message"] or entry["error"])
        assert entry["notes"] or entry["error"] or entry["message"]["tool_calls"] == []


#: (head, repeated unit, count for ~100 kB, tail, tools read, thinking): texts on which a
#: scan that tries each opener against the rest of the text is quadratic.
HOSTILE = (
    ("", "<tool_call>", 9000, "", True, False),
    ("", "<function=get_weather>", 4500, "", True, False),
    ("", "<function=", 10000, "", True, False),
    ("<tool_call>", "<function=get_weather>x", 4000, "</tool_call>", True, False),
    ("<function=get_weather>", "<parameter=city>", 6000, "</function>", True, False),
    ("<tool_call>", '<atem:invoke name="', 5000, "</tool_call>", True, False),
    ("<tool_call>", '<atem:invoke name="x" ', 4000, "</tool_call>", True, False),
    ("<tool_call>", '<atem:invoke name="x"><atem:parameter name="', 2000, "</tool_call>",
     True, False),
    ("", "[TOOL_CALL]", 9000, "", True, False),
    ("", "[TOOL_CALLS]x[/TOOL_CALL]", 4000, "", True, False),
    ("```", " ", 100_000, "x", True, False),
    ("", "get_weather() ", 7000, "x", True, False),
    ("<tool_call>", ")" + " " * 50, 2000, "x</tool_call>", True, False),
    ("", f"<tool_call>{W}</tool_call>", 1500, "", True, False),
    ("", "<think>", 14000, "", False, True),
    ("", "</think>x", 11000, "", True, True),
)  # fmt: skip


@pytest.mark.parametrize(("head", "unit", "count", "tail", "with_tools", "thinking"), HOSTILE)
def test_hostile_answers_take_linear_time(
    head: str, unit: str, count: int, tail: str, with_tools: bool, thinking: bool
) -> None:
    """A 100 kB hostile answer returns, and four times the text costs about four times the
    time (a quadratic reader takes sixteen; twelve allows for noise), measured as this
    process's CPU time against a linear scan (`tests.support.timing`)."""
    text, small = (head + unit * n + tail for n in (count, count // 4))
    tools = tools_of(TOOLS, None) if with_tools else None
    parser = THINK if thinking else None

    def read_text(t: str) -> Callable[[], object]:
        def run() -> object:
            try:
                return parse(t, tools, parser)
            except ServerFailure as failure:  # where Edge-LLM's parser raises too
                return failure

        return run

    def scan(t: str) -> Callable[[], object]:
        return lambda: sum(1 for ch in t if ch == "<")

    read_text(text)()  # returns, whatever it finds
    big = cpu_seconds(read_text(text), repeat=2)
    growth = big / max(cpu_seconds(read_text(small), repeat=2), 1e-6)
    scan_growth = cpu_seconds(scan(text), 2) / max(cpu_seconds(scan(small), 2), 1e-6)
    if big > 0.002:  # below that, a ratio of timings means nothing
        assert growth < max(2 * scan_growth, 12)  # quadratic: 16
    # Python's own parser (`ast`, as Edge-LLM uses it) costs most: ~1 ms per kB of calls.
    assert big < 1000 * max(cpu_seconds(scan(text), 2), 1e-4)
