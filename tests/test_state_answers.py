"""The completion and the parser choices are part of the state: the API, the page's form
and shares keep them, and a bad choice is named."""

from __future__ import annotations

import pytest

from app.errors import RequestError
from app.state import PlaygroundState
from app.state.form import form_values, state_from_form

BODY = {
    "template": "{{ messages[0].content }}",
    "messages": [{"role": "user", "content": "Hi"}],
    "completion": '<tool_call>\n{"name": "f"}\n</tool_call>',
    "parsers": {"vllm": {"tool_call_parser": "hermes"}, "llama.cpp": {"reasoning_format": "none"}},
}


def test_the_json_form_keeps_the_completion_and_the_parsers():
    state = PlaygroundState.from_json(BODY)
    assert state.completion == BODY["completion"]
    assert state.parsers == BODY["parsers"]
    again = PlaygroundState.from_json(state.to_json())
    assert again == state


def test_a_state_without_them_writes_neither():
    document = PlaygroundState.from_json({"template": "", "messages": []}).to_json()
    assert "completion" not in document and "parsers" not in document


@pytest.mark.parametrize(
    ("parsers", "field"),
    [
        ("hermes", "parsers"),
        ({"nope": {}}, "parsers.nope"),
        ({"vllm": {"tool_call_parser": 1}}, "parsers.vllm"),
        ({"vllm": ["hermes"]}, "parsers.vllm"),
    ],
)
def test_bad_parser_choices_are_named(parsers, field):
    with pytest.raises(RequestError) as refused:
        PlaygroundState.from_json({**BODY, "parsers": parsers})
    assert refused.value.field == field


def test_the_page_form_carries_them_both_ways():
    state = PlaygroundState.from_json(BODY)
    values = form_values(state)
    assert values["completion"] == BODY["completion"]
    assert values["parser:vllm:tool_call_parser"] == "hermes"
    back, problems = state_from_form({**values, "parser:tgi:unused": ""})
    assert not problems
    assert back.completion == state.completion and back.parsers == state.parsers
