"""The round trip: the parsed answer sent back, the next prompt compared with the last
prompt and its completion, on real templates rendered by the reference engine."""

from __future__ import annotations

from app.answers.roundtrip import compare, next_request, sent_back, unchecked
from app.render import engines
from app.render.answer import ParsedAnswer, ToolCall
from app.render.core import RenderRequest
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def shared_template(name: str) -> str:
    return (TEMPLATES_DIR / name).read_text(encoding="utf-8")


def trip(template: str, completion: str, answer: ParsedAnswer, tools=None):
    request = RenderRequest(
        template=template, messages=QUESTION, tools=tools, add_generation_prompt=True
    )
    prompt = engines.render(request).prompt
    message = sent_back(answer, openai_client=False)
    next_prompt = engines.render(next_request(request, message)).prompt
    return compare(prompt, completion, next_prompt, answer)


@needs_shared
def test_a_plain_answer_keeps_the_cache_in_chatml():
    template = shared_template("Qwen-Qwen2.5-7B-Instruct.jinja")
    result = trip(template, "Paris.", ParsedAnswer("hermes", content="Paris."))
    assert result.reused is True


@needs_shared
def test_qwen3_drops_the_reasoning_of_an_earlier_turn():
    template = shared_template("Qwen-Qwen3-0.6B.jinja")
    completion = "<think>\nIt is Paris.\n</think>\n\nParis."
    answer = ParsedAnswer("peg-native", content="Paris.", reasoning_content="It is Paris.")
    result = trip(template, completion, answer)
    assert result.reused is False
    assert "drops the reasoning" in result.reason
    assert not result.in_history
    assert "<think>" in result.expected and "<think>" not in result.actual


@needs_shared
def test_an_empty_thinking_block_read_as_whitespace_reasoning_is_said_to_be_dropped():
    """vLLM's qwen3 parser returns `<think>\n\n</think>`'s reasoning as "\n\n"; Qwen3
    drops the block from an earlier turn, which is the reason, not "whitespace differs"."""
    template = shared_template("Qwen-Qwen3-0.6B.jinja")
    completion = "<think>\n\n</think>\n\nParis."
    answer = ParsedAnswer("qwen3", content="\n\nParis.", reasoning_content="\n\n")
    result = trip(template, completion, answer)
    assert result.reused is False
    assert "drops the thinking block from the history" in result.reason, result.reason


@needs_shared
def test_arguments_written_back_with_other_spacing_break_the_prefix():
    template = shared_template("Qwen-Qwen2.5-7B-Instruct.jinja")
    completion = '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>'
    call = ToolCall("get_weather", '{"city":"Paris"}', "call00001")
    answer = ParsedAnswer("hermes", content=None, tool_calls=(call,))
    result = trip(template, completion, answer, TOOLS)
    assert result.reused is False
    assert "tool call" in result.reason and "re-serialised" in result.reason
    assert '{"city":"Paris"}' in result.expected and '{"city": "Paris"}' in result.actual


def test_a_library_gets_its_arguments_back_as_objects_and_a_server_as_text():
    answer = ParsedAnswer("x", tool_calls=(ToolCall("f", '{"a": 1}', "id1"),))
    library = sent_back(answer, openai_client=False)
    server = sent_back(answer, openai_client=True)
    assert library["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    assert server["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'


def test_each_tool_call_gets_a_result_and_an_answer_a_next_question():
    request = RenderRequest(template="", messages=QUESTION)
    calls = {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, {"id": "b"}]}
    after_calls = next_request(request, calls).messages
    assert [m["role"] for m in after_calls] == ["user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in after_calls[2:]] == ["a", "b"]
    after_answer = next_request(request, {"role": "assistant", "content": "x"}).messages
    assert [m["role"] for m in after_answer] == ["user", "assistant", "user"]


def test_no_round_trip_without_a_new_turn_or_with_an_error():
    asking = RenderRequest(template="", messages=QUESTION, add_generation_prompt=True)
    not_asking = RenderRequest(template="", messages=QUESTION)
    assert unchecked(asking, ParsedAnswer("x", content="y")) is None
    assert "add_generation_prompt" in unchecked(not_asking, ParsedAnswer("x", content="y"))
    assert "error" in unchecked(asking, ParsedAnswer("x", error="Failed to parse input"))
