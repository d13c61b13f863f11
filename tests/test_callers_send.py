"""Tool-call arguments as each engine's callers send them (`app.render.client`): kept as
the user wrote them in the state, converted in one place, and said where they changed;
the main view, the Diff and the portability matrix send the same thing."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.analysis.examples import EXAMPLES
from app.analysis.portability_cases import conversations, engine_report
from app.render import engines
from app.render.client import as_callers_send
from app.render.core import RenderRequest
from app.render.engines import get_engine
from app.render.limits import DEFAULT_LIMITS

LIBRARY = get_engine("transformers")
SERVER = get_engine("vllm")
#: A template that writes arguments it got as text as is, and dumps an object.
WRITES_ARGUMENTS = (
    "{% for m in messages %}{% for c in m.tool_calls or [] %}"
    "{% set a = c.function.arguments %}[{{ 'text' if a is string else 'object' }}:"
    "{{ a if a is string else a | tojson }}]{% endfor %}{% endfor %}"
)


def call(arguments) -> dict:
    function = {"name": "f", "arguments": arguments}
    tool_call = {"id": "call_1", "type": "function", "function": function}  # vLLM wants an id
    return {"role": "assistant", "tool_calls": [tool_call]}


def request_with(*arguments, engine: str | None = None) -> RenderRequest:
    messages = [{"role": "user", "content": "Hi"}, *(call(a) for a in arguments)]
    return RenderRequest(template=WRITES_ARGUMENTS, messages=messages, engine=engine)


def arguments_of(request: RenderRequest) -> list:
    return [m["tool_calls"][0]["function"]["arguments"] for m in request.messages[1:]]


def test_a_server_gets_objects_as_json_text_and_the_note_names_the_messages():
    sent, notes = as_callers_send(SERVER, request_with({"city": "Óbidos"}, '{"a": 1}', {"b": 2}))
    assert arguments_of(sent) == ['{"city": "Óbidos"}', '{"a": 1}', '{"b": 2}']
    assert notes == [
        "tool-call arguments sent as JSON text, as an OpenAI client does (messages 2, 4)"
    ]


def test_a_library_gets_json_text_that_holds_an_object_as_that_object():
    text = ['{"city": "Lisbon"}', "[1, 2]", "not json", "", '{"deep": ' * 100_000]
    sent, notes = as_callers_send(LIBRARY, request_with(*text))
    assert arguments_of(sent) == [{"city": "Lisbon"}, *text[1:]]
    assert notes == [
        "tool-call arguments passed as objects parsed from their JSON text, as "
        "transformers (Python, SGLang) gets them from its callers (message 2)"
    ]


@pytest.mark.parametrize("engine", [LIBRARY, SERVER])
def test_shaping_twice_is_shaping_once_and_nothing_to_shape_is_left_alone(engine):
    once, _ = as_callers_send(engine, request_with({"a": 1}, '{"b": 2}', None))
    twice, notes = as_callers_send(engine, once)
    assert twice is once and notes == []
    plain = RenderRequest(template="x", messages=[{"role": "user", "content": "Hi"}])
    assert as_callers_send(engine, plain) == (plain, [])


def test_the_state_keeps_what_was_typed_and_the_engine_gets_its_callers_form():
    request = request_with('{"a": 1}', {"b": 2})
    assert engines.render(replace(request, engine="vllm")).prompt.count("[object:") == 2
    assert engines.render(replace(request, engine="transformers")).prompt == (
        '[object:{"a": 1}][object:{"b": 2}]'
    )
    assert arguments_of(request) == ['{"a": 1}', {"b": 2}]  # not changed in place
    assert engines.render_exactly(replace(request, engine="transformers")).prompt == (
        '[text:{"a": 1}][object:{"b": 2}]'
    )


def test_the_examples_send_arguments_as_json_text():
    calls = [
        c["function"]["arguments"]
        for example in EXAMPLES
        for m in example["messages"]
        for c in m.get("tool_calls", [])
    ]
    assert calls and all(isinstance(arguments, str) for arguments in calls)
    assert all(isinstance(json.loads(arguments), dict) for arguments in calls)


def body(engine: str, **fields) -> str:
    state = {
        "template": WRITES_ARGUMENTS,
        "messages": request_with({"city": "Faro"}).messages,
        "engine": engine,
        **fields,
    }
    return json.dumps(state)


def test_the_render_api_sends_as_the_callers_do_and_says_so(client):
    answer = client.post("/api/render", data=body("vllm"), content_type="application/json")
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["prompt"] == '[object:{"city": "Faro"}]'
    assert answer.get_json()["sent_as"] == [
        "tool-call arguments sent as JSON text, as an OpenAI client does (message 2)"
    ]


def test_the_main_view_the_diff_and_the_matrix_send_the_same(client):
    fields = {"compare_engines": "transformers", "view": "diff"}
    outputs = client.post(
        "/api/outputs", data=body("vllm", **fields), content_type="application/json"
    ).get_json()
    main, right = outputs["prompt"], outputs["comparison"]["right"]
    assert main["error"] is None and right["error"] is None
    assert main["prompt"] == right["prompt"] == '[object:{"city": "Faro"}]'
    assert main["sent_as"] and not right["sent_as"]
    # The matrix (worker side) renders the same conversation the same way: identical.
    request = RenderRequest(template=WRITES_ARGUMENTS, messages=request_with({"c": 1}).messages)
    report = engine_report("vllm", conversations(request)[:1], DEFAULT_LIMITS)
    assert report["cases"] == [{"conversation": "current", "outcome": "identical"}]


def test_the_main_view_shapes_once_and_renders_what_it_shaped():
    """The web process shapes the request for its note; the worker renders that request
    as it is (`render_exactly`), so the note and the prompt cannot disagree."""
    from app.display.outputs import Pipeline, render_main
    from app.state.playground import PlaygroundState

    class Recording:
        def __init__(self):
            self.sent = []

        def render_exactly(self, request):
            self.sent.append(request)
            return engines.render_exactly(request)

        def render(self, request):
            raise AssertionError("the main view must not ask the worker to shape again")

    messages = request_with({"x": 1}).messages
    state = PlaygroundState.from_json(
        {"template": WRITES_ARGUMENTS, "engine": "vllm", "messages": messages}
    )
    pool = Recording()
    rendering = render_main(state, Pipeline(pool=pool, store=None), None)
    assert arguments_of(pool.sent[0]) == ['{"x": 1}']
    # vLLM parses the text back into an object for the template, as its callers expect.
    assert rendering.prompt == '[object:{"x": 1}]'
    assert rendering.sent_as
