"""app.state: one playground state, its validation, JSON form, form mapping and render."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.render.engines import ENGINES
from app.render.render_request import TEMPLATE_KINDS, RenderRequest
from app.render.request import RequestError, parse_render_request
from app.shares.state import canonical_json
from app.state import PlaygroundState, SourceRef
from app.state.form import first_visit, form_values, state_from_form
from app.state.playground import SOURCE_KINDS

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.text(max_size=4), JSON, max_size=4)
#: Text a browser sends back as typed (it turns every line end into CRLF, read as LF).
TYPED = st.text(max_size=30).filter(lambda text: "\r" not in text)
SOME_TEXT = st.text(min_size=1, max_size=8).filter(lambda text: text.strip() == text)
#: What a date and time input holds: seconds, no time zone.
FORM_NOW = st.datetimes().map(lambda moment: moment.replace(microsecond=0))
ANY_NOW = FORM_NOW | st.datetimes(timezones=st.just(UTC))
ANY_TEXT = st.text(max_size=30)
#: A message field the select names (its own values: off, "true" for the content).
FIELD_NAME = SOME_TEXT.filter(lambda text: text not in ("true", "false"))


#: The Diff view's engine comparison: off, "the other engine" (older shares), or an id;
#: the page's menu names an engine, so a form never holds "the other engine".
ANY_COMPARED = st.booleans() | st.sampled_from(list(ENGINES))
FORM_COMPARED = st.just(False) | st.sampled_from(list(ENGINES))


def states(now=ANY_NOW, text=ANY_TEXT, continued=ANY_TEXT, compared=ANY_COMPARED):
    """Playground states: any the validation accepts, or (with the form's strategies)
    any the page's form can hold."""
    request = st.builds(
        RenderRequest,
        template=text,
        messages=st.lists(OBJECTS, max_size=3),
        tools=st.none() | st.lists(OBJECTS, max_size=2),
        documents=st.none() | st.lists(JSON, max_size=2),
        add_generation_prompt=st.booleans(),
        continue_final_message=st.booleans() | continued,
        special_tokens=st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3),
        kwargs=OBJECTS,
        now=st.none() | now,
        engine=st.sampled_from(list(ENGINES)),
        add_bos_token=st.booleans(),
        add_eos_token=st.booleans(),
        template_kind=st.sampled_from(TEMPLATE_KINDS),
    )
    return st.builds(
        PlaygroundState,
        request=request,
        compare_template=st.none() | text.filter(str.strip),
        compare_engines=compared,
        source=st.none()
        | st.builds(
            SourceRef,
            id=SOME_TEXT,
            kind=st.sampled_from(SOURCE_KINDS),
            file_name=st.none() | SOME_TEXT,
            template_name=st.none() | SOME_TEXT,
        ),
        library=st.none() | SOME_TEXT,
        view=st.none() | SOME_TEXT,
    )


def same(first: PlaygroundState, second: PlaygroundState) -> bool:
    """Equal, key order included (dicts compare equal in any order)."""
    return first == second and canonical_json(first.to_json()) == canonical_json(second.to_json())


# --- the JSON form ----------------------------------------------------------------------


@given(states())
def test_the_json_form_round_trips_every_state(state):
    assert same(PlaygroundState.from_json(state.to_json()), state)
    stored = json.loads(canonical_json(state.to_json()))
    assert same(PlaygroundState.from_json(stored), state)


@given(states())
def test_the_render_request_is_what_the_api_reads_from_the_json_form(state):
    pinned = state.pinned()
    assert pinned.render_request() == parse_render_request(pinned.to_json())
    compare = pinned.render_request("other", "llama.cpp")
    assert (compare.template, compare.engine, compare.messages) == (
        "other",
        "llama.cpp",
        state.request.messages,
    )


def test_top_level_fields_come_in_a_fixed_order_and_nested_keys_as_given():
    kwargs = {"z": 1, "a": {"y": 2, "b": 3}}
    state = PlaygroundState.from_json(
        {"view": "diff", "messages": [], "template": "t", "kwargs": kwargs, "now": "2024-01-01"}
    )
    document = state.to_json()
    assert list(document) == sorted(document)
    assert canonical_json(document).count('"z":1,"a":{"y":2,"b":3}') == 1
    assert document["now"] == "2024-01-01T00:00:00"


