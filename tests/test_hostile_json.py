"""Bodies nested too deep, numbers JSON cannot hold, and pools that must not wedge."""

from __future__ import annotations

import json
import time

import pytest

from app.pool import WorkerPool
from app.problems import TemplateProblem
from app.untrusted_json import JSONRefused, loads, nesting_depth
from tests.support.pool_stubs import NeverAnswers

HELLO = [{"role": "user", "content": "Hello!"}]


def deep_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def render_body(content_json: str) -> bytes:
    messages = f'[{{"role": "user", "content": {content_json}}}]'
    return f'{{"template": "{{{{ messages[0].content }}}}", "messages": {messages}}}'.encode()


@pytest.mark.parametrize("depth", [65, 900, 5000])
def test_a_deep_body_is_400_naming_the_field(client, depth):
    response = client.post(
        "/api/render", data=render_body(deep_list(depth)), content_type="application/json"
    )
    assert response.status_code == 400
    error = response.json["error"]
    assert error["field"].startswith("messages[0].content[0]")
    assert "nested more than 64 levels deep" in error["message"]


def test_the_depth_limit_is_a_setting(app):
    from app.web.factory import create_app

    strict = create_app({"TESTING": True, "DATA_DIR": app.config["DATA_DIR"], "JSON_DEPTH": 3})
    client = strict.test_client()
    body = {"template": "x", "messages": [{"role": "user", "content": [[1]]}]}
    assert client.post("/api/render", json=body).status_code == 400
    body["messages"][0]["content"] = "flat"
    assert client.post("/api/render", json=body).status_code == 200


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"a": NaN}', "NaN is not a JSON value"),
        ('{"a": -Infinity}', "-Infinity is not a JSON value"),
        ('{"a": 1e400}', "out of range"),
        ('{"a": ' + "9" * 5000 + "}", "4300 digits"),
        (b'{"a": "\xff"}', "not UTF-8"),
    ],
)
def test_what_json_cannot_hold_is_400(client, text, words):
    data = text if isinstance(text, bytes) else text.encode()
    response = client.post("/api/render", data=data, content_type="application/json")
    assert response.status_code == 400
    assert words in response.json["error"]["message"]


def test_deep_form_fields_are_field_problems_not_errors(client):
    form = {"template": "{{ messages }}", "messages": deep_list(3000)}
    response = client.post("/fragments/output", data=form)
    assert response.status_code == 200
    assert "nested more than 64 levels deep" in response.get_data(as_text=True)


def test_a_stored_share_too_deep_for_the_limit_is_refused_not_rendered(app, client):
    store = app.extensions["share_store"]
    state = {
        "template": "x",
        "messages": json.loads(f'[{{"role": "user", "content": {deep_list(900)}}}]'),
    }
    share_id = store.put(state)
    for path in (f"/s/{share_id}", f"/s/{share_id}.json"):
        response = client.get(path, headers={"Accept": "application/json"})
        assert response.status_code == 422, path
        assert response.json["error"]["limit"] == "json_depth"
        assert response.json["error"]["field"].startswith("messages[0].content")


def test_loads_measures_depth_without_recursing():
    assert nesting_depth(loads(deep_list(64))) == 64
    with pytest.raises(JSONRefused) as refused:
        loads('{"x": [1, {"y": ' + deep_list(2000) + "}]}")
    assert refused.value.path.startswith("x[1].y[0][0]")


def _identity(value):
    return value


@pytest.mark.timing
def test_a_task_that_cannot_be_sent_fails_at_once_and_the_pool_keeps_working():
    pool = WorkerPool(cpu_seconds=1, memory_bytes=256 << 20, workers=1)
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    try:
        started = time.monotonic()
        with pytest.raises(TemplateProblem) as problem:
            pool.run(_identity, deep)
        assert time.monotonic() - started < 0.5
        assert problem.value.limit == "recursion"
        assert pool.run(_identity, "still here") == "still here"
    finally:
        pool.close()


@pytest.mark.timing
def test_every_wait_on_a_pool_is_bounded():
    pool = WorkerPool(cpu_seconds=0.1, memory_bytes=256 << 20, workers=1)
    pool._ensure_pool = NeverAnswers  # type: ignore[method-assign]  # a wedged pool
    started = time.monotonic()
    with pytest.raises(TemplateProblem) as problem:
        pool.run(_identity, 1)
    waited = time.monotonic() - started
    assert problem.value.limit == "cpu_seconds"
    # The backstop (4 x 0.1 s) plus the transfer and stuck graces, never more.
    assert waited < pool.wall_seconds + 0.5 + 2.0 + 0.5


@pytest.mark.timing
def test_deep_json_against_a_live_server(live_server):
    def attack():
        return live_server.send(
            "POST", "/api/render", render_body(deep_list(900)), {"Content-Type": "application/json"}
        )

    results = live_server.survives(attack, attackers=8)
    for status, _, body in results:
        assert status == 400
        assert json.loads(body)["error"]["field"].startswith("messages[0].content")
