"""Hostile templates cost one clean 422 each, and never the server or its other users."""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.errors import MESSAGE_CHARS, MESSAGE_LINES
from app.render.engines import ENGINES
from oracles.transformers.reference import reference_render

HELLO = [{"role": "user", "content": "Hello!"}]
NORMAL = {"template": "{{ messages[0].content }}", "messages": HELLO}

#: Templates that run into a resource limit, and the limits each may name (a string
#: doubled in a loop exhausts memory, or its CPU time first on a busy machine).
BOMBS = {
    "infinite loop": (
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        {"cpu_seconds"},
    ),
    "huge string": ("{{ 'a' * 10**10 }}", {"memory"}),
    "string doubled in a loop": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s|length }}",
        {"memory", "cpu_seconds"},
    ),
    "output flood": (
        "{% for i in range(100000) %}{% for j in range(1000) %}0123456789{% endfor %}{% endfor %}",
        {"output_chars"},
    ),
    "one huge output block": ("{{ 'x' * 3000000 }}", {"output_chars"}),
    "recursion": ("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", {"recursion"}),
    "blocks nested thousands deep": (
        "{% if true %}" * 5000 + "x" + "{% endif %}" * 5000,
        {"recursion"},
    ),
}

#: Sandbox escape attempts: each raises SecurityError, as it does in transformers.
ESCAPES = {
    "__class__": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "__globals__": "{{ raise_exception.__globals__['os'] }}",
    "|attr": "{{ (''|attr('__class__'))() }}",
    "str.format": "{{ '{0.__class__.__mro__[1]}'.format('') }}",
    "str.format on a function": "{{ '{0.__globals__[os]}'.format(raise_exception) }}",
    "namespace underscore": "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
    "namespace underscore at creation": "{{ namespace(__init__=1) }}",
    "list.append": "{{ messages.append({'role': 'system'}) }}",
    "dict.pop": "{{ messages[0].pop('content') }}",
    "dict.update": "{% set d = {} %}{{ d.update({'a': 1}) }}",
    "__setitem__": "{{ messages[0].__setitem__('content', 'x') }}",
    "cycler globals": "{{ cycler.__init__.__globals__.os }}",
}


def render_status(server, template: str) -> tuple[int, dict]:
    return server.post("/api/render", {"template": template, "messages": HELLO})


@pytest.mark.timing
@pytest.mark.parametrize("name", BOMBS)
def test_bomb_names_its_limit_while_normal_renders_stay_fast(live_server, name):
    template, limits = BOMBS[name]
    with ThreadPoolExecutor(max_workers=2) as executor:
        bomb = executor.submit(render_status, live_server, template)
        time.sleep(0.1)  # let the bomb start first
        started = time.monotonic()
        status, body = live_server.post("/api/render", NORMAL)
        normal_seconds = time.monotonic() - started
        bomb_status, bomb_body = bomb.result(timeout=30)
    assert (status, body["prompt"]) == (200, "Hello!")
    assert normal_seconds < 0.75, f"a normal render waited {normal_seconds:.2f} s"
    assert bomb_status == 422
    assert bomb_body["error"]["type"] == "LimitExceeded"
    assert bomb_body["error"]["limit"] in limits
    assert bomb_body["error"]["message"]


@pytest.mark.timing
def test_time_limit_stops_the_render_near_the_limit(live_server):
    started = time.monotonic()
    status, body = render_status(live_server, BOMBS["infinite loop"][0])
    elapsed = time.monotonic() - started
    assert status == 422
    assert "1 s" in body["error"]["message"]
    # The server runs with a 1 s limit (plus a small grace for the answer).
    assert 1.0 <= elapsed < 4.0


def test_four_bombs_at_once_leave_the_server_serving(live_server):
    bombs = [BOMBS[name][0] for name in ("infinite loop", "huge string", "recursion")]
    with ThreadPoolExecutor(max_workers=4) as executor:
        results = list(executor.map(lambda t: render_status(live_server, t), bombs * 2))
    assert [status for status, _ in results] == [422] * 6
    status, body = live_server.post("/api/render", NORMAL)
    assert (status, body["prompt"]) == (200, "Hello!")
    assert live_server.process.poll() is None, "gunicorn died"


@pytest.mark.parametrize("name", ESCAPES)
def test_sandbox_escape_is_a_security_error_as_in_transformers(client, name):
    template = ESCAPES[name]
    response = client.post("/api/render", json={"template": template, "messages": HELLO})
    assert response.status_code == 422
    assert response.json["error"]["type"] == "SecurityError"
    assert response.json["error"]["line"] == 1
    case = {"messages": HELLO, "special_tokens": {}}
    assert reference_render(case, template)[:2] == ("error", "SecurityError")


