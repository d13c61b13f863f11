"""What llama-server's reading of a completion does that its answer does not show.

Against the real library (b11434): the recorded fixtures (`answers.json`,
`test_chat_parse_cases.json`) and, where no fixture case shows a behaviour, the answer
llama.cpp's common library gave to the same request through the recorder's harness
(`oracles/llamacpp/record.py`'s program), quoted below as data.

- A continued (prefilled) final message is continued as the request sent it, even for
  StepFun templates, whose rendered messages llama.cpp trims.
- A specialized handler's template error is llama-server's error as it is; only the
  autoparser wraps its failure in "Unable to generate parser ...".
- Text after the part the grammar reads is dropped without a word: a note says so.
- Tool-call arguments that are not JSON are passed on as they are: a note says so; a
  completion the grammar refuses gets a note on where it got stuck.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from app.render.core import RenderRequest
from app.render.engines.llamacpp.answers import read_completion
from app.render.engines.llamacpp.apply import derive
from app.render.engines.llamacpp.apply.templates_apply import apply_for_completion
from app.render.limits import DEFAULT_LIMITS
from oracles.llamacpp import CONSTRUCTS, load
from tests.support.shared_data import require_shared
from tests.support.timing import cpu_seconds
from tests.test_llamacpp_answers import (
    _ANSWER_CASES,
    _ANSWERS,
    _TEST_CHAT_CASES,
    _template,
    _test_chat_answer,
    answer_for,
)

require_shared()

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def _request(template: str, messages: list[dict[str, Any]] | None = None, **fields: Any):
    return RenderRequest(
        template=_template(template),
        messages=messages or QUESTION,
        tools=_ANSWERS["tool_definitions"],
        add_generation_prompt=True,
        special_tokens=_ANSWERS["special_tokens"],
        **fields,
    )


def _recorded(request: str, kind: str) -> dict[str, Any]:
    return next(c for c in _ANSWER_CASES if c["request"] == request and c["kind"] == kind)


def _notes(answer: Any, words: str) -> list[str]:
    return [note for note in answer.notes if words in note]


def _stop(note: str) -> int:
    found = re.search(r"stops at character ([\d,]+)", note)
    assert found, note
    return int(found.group(1).replace(",", ""))


# --- 1. StepFun: the continued message keeps its trailing space ----------------------


def test_stepfun_prefill_is_continued_untrimmed() -> None:
    messages = [
        {"role": "user", "content": "Hey there!"},
        {"role": "assistant", "content": "Hello, "},
    ]
    request = _request("StepFun3.5-Flash.jinja", messages, continue_final_message=True)
    inputs = apply_for_completion(request, DEFAULT_LIMITS).inputs
    assert inputs.continue_msg is not None and inputs.continue_msg["content"] == "Hello, "
    params, handler = derive.derive_params(inputs)
    assert handler == "qwen3_coder"
    assert params.generation_prompt.endswith("\n\nHello, ")
    answer = read_completion(request, "world!", DEFAULT_LIMITS)
    assert (answer.error, answer.content) == (None, "Hello, world!")


def test_stepfun_prefill_case_of_test_chat() -> None:
    """test-chat.cpp's StepFun prefill, as the real library read it (generation prompt
    "...</think>\\n\\nHello, ")."""
    case = next(
        c
        for c in _TEST_CHAT_CASES
        if c["template"] == "StepFun3.5-Flash.jinja" and c["continue_final_message"] == 3
    )
    assert case["generation_prompt"].endswith("Hello, ")
    answer = _test_chat_answer(case)
    assert answer.content == case["verified"]["result"]["content"] == "Hello, world!\nWhat's up?"


# --- 2. A handler's render error is not wrapped ---------------------------------------

#: What the real library threw for Qwen3.5-4B and a system message after the user's.
QWEN35_ERROR = (
    "\n------------\nWhile executing CallExpression at line 85, column 32 in source:\n"
    "...first %}↵            {{- raise_exception('System message must be at the beginnin...\n"
    "                                           ^\n"
    "Error: Jinja Exception: System message must be at the beginning."
)


def test_handler_render_error_is_thrown_as_it_is() -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "system", "content": "Be brief"}]
    answer = read_completion(_request("Qwen3.5-4B.jinja", messages), "Hi", DEFAULT_LIMITS)
    assert answer.error == "Jinja Exception: System message must be at the beginning."
    assert QWEN35_ERROR.endswith("Error: " + answer.error)
    assert "Unable to generate parser" not in answer.error
    (note,) = answer.notes
    assert "qwen3_coder handler" in note and "line 85" in note


def test_autoparser_render_error_is_wrapped() -> None:
    messages = [{"role": "user", "content": "Hi"}, {"role": "user", "content": "Again"}]
    answer = read_completion(_request("google-gemma-2-2b-it.jinja", messages), "Hi", DEFAULT_LIMITS)
    assert answer.error is not None
    assert answer.error.startswith(
        "Unable to generate parser for this template. Automatic parser generation failed: "
    )
    assert answer.error.endswith(
        "Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/..."
    )


# --- 3. Text after the parsed part is dropped: a note says how much and what ---------------


#: A GigaChat 3 tool call closed by its end marker, and the library's reading of it
#: (harness, b11434, the `tools` request of answers.json): the marker is not in it.
GIGACHAT_CALL = (
    '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "get_weather", "arguments": '
    '{"city": "Paris"}}<|message_sep|>'
)
GIGACHAT_CALLS = [("get_weather", '{"city": "Paris"}')]


def test_gigachat_end_marker_is_dropped_with_a_note() -> None:
    answer = read_completion(_request("GigaChat3-10B-A1.8B.jinja"), GIGACHAT_CALL, DEFAULT_LIMITS)
    assert (answer.error, answer.content) == (None, "")
    assert [(c.name, c.arguments) for c in answer.tool_calls] == GIGACHAT_CALLS
    (note,) = _notes(answer, "drops the rest")
    assert note.startswith("llama-server's parser stops at character 98 of 113 and drops ")
    assert "(`<|message_sep|>`, 15 characters)" in note
    assert "only the `<|message_sep|>` marker" in note


def test_second_tool_call_dropped_when_parallel_calls_are_off() -> None:
    case = _recorded("Qwen3-Coder.jinja|tools_parallel_false", "parallel_tool_calls")
    answer = answer_for(case)
    assert [c.name for c in answer.tool_calls] == ["get_weather"]
    assert len(case["result"]["tool_calls"]) == 1  # the library drops it too
    (note,) = _notes(answer, "drops the rest")
    assert "stops at character 96 of 194" in note
    assert "(`<tool_call>\\n<function=get_local_time>\\n<p…`, 98 characters)" in note
    assert "in neither the content nor the tool calls" in note


#: The library's answer (harness, b11434) for Qwen3-Coder when an optional argument
#: comes before the required one: the tool call does not parse, and is lost.
OPTIONAL_FIRST = (
    "I will check.\n<tool_call>\n<function=get_weather>\n<parameter=unit>\ncelsius\n"
    "</parameter>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
)
OPTIONAL_FIRST_CONTENT = "I will check.\n"


def test_qwen3_coder_call_lost_after_content() -> None:
    answer = read_completion(_request("Qwen3-Coder.jinja"), OPTIONAL_FIRST, DEFAULT_LIMITS)
    assert (answer.error, answer.content, answer.tool_calls) == (
        None,
        OPTIONAL_FIRST_CONTENT,
        (),
    )
    (note,) = _notes(answer, "drops the rest")
    assert _stop(note) == len(OPTIONAL_FIRST_CONTENT)
    assert "of 147" in note and "`<tool_call>\\n<function=get_weather>\\n<para…`" in note


@pytest.mark.parametrize("source", ["answers", "test_chat"])
def test_drop_note_only_where_the_library_lost_text(source: str) -> None:
    """Wherever the note appears, the real library's message holds none of the text it
    says is dropped; it never appears where nothing is left over."""
    noted = 0
    if source == "answers":
        pairs = [(c, c["result"], answer_for(c)) for c in _ANSWER_CASES if "result" in c]
    else:
        pairs = [(c, c["verified"]["result"], _test_chat_answer(c)) for c in _TEST_CHAT_CASES]
    for case, result, answer in pairs:
        completion = case["completion" if source == "answers" else "input"]
        for note in _notes(answer, "drops the rest"):
            noted += 1
            rest = completion[_stop(note) :].strip()
            assert rest, note  # something is left over
            held = [result["content"], result["reasoning_content"]]
            held += [c["arguments"] for c in result["tool_calls"]]
            assert not any(rest in text for text in held), (case, note)
    assert noted  # the fixtures do have such cases


# --- 4. Broken JSON passed on, and where a refused completion got stuck ------------------


def test_broken_json_arguments_are_noted() -> None:
    case = _recorded("Qwen-Qwen3-0.6B.jinja|tools", "tool_call_broken_json")
    answer = answer_for(case)
    (call,) = answer.tool_calls
    assert call.arguments == case["result"]["tool_calls"][0]["arguments"]
    assert call.arguments == '{"city": "Paris}}\n</tool_call>'
    assert _notes(answer, "not valid JSON") == [
        "The arguments of get_weather are not valid JSON (invalid control character at "
        "char 17); llama-server passes them on as they are, `</tool_call>` included."
    ]


def test_json_note_exactly_where_the_library_passes_broken_json() -> None:
    for case in (c for c in _ANSWER_CASES if "result" in c):
        broken = 0
        for call in case["result"]["tool_calls"]:
            try:
                json.loads(call["arguments"])
            except ValueError:
                broken += 1
        assert len(_notes(answer_for(case), "not valid JSON")) == broken, case["completion"]


def test_refused_completion_says_where_it_got_stuck() -> None:
    case = _recorded("Mistral-Small-3.2-24B-Instruct-2506.jinja|tools", "tool_call")
    answer = answer_for(case)
    assert answer.error == case["error"]
    assert "does not match the expected peg-native format" in answer.error
    assert _notes(answer, "reads the completion only up to") == [
        "llama-server's parser reads the completion only up to character 23 of 64: "
        '`[CALL_ID]call00001[ARGS]{"city": "Paris"…` is not what the peg-native grammar '
        "allows there."
    ]


def test_every_refused_completion_gets_a_where_note() -> None:
    for case in (c for c in _ANSWER_CASES if "error" in c):
        answer = answer_for(case)
        assert answer.error == case["error"]
        where = [n for n in answer.notes if "llama-server's parser" in n or "still fails" in n]
        assert len(where) == 1, (case["request"], case["kind"])


def test_text_after_the_tool_call_is_refused_at_its_start() -> None:
    """The library refuses this (harness, b11434); the note points at "Done."."""
    completion = (
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\nDone.'
    )
    answer = read_completion(_request("Qwen-Qwen3-0.6B.jinja"), completion, DEFAULT_LIMITS)
    assert answer.error == (
        "The model produced output that does not match the expected peg-native format"
    )
    assert _notes(answer, "only up to") == [
        "llama-server's parser reads the completion only up to character 81 of 86: `Done.` "
        "is not what the peg-native grammar allows there."
    ]


def test_hostile_unterminated_arguments_note_is_linear() -> None:
    request = _request("Qwen-Qwen3-0.6B.jinja")
    read_completion(request, "warm up", DEFAULT_LIMITS)  # the analysis, cached
    completion = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "' + "x[{" * 33_000
    answer = read_completion(request, completion, DEFAULT_LIMITS)
    elapsed = cpu_seconds(lambda: read_completion(request, completion, DEFAULT_LIMITS))
    assert answer.error is not None or answer.notes
    scan = cpu_seconds(lambda: sum(1 for char in completion if char == "["), repeat=20)
    assert elapsed / max(scan, 1e-6) < 2000


@pytest.mark.parametrize("family", ["LLM-jp Harmony", "Ling 3"])
def test_a_family_whose_parser_is_not_reproduced_says_so(family: str) -> None:
    # The recorded prefill request of a template of ours with the family's markers, which
    # llama.cpp reads with that family's handler (the recording's prompt is its handler's).
    recorded = load(CONSTRUCTS)["requests"][f"{family} prefill"]
    request = RenderRequest(
        template=recorded["template"], messages=QUESTION, add_generation_prompt=True
    )
    answer = read_completion(request, "Paris.", DEFAULT_LIMITS)
    assert (answer.parser, answer.content, answer.tool_calls) == ("", "Paris.", ())
    (note,) = answer.notes
    assert note.startswith(f"llama.cpp reads this template with its {family}")
    assert "not reproduced here" in note


def test_a_prefill_with_tool_calls_is_refused_as_the_server_refuses_it() -> None:
    # llama-server (since b11434) answers HTTP 400 before it reads any completion.
    recorded = load(CONSTRUCTS)["requests"]["a final assistant message with a tool call"]
    request = RenderRequest(
        template=load(CONSTRUCTS)["request_template"],
        messages=recorded["messages"],
        add_generation_prompt=True,
    )
    answer = read_completion(request, "Paris.", DEFAULT_LIMITS)
    assert (answer.error, answer.tool_calls) == (recorded["error"], ())
