"""The TGI engine in the sandbox: the API renders with it, hostile templates and requests
get a 4xx naming what is wrong, and the worker survives or is replaced."""

from __future__ import annotations

import pytest

from app.problems import TemplateProblem
from app.render.core import RenderRequest, render_with
from app.render.engines.tgi import TgiEngine
from app.render.limits import RenderLimits

HELLO = [{"role": "user", "content": "Hi"}]
ECHO = "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
#: A hundred million loop steps: far more than a render's fuel.
RUNAWAY = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}"


def _problem(template: str, limits: RenderLimits, messages=HELLO, **fields) -> TemplateProblem:
    request = RenderRequest(template, messages, engine="tgi", **fields)
    with pytest.raises(TemplateProblem) as raised:
        render_with(TgiEngine(), request, limits)
    return raised.value


def test_the_api_renders_with_tgi_and_lists_its_rewrites(client):
    body = {"template": ECHO, "messages": [{"role": "user", "content": "Hi", "name": "ann"}]}
    answer = client.post("/api/render", json={**body, "engine": "tgi"})
    assert answer.status_code == 200, answer.json
    assert answer.json["prompt"] == "[user]Hi"
    assert "message keys other than role and content dropped: name" in answer.json["rewrites"]
    assert "add_generation_prompt is always true in TGI" in answer.json["rewrites"]


def test_a_runaway_loop_runs_out_of_fuel_within_the_cpu_limit() -> None:
    problem = _problem(RUNAWAY, RenderLimits(cpu_seconds=0.1))
    assert (problem.type, problem.limit) == ("LimitExceeded", "cpu_seconds")


def test_a_runaway_loop_is_refused_by_the_api(client):
    refused = client.post(
        "/api/render", json={"template": RUNAWAY, "messages": HELLO, "engine": "tgi"}
    )
    assert (refused.status_code, refused.json["error"]["limit"]) == (422, "cpu_seconds")
    again = client.post("/api/render", json={"template": ECHO, "messages": HELLO, "engine": "tgi"})
    assert again.json["prompt"] == "[user]Hi"


def test_output_over_the_limit_is_refused() -> None:
    problem = _problem("{{ 'x' * 100 }}", RenderLimits(output_chars=50))
    assert problem.limit == "output_chars"


def test_a_huge_allocation_costs_the_worker_not_the_service(client):
    body = {"template": "{{ 'x' * 4000000000 }}", "messages": HELLO, "engine": "tgi"}
    refused = client.post("/api/render", json=body)
    assert (refused.status_code, refused.json["error"]["limit"]) == (422, "memory")
    again = client.post("/api/render", json={"template": ECHO, "messages": HELLO, "engine": "tgi"})
    assert again.json["prompt"] == "[user]Hi"


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ({"content": "Hi"}, "messages[0]: missing field `role`"),
        ({"role": "user", "content": None}, "messages[0]: data did not match any variant"),
        ({"role": "user", "content": [{"type": "video"}]}, "messages[0]: data did not match"),
        (
            {"role": "assistant", "tool_calls": [{"type": "function"}]},
            "messages[0].tool_calls[0]: missing field `id`",
        ),
    ],
)
def test_a_message_tgi_cannot_parse_is_refused(client, message, named) -> None:
    body = {"template": ECHO, "messages": [message], "engine": "tgi"}
    refused = client.post("/api/render", json=body)
    assert refused.status_code == 422
    assert refused.json["error"]["message"].startswith(named)


def test_a_tool_choice_naming_no_tool_is_refused() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    problem = _problem(ECHO, RenderLimits(), tools=tools, kwargs={"tool_choice": "g"})
    assert problem.message == "Tool with name g not found"
