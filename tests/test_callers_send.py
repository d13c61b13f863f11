"""Tool-call arguments reach every engine as the request holds them (`app.render.client`),
unless the state says a client sends them otherwise; the main view, the Diff and the
portability matrix send the same thing, and the Prompt view says what a choice changed.

Found by an outside check (issue 36): every entry point rewrote the arguments per engine
(JSON text became an object for transformers, an object JSON text for vLLM), so 40 of
2,573 template x conversation pairs differed from transformers' own
`apply_chat_template`, and vLLM rendered requests its server refuses.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.analysis.examples import EXAMPLES
from app.analysis.portability_cases import conversations, engine_report
from app.problems import TemplateProblem
from app.render import engines
from app.render.client import as_sent
from app.render.core import RenderRequest
from app.render.limits import DEFAULT_LIMITS

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


def request_with(*arguments, **fields) -> RenderRequest:
    messages: list[dict] = [{"role": "user", "content": "Hi"}]
    for given in arguments:
        messages += [call(given), {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    return RenderRequest(template=WRITES_ARGUMENTS, messages=messages, **fields)


def arguments_of(request: RenderRequest) -> list:
    calls = [m for m in request.messages if m["role"] == "assistant"]
    return [m["tool_calls"][0]["function"]["arguments"] for m in calls]


@pytest.mark.parametrize("engine", ["transformers", "transformers.js", "llama.cpp"])
def test_every_engine_gets_the_arguments_as_written(engine):
    request = request_with('{"a": 1}', {"b": 2}, engine=engine)
    rendered = engines.render(request).prompt
    if engine == "llama.cpp":  # llama-server parses text for a template that reads objects
        assert rendered == '[object:{"a": 1}][object:{"b": 2}]'
    else:
        assert rendered == '[text:{"a": 1}][object:{"b": 2}]'
    assert arguments_of(request) == ['{"a": 1}', {"b": 2}]  # nothing changed in place


def test_vllm_refuses_object_arguments_in_its_request_model_s_words():
    with pytest.raises(TemplateProblem) as refused:
        engines.render(request_with({"b": 2}, engine="vllm"))
    assert "arguments: Input should be a valid string" in refused.value.message
    # JSON text, as its OpenAI clients send it, renders (vLLM parses it for the template).
    assert engines.render(request_with('{"b": 2}', engine="vllm")).prompt == '[object:{"b": 2}]'


def test_json_text_is_what_openai_clients_send_and_the_note_names_the_messages():
    request = request_with({"city": "Óbidos"}, '{"a": 1}', {"b": 2}, tool_arguments="json_text")
    sent, notes = as_sent(request)
    assert arguments_of(sent) == ['{"city": "Óbidos"}', '{"a": 1}', '{"b": 2}']
    assert notes == [
        "tool-call arguments sent as JSON text, as OpenAI clients send them (messages 2, 6)"
    ]
    assert engines.render(replace(request, engine="vllm")).prompt.count("[object:") == 3


def test_objects_are_what_library_callers_pass():
    text = ['{"city": "Lisbon"}', "[1, 2]", "not json", "", '{"deep": ' * 100_000]
    sent, notes = as_sent(request_with(*text, tool_arguments="objects"))
    assert arguments_of(sent) == [{"city": "Lisbon"}, *text[1:]]
    assert notes == [
        "tool-call arguments passed as objects parsed from their JSON text, as library "
        "callers pass them (message 2)"
    ]


@pytest.mark.parametrize("form", ["json_text", "objects"])
def test_shaping_twice_is_shaping_once_and_nothing_to_shape_is_left_alone(form):
    once, _ = as_sent(request_with({"a": 1}, '{"b": 2}', None, tool_arguments=form))
    twice, notes = as_sent(once)
    assert twice is once and notes == []
    plain = RenderRequest(template="x", messages=[{"role": "user", "content": "Hi"}])
    assert as_sent(replace(plain, tool_arguments=form)) == (replace(plain, tool_arguments=form), [])


def test_as_written_changes_nothing():
    request = request_with({"a": 1}, '{"b": 2}')
    assert as_sent(request) == (request, [])


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


def test_the_render_api_sends_as_written_and_says_what_a_choice_changed(client):
    answer = client.post("/api/render", data=body("transformers"), content_type="application/json")
    assert answer.get_json()["prompt"] == '[object:{"city": "Faro"}]'
    assert answer.get_json()["sent_as"] == []
    answer = client.post(
        "/api/render",
        data=body("transformers", tool_arguments="json_text"),
        content_type="application/json",
    )
    assert answer.get_json()["prompt"] == '[text:{"city": "Faro"}]'
    assert answer.get_json()["sent_as"] == [
        "tool-call arguments sent as JSON text, as OpenAI clients send them (message 2)"
    ]
    refused = client.post("/api/render", data=body("vllm"), content_type="application/json")
    assert refused.status_code == 422
    assert "Input should be a valid string" in refused.get_json()["error"]["message"]


def test_the_main_view_the_diff_and_the_matrix_send_the_same(client):
    fields = {"compare_engines": "transformers", "view": "diff", "tool_arguments": "json_text"}
    outputs = client.post(
        "/api/outputs", data=body("vllm", **fields), content_type="application/json"
    ).get_json()
    main, right = outputs["prompt"], outputs["comparison"]["right"]
    assert main["error"] is None and right["error"] is None
    assert main["prompt"] == '[object:{"city": "Faro"}]'  # vLLM parses the text it got
    assert right["prompt"] == '[text:{"city": "Faro"}]'  # transformers writes it as text
    assert main["sent_as"] and right["sent_as"]
    # The matrix (worker side) sends the conversation the same way: vLLM differs from
    # transformers there, as it does in the Diff.
    request = RenderRequest(
        template=WRITES_ARGUMENTS,
        messages=request_with({"c": 1}).messages,
        tool_arguments="json_text",
    )
    report = engine_report("vllm", conversations(request)[:1], DEFAULT_LIMITS)
    assert report["cases"][0]["outcome"] == "differs"


def test_the_choice_is_kept_in_shares(client):
    state = json.loads(body("transformers", tool_arguments="objects"))
    share = client.post("/api/shares", json=state).get_json()
    stored = client.get(share["url"] + ".json").get_json()
    assert stored["tool_arguments"] == "objects"
    refused = client.post("/api/render", json={**state, "tool_arguments": "strings"})
    assert refused.status_code == 400
    assert refused.get_json()["error"]["field"] == "tool_arguments"


def test_the_parse_api_gives_vllm_the_request_as_written_and_vllm_refuses_objects(client):
    """vLLM's server validates the request before it generates anything: a conversation
    with object arguments gets a 400, so there is no answer to read. /api/parse says so in
    its request model's words, as /api/render does; JSON text is read as usual."""
    state = json.loads(body("vllm", completion="It is sunny in Faro.", engines=["vllm"]))
    (refused,) = client.post("/api/parse", json=state).get_json()["engines"]
    assert refused["message"] is None
    assert refused["problem"]["type"] == "InvalidRequest"
    assert "arguments: Input should be a valid string" in refused["problem"]["message"]
    (read,) = client.post("/api/parse", json={**state, "tool_arguments": "json_text"}).get_json()[
        "engines"
    ]
    assert read["problem"] is None
    assert read["message"]["content"] == "It is sunny in Faro."