@pytest.mark.parametrize(
    "template",
    ["{{ ''|attr('__class__')|attr('__mro__') }}", "{{ '{x.__class__}'.format_map({'x': ''}) }}"],
)
def test_unsafe_lookups_that_are_only_printed_render_nothing(client, template):
    # Jinja's sandbox turns an unsafe attribute into an undefined value: printing it
    # gives "" (as in transformers), using it raises. Nothing leaks either way.
    response = client.post("/api/render", json={"template": template, "messages": HELLO})
    assert (response.status_code, response.json["prompt"]) == (200, "")


#: Objects a template can hand to `raise_exception`, and what the message says of each.
RAISED_OBJECTS = {
    "cycler": ("{{ raise_exception(cycler(1, 2)) }}", "Cycler object"),
    "loop": ("{% for m in messages %}{{ raise_exception(loop) }}{% endfor %}", "LoopContext"),
    "self": ("{{ raise_exception(self) }}", "TemplateReference"),
    "lipsum": ("{{ raise_exception(lipsum) }}", "generate_lorem_ipsum"),
    "a macro": ("{% macro f() %}x{% endmacro %}{{ raise_exception(f) }}", "Macro 'f'"),
    "a number": ("{{ raise_exception(123) }}", "123"),
    "a namespace": ("{{ raise_exception(namespace(a=1)) }}", "Namespace"),
}


@pytest.mark.timing
@pytest.mark.parametrize("engine", ["transformers", "llama.cpp"])
@pytest.mark.parametrize("name", RAISED_OBJECTS)
def test_objects_raised_by_a_template_come_back_as_text(live_server, name, engine):
    template, words = RAISED_OBJECTS[name]
    body = {"template": template, "messages": HELLO, "engine": engine}
    [(status, answer)] = live_server.survives(lambda: live_server.post("/api/render", body))
    assert status == 422
    error = answer["error"]
    assert error["limit"] is None, "misreported as a limit"
    assert isinstance(error["message"], str)
    assert words in error["message"]


#: Every route that renders a visitor's template, and how it is asked to: a JSON body, a
#: form, or a share opened by its link.
_BODIES = ("/api/render", "/api/outputs", "/api/analyze", "/api/diff", "/api/command")
_BODIES += ("/api/parse", "/api/roundtrip", "/api/completion")
RENDERING = {
    **{("POST", path): "json" for path in _BODIES},
    **{("POST", path): "form" for path in ("/", "/fragments/output", "/fragments/completion")},
    ("GET", "/s/<share_id>"): "share",
}
#: Every other route: none renders a template of the visitor's.
NOT_RENDERING = {
    ("GET", "/"),  # the first visit: the library's ChatML
    ("GET", "/s/<share_id>.json"),  # the stored state, as it is
    ("POST", "/api/shares"),  # stores a state without rendering it
    ("POST", "/fragments/share"),
    ("POST", "/download/template.jinja"),  # the template's text as a file
    # Sources are read, not rendered; tokenizing takes text.
    *(("POST", f"/api/sources/{kind}") for kind in ("gguf", "hf", "hub", "url")),
    *(("POST", f"/api/sources/{kind}") for kind in ("modelfile", "ollama")),
    ("GET", "/api/sources/<source_id>"),
    ("POST", "/api/tokenize"),
    # Lists, files and counters.
    *(("GET", path) for path in ("/healthz", "/metrics", "/api/engines", "/api/library")),
    ("GET", "/api/library/<name>"),
    ("GET", "/static/<path:filename>"),
    # The documentation pages, Markdown files of the repository.
    ("GET", "/docs/"),
    ("GET", "/docs/<path:address>"),
}
#: The views a state may open: each computes what the others do not.
VIEWS = ("analysis", "response", "command", "diff")
#: The routes that open a view, and show a comparison with a second template.
COMPARING = [("POST", "/api/outputs"), ("POST", "/"), ("POST", "/fragments/output")]
COMPARING += [("GET", "/s/<share_id>")]


