"""The edge-llm engine reads a completion as TensorRT Edge-LLM's OpenAI server does: Edge-LLM's
own parser tests (`oracles/edge_llm/parser_cases.json`), what its parser returned
on every recorded text (`answers.json`, `oracles/edge_llm/record.py`), how `auto`
picks, and the message its server builds from the reading (serving_chat.py)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from app.answers.menu import EXAMPLE_TOOLS
from app.problems import TemplateProblem
from app.render.answer import AnswerRequest, ParsedAnswer
from app.render.core import RenderRequest, read_with
from app.render.engines import ENGINES
from app.render.engines.edge_llm.answers.reasoning import auto_reasoning, auto_tool
from app.render.engines.edge_llm.server import check_tools
from app.render.limits import DEFAULT_LIMITS
from oracles.edge_llm.answers import engine_reading, ours, own_cases, recorded
from oracles.edge_llm.expectations import meets
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

OWN = own_cases()
RECORDED = recorded()
EDGE = ENGINES["edge-llm"]
WEATHER = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "get_time"}},
]  # fmt: skip
W = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@pytest.mark.parametrize("case", OWN["cases"], ids=lambda case: case["name"])
def test_edge_llm_own_test_cases(case: dict[str, Any]) -> None:
    """Each expectation of Edge-LLM's own tests, which Edge-LLM itself meets, ours too."""
    assert case["holds_in_edge_llm"], "Edge-LLM's parser meets its own test"
    assert meets(case["expect"], ours(case, OWN["tools"][case["tools"]]))


@pytest.mark.parametrize("case", OWN["request_cases"], ids=lambda case: case["name"])
def test_edge_llm_own_request_checks(case: dict[str, Any]) -> None:
    """Its test of the tool fields of a request: accepted as it says, or refused in its words."""
    kwargs = {"tool_choice": case["tool_choice"]} if "tool_choice" in case else {}
    if "parallel_tool_calls" in case:
        kwargs["parallel_tool_calls"] = case["parallel_tool_calls"]
    tools = OWN["tools"][case["tools"]] if case["tools"] else None
    request = RenderRequest(template="", messages=case["messages"], tools=tools, kwargs=kwargs)
    if "error" in case["expect"]:
        with pytest.raises(TemplateProblem, match=case["expect"]["error"]):
            check_tools(request)
    else:
        assert check_tools(request) == (case["expect"]["tool_choice"], None)


@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda case: case["name"])
def test_same_as_edge_llm(case: dict[str, Any]) -> None:
    """Content, reasoning, calls (name, arguments as exact text, ids the text gave), or
    the exception Edge-LLM's parser raises: as its own code returned them."""
    tools = RECORDED["tools"][case["tools"]] if case["tools"] else None
    assert ours(case, tools) == case["result"]


def test_the_recording_covers_every_reading_path() -> None:
    """Menu texts of every template, Edge-LLM's test corpus, broken markup and texts its
    parser raises on, with tools, without, thinking on and off."""
    results = [case["result"] for case in RECORDED["cases"]]
    assert RECORDED["source"]["commit"] == "83f5f76871d71fbd2682c903eac285621d9077f7"
    assert sum("menu" in case for case in RECORDED["cases"]) >= 700
    assert sum(1 for r in results if "raises" in r) >= 5
    assert sum(1 for r in results if r.get("calls")) >= 150
    assert sum(1 for r in results if r.get("reasoning")) >= 100
    raised = {r["raises"]["type"] for r in results if "raises" in r}
    assert raised == {"TypeError", "RecursionError"}


def test_auto_picks_as_edge_llm() -> None:
    """`auto` for every checkpoint folder name recorded: the tool parser's label and the
    reasoning parser, as Edge-LLM picks them."""
    for model, picked in RECORDED["auto"].items():
        assert (auto_tool((model,)), auto_reasoning((model,))) == (
            picked["tool"],
            picked["reasoning"],
        ), model
    assert auto_reasoning(("My model", "qwen3")) == "qwen3"  # any name may say it


def read(completion: str, *, tools: Any = WEATHER, **fields: Any) -> ParsedAnswer:
    return engine_reading(completion, tools, **fields)