def test_defaults_and_nulls_are_left_out_of_the_json_form():
    body = {"template": "t", "messages": [], "engine": "transformers", "tools": None}
    assert PlaygroundState.from_json(body).to_json() == {
        "add_generation_prompt": False,
        "continue_final_message": False,
        "kwargs": {},
        "messages": [],
        "special_tokens": {},
        "template": "t",
    }


def test_pinned_keeps_a_clock_and_sets_a_missing_one():
    moment = datetime(2024, 7, 26, 10, 0, 0, 123)
    state = PlaygroundState(RenderRequest(template="t", messages=[]))
    assert state.pinned(moment).now_text == "2024-07-26T10:00:00.000123"
    assert state.pinned(moment).pinned().now_text == "2024-07-26T10:00:00.000123"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"messages": [1]}, "messages[0]"),
        ({"documents": {}}, "documents"),
        ({"compare_engines": "yes"}, "compare_engines"),
        ({"add_bos_token": 1}, "add_bos_token"),
        ({"view": 3}, "view"),
        ({"library": ["chatml"]}, "library"),
        ({"source": {"id": "s", "kind": "hf", "file_name": 1}}, "source.file_name"),
        ({"engine": "no-such-engine"}, "engine"),
        ({"now": 5}, "now"),
    ],
)
def test_validation_names_the_field(change, field):
    with pytest.raises(RequestError) as refused:
        PlaygroundState.from_json({"template": "t", "messages": [], **change})
    assert refused.value.field == field


# --- the page's form --------------------------------------------------------------------


@given(states(now=FORM_NOW, text=TYPED, continued=FIELD_NAME, compared=FORM_COMPARED))
def test_the_form_round_trips_every_state_it_can_hold(state):
    back, problems = state_from_form(form_values(state))
    assert problems == {}
    assert same(back, state)


def test_what_a_form_sends_back():
    body = {"template": "a\nb", "messages": [], "now": "2024-07-26T10:00:00.5+02:00"}
    state = PlaygroundState.from_json({**body, "compare_template": " "})
    form = form_values(state)
    # The date field is text: all of it, time zone and fraction, as the JSON form has it.
    assert form["now"] == "2024-07-26T10:00:00.500000+02:00" == state.to_json()["now"]
    back, _ = state_from_form({**form, "template": "a\r\nb"})  # text areas post CRLF
    assert back.request.template == "a\nb" and back.compare_template is None


def test_the_other_engine_of_an_older_share_is_named_in_the_compare_menu():
    request = RenderRequest(template="t", messages=[], engine="llama.cpp")
    state = PlaygroundState(request, compare_engines=True)
    assert form_values(state)["compare_engines"] == "transformers"
    assert state_from_form(form_values(state))[0].compare_engines == "transformers"
    assert state_from_form({"template": "t", "compare_engines": "on"})[0].compare_engines is True


def test_a_field_that_cannot_be_read_keeps_its_default_and_is_named():
    form = {
        "template": "t",
        "messages": "[1]",
        "tools": '{"a": 1}',
        "documents": "[{",
        "now": "yesterday",
        "source_id": "x",
        "source_kind": "zip",
        "kwargs": '{"k": 1}',
        "view": "tokens",
    }
    state, problems = state_from_form(form)
    assert set(problems) == {"messages", "tools", "documents", "now", "source"}
    assert "'messages[0]' must be an object" in problems["messages"]
    assert "not valid JSON" in problems["documents"]
    asked = state.request
    assert (asked.messages, asked.tools, asked.documents) == ([], None, None)
    assert (asked.now, state.source) == (None, None)
    assert (asked.kwargs, state.view) == ({"k": 1}, "tokens")


def test_the_first_visit_state():
    state = first_visit("T", datetime(2024, 1, 2, 3, 4, 5, 6), library="chatml")
    assert state.request.template == "T" and state.request.add_generation_prompt
    assert state.library == "chatml" and form_values(state)["library"] == "chatml"
    assert state.now_text == "2024-01-02T03:04:05" and state.view == "prompt"
    assert state.request.messages[-1]["role"] == "user"