def test_every_route_is_known_to_render_or_not(app):
    # A new route must be listed: if it renders, the tests below ask it to.
    routes = {
        (method, rule.rule)
        for rule in app.url_map.iter_rules()
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    assert routes == set(RENDERING) | NOT_RENDERING


def _state(template: str, compared: str = "x") -> dict:
    """A state that makes each route render `template` in each way it can (the prompt, a
    completion to read and send back, an entry of the Completion menu), and compare it
    with `compared`."""
    return {
        "template": template,
        "messages": HELLO,
        "add_generation_prompt": True,
        "compare_template": compared,
        "completion": "Hello.",
    }


def _ask(client, route: tuple[str, str], state: dict, view: str | None):
    _, rule = route
    if RENDERING[route] == "share":
        made = client.post("/api/shares", json={**state, "view": view})
        assert made.status_code in (200, 201), made.get_json()
        return client.get(made.get_json()["url"])
    if RENDERING[route] == "form":
        form = {**state, "messages": json.dumps(HELLO), "add_generation_prompt": "on"}
        return client.post(rule, data={**form, "view": view, "completion_kind": "answer"})
    if rule == "/api/diff":
        left = {**state, "template": state["compare_template"]}
        return client.post(rule, json={"left": left, "right": state})
    return client.post(rule, json={**state, "kind": "answer", "view": view})


def _shown_as_text(client, route: tuple[str, str], state: dict, words: str) -> None:
    views = VIEWS if route in COMPARING else (None,)
    for view in views:
        response = _ask(client, route, state, view)
        assert response.status_code in (200, 422), (view, response.get_data()[:300])
        if route == ("POST", "/api/command"):
            # Command lines depend on no render: they come whatever the template raises.
            assert response.status_code == 200 and response.json["commands"]
            continue
        assert words in response.get_data(as_text=True), view


@pytest.mark.parametrize("route", RENDERING, ids=" ".join)
@pytest.mark.parametrize("name", ["cycler", "loop", "self", "lipsum"])
def test_objects_raised_by_a_template_are_text_on_every_endpoint(client, route, name):
    # /api/render answered 422; /api/analyze answered 500, because the portability rows
    # carried the raised object itself back from the worker.
    template, words = RAISED_OBJECTS[name]
    _shown_as_text(client, route, _state(template), words)


@pytest.mark.parametrize("route", COMPARING, ids=" ".join)
@pytest.mark.parametrize("name", ["cycler", "loop", "self", "lipsum"])
def test_objects_raised_by_a_compared_template_are_text(client, route, name):
    template, words = RAISED_OBJECTS[name]
    _shown_as_text(client, route, {**_state("Hello.", template), "view": "diff"}, words)


#: A message of 8 million characters, built by doubling: every engine's Jinja can do it.
LONG_MESSAGE = (
    "{% set ns = namespace(s='x') %}{% for i in range(23) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ raise_exception(ns.s) }}"
)


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_error_text_is_cut_in_the_worker_by_every_engine(client, engine):
    # It came back whole: an 8 MB 422 (100 MB for a 100 MB message), and three times
    # that in an analysis.
    body = {"template": LONG_MESSAGE, "messages": HELLO, "engine": engine}
    rendered = client.post("/api/render", json=body)
    assert rendered.status_code == 422
    assert len(rendered.get_data()) < 8 * 1024
    message = rendered.json["error"]["message"]
    cut = re.search(r"\[[\d,]+ of ([\d,]+) characters cut\]", message)
    assert cut and int(cut[1].replace(",", "")) >= 2**23, message[-100:]
    assert len(message) <= MESSAGE_CHARS
    diffed = client.post("/api/diff", json={"left": body, "right": {**body, "template": "x"}})
    assert diffed.status_code == 200
    assert len(diffed.get_data()) < 8 * 1024
    analysed = client.post("/api/analyze", json=body)
    assert analysed.status_code == 200
    assert len(analysed.get_data()) < 64 * 1024


def test_what_an_engine_says_it_rewrote_is_cut_in_the_worker(client):
    # An engine names the request fields it has no room for: a 1,000,000-character
    # tool_choice came back whole from Edge-LLM, 10,000 unused kwargs as one sentence of
    # 10,000 names from vLLM and TGI (or as 10,000 sentences).
    kwargs = {"tool_choice": "x" * 10**6, **{f"kwarg_{i}": 1 for i in range(10_000)}}
    cut = []
    for engine in sorted(ENGINES):
        render = {"template": "{{ messages[0].content }}", "messages": HELLO, "engine": engine}
        answer = client.post("/api/render", json={**render, "kwargs": kwargs})
        assert answer.status_code in (200, 422), (engine, answer.status_code)
        ok = answer.status_code == 200
        said = answer.json["rewrites"] if ok else [answer.json["error"]["message"]]
        assert len(said) <= MESSAGE_LINES, engine
        assert all(len(sentence) <= MESSAGE_CHARS for sentence in said), engine
        assert len(answer.get_data()) < 8 * 1024, engine
        cut += [engine for sentence in said if "characters cut" in sentence]
    assert len(cut) >= 3, cut  # the test quoted something long enough to be cut