def test_the_message_is_the_servers() -> None:
    """With calls and no text the content is null, and the server leaves null fields out;
    ids are `call_` and 24 hex digits (stable here); arguments are JSON text."""
    answer = read(f"<tool_call>{W}</tool_call><tool_call>{W}</tool_call>")
    message = answer.message()
    assert message is not None and list(message) == ["role", "tool_calls"]
    ids = [call["id"] for call in message["tool_calls"]]
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids) and len(set(ids)) == 2
    assert message["tool_calls"][0]["function"] == {
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert read(f"<tool_call>{W}</tool_call>").message() == message | {
        "tool_calls": message["tool_calls"][:1]
    }
    assert answer.parser == "hermes"


def test_empty_content_without_calls_is_an_empty_string() -> None:
    message = read("<think>plan</think>", kwargs={"enable_thinking": True}).message()
    assert message == {"role": "assistant", "content": "", "reasoning_content": "plan"}


def test_reasoning_only_for_requests_with_enable_thinking() -> None:
    text = "<think>plan</think>Paris."
    off = read(text)
    assert (off.content, off.reasoning_content) == (text, None)
    assert "does not set enable_thinking" in " ".join(off.notes)
    on = read(text, kwargs={"enable_thinking": True})
    assert (on.content, on.reasoning_content, on.parser) == ("Paris.", "plan", "hermes + qwen3")
    chosen = read(text, names=(), kwargs={"enable_thinking": True})
    assert chosen.reasoning_content is None and "knows no name" in " ".join(chosen.notes)
    picked = read(text, names=(), kwargs={"enable_thinking": True},
                  options={"reasoning_parser": "deepseek_r1"})  # fmt: skip
    assert picked.reasoning_content == "plan" and picked.parser == "generic + deepseek_r1"


def test_muse_glimmer_reasoning_is_always_on() -> None:
    text = " to=self<|message|>plan<|eom|><|start|>assistant to=user<|message|>Hi<|eot|>"
    answer = read(text, tools=None, names=("muse_glimmer",))
    assert (answer.reasoning_content, answer.content, answer.parser) == (
        "plan",
        "Hi",
        "muse_glimmer",
    )


def test_im_end_is_removed_from_the_content() -> None:
    answer = read("<think>a<|im_end|></think>b<|im_end|>", kwargs={"enable_thinking": True})
    assert (answer.content, answer.reasoning_content) == ("b", "a<|im_end|>")
    assert "removes `<|im_end|>`" in " ".join(answer.notes)


def test_without_tools_the_markup_stays_content() -> None:
    text = f"<tool_call>{W}</tool_call>"
    cases = ((None, {}, "offers no tools"), (WEATHER, {"tool_choice": "none"}, '"none"'))
    for tools, kwargs, why in cases:
        answer = read(text, tools=tools, kwargs=kwargs)
        assert answer.tool_calls == () and answer.content == text
        assert why in answer.notes[0] and answer.parser == "none"


def test_a_request_the_server_refuses_is_its_refusal() -> None:
    request = RenderRequest(template="x", messages=[{"role": "user", "content": "q"}],
                            tools=WEATHER, kwargs={"tool_choice": "nope"})  # fmt: skip
    with pytest.raises(TemplateProblem, match="Unknown forced tool name: nope"):
        read_with(EDGE, AnswerRequest(request, "hi"), DEFAULT_LIMITS)


def test_the_serve_line_carries_the_parsers() -> None:
    from app.render.command_line import CommandContext

    def serve(parsers: dict) -> str:
        context = CommandContext(template="x", kwargs={}, parsers=parsers)
        (line,) = [c for c in EDGE.commands.lines(context) if c.form == "serve"]
        return line.command.splitlines()[-1]

    assert serve({}).endswith("--tool-call-parser auto --reasoning-parser auto")
    chosen = {"edge-llm": {"tool_call_parser": "hermes", "reasoning_parser": "qwen3"}}
    assert serve(chosen).endswith("--tool-call-parser hermes --reasoning-parser qwen3")
    unknown = {"edge-llm": {"tool_call_parser": "nope; rm -rf /", "reasoning_parser": "none"}}
    assert serve(unknown).endswith("--tool-call-parser auto --reasoning-parser none")
    assert json.dumps(serve(chosen)).count("tensorrt-edgellm-serve") == 1


@needs_shared
def test_the_round_trip_sends_edge_llms_message_back(client) -> None:
    """Qwen3 (the Hub's template, which Edge-LLM loads) with thinking on and its parallel
    calls: Edge-LLM's message goes back as its client sends it, and the next prompt,
    rendered by the edge-llm engine, is compared with this one."""
    template = (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    body = {
        "template": template,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "add_generation_prompt": True,
        "tools": EXAMPLE_TOOLS,
        "kwargs": {"enable_thinking": True},
        "library": "qwen3",
    }
    made = client.post("/api/completion", json={**body, "kind": "parallel_tool_calls"})
    body["completion"] = made.get_json()["completion"]
    answer = client.post("/api/roundtrip", json={**body, "engines": ["edge-llm"]})
    assert answer.status_code == 200, answer.get_json()
    (entry,) = answer.get_json()["engines"]
    assert entry["parser"] == "hermes + qwen3" and entry["message"]["reasoning_content"] == "\n\n"
    assert len(entry["message"]["tool_calls"]) == 2
    trip = entry["round_trip"]
    # Qwen3 writes the calls back from their arguments, after the reasoning it keeps.
    assert trip["reused"] is False and trip["in_history"] is False
    assert "writes the tool call back differently" in trip["reason"]
