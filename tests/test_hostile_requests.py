"""Requests a hostile visitor may send: made-up methods, cross-site writes, framing."""

from __future__ import annotations

import io
import json
import random
import string

import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.web.observability import STANDARD_METHODS

PATHS = ("/", "/api/render", "/no/such/page")


def random_methods(count: int, seed: int) -> list[str]:
    """Made-up HTTP methods (upper case letters, as gunicorn lets through)."""
    rng = random.Random(seed)
    return ["".join(rng.choices(string.ascii_uppercase, k=10)) for _ in range(count)]


def metric_series(server) -> tuple[str, int]:
    """The /metrics text and how many samples it holds."""
    status, _, body = server.send("GET", "/metrics")
    assert status == 200
    text = body.decode()
    return text, sum(len(family.samples) for family in text_string_to_metric_families(text))


def send_methods(server, methods: list[str]) -> None:
    for index, method in enumerate(methods):
        status, _, _ = server.send(method, PATHS[index % len(PATHS)])
        assert status in (404, 405), (method, status)


def test_made_up_methods_do_not_add_metric_series(live_server):
    send_methods(live_server, random_methods(30, seed=1))
    metric_series(live_server)  # the scrape itself is counted once, from now on
    _, series_before = metric_series(live_server)
    later = random_methods(120, seed=2)
    send_methods(live_server, later)
    text, series_after = metric_series(live_server)

    assert series_after == series_before, "each made-up method added series to /metrics"
    assert not [method for method in later if method in text]
    methods = {
        sample.labels["method"]
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if "method" in sample.labels
    }
    assert "other" in methods
    assert methods <= STANDARD_METHODS | {"other"}


# --- cross-site writes ---------------------------------------------------------------------

FOREIGN = "https://evil.example"
HELLO = {"template": "{{ messages[0].content }}", "messages": [{"role": "user", "content": "Hi"}]}


def post_rules(app) -> list[str]:
    """Every URL rule that takes a POST: the API, the uploads and the page's forms."""
    return sorted(rule.rule for rule in app.url_map.iter_rules() if "POST" in rule.methods)


def test_a_cross_site_text_plain_share_stores_nothing(live_server):
    # What any page can send without asking: fetch(url, {method: "POST", mode: "no-cors",
    # body: text}) goes out as text/plain, with the browser's Origin and Sec-Fetch-Site.
    state = {**HELLO, "kwargs": {"nonce": "".join(random.choices(string.ascii_letters, k=20))}}
    body = json.dumps(state).encode()
    browser = {"Content-Type": "text/plain", "Origin": FOREIGN, "Sec-Fetch-Site": "cross-site"}
    status, _, answer = live_server.send("POST", "/api/shares", body, browser)
    assert status == 403, answer
    assert FOREIGN in json.loads(answer)["error"]["message"]

    status, _, answer = live_server.send(
        "POST", "/api/shares", body, {"Content-Type": "text/plain"}
    )
    assert status == 415, answer
    error = json.loads(answer)["error"]
    assert error["type"] == "UnsupportedMediaType"
    assert "application/json" in error["message"] and "text/plain" in error["message"]

    # Neither was stored: the same state sent as JSON is a new share.
    status, _, _ = live_server.send(
        "POST", "/api/shares", body, {"Content-Type": "application/json"}
    )
    assert status == 201


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": FOREIGN},
        {"Origin": "http://localhost:8001"},  # same host name, another port: another site
        {"Origin": "null"},  # sandboxed frames and file: pages
        {"Origin": "http://[not a url"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},  # a sibling subdomain is still someone else
        {"Origin": "http://localhost", "Sec-Fetch-Site": "cross-site"},
        {"Origin": FOREIGN, "Sec-Fetch-Site": "same-origin"},
    ],
)
def test_every_write_from_another_site_is_403(app, client, headers):
    rules = post_rules(app)
    assert {"/", "/fragments/output", "/fragments/share", "/api/shares"} <= set(rules)
    answers = {rule: client.post(rule, data=b"", headers=headers) for rule in rules}
    assert {rule: answer.status_code for rule, answer in answers.items()} == dict.fromkeys(
        rules, 403
    )
    assert (
        "only this site's pages may write here" in answers["/api/render"].json["error"]["message"]
    )


def test_the_page_refuses_a_foreign_form_post_with_a_page(client):
    response = client.post(
        "/", data={"template": "x"}, headers={"Origin": FOREIGN, "Accept": "text/html"}
    )
    assert response.status_code == 403
    assert response.content_type.startswith("text/html")


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, scripts
        {"Origin": "http://localhost"},
        {"Origin": "http://LOCALHOST", "Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
    ],
)
def test_writes_from_this_site_or_no_site_pass(client, headers):
    assert client.post("/api/render", json=HELLO, headers=headers).status_code == 200
    form = {"template": HELLO["template"], "messages": json.dumps(HELLO["messages"])}
    assert client.post("/fragments/output", data=form, headers=headers).status_code == 200
    assert client.post("/fragments/share", data=form, headers=headers).status_code in (200, 201)
    assert client.post("/", data=form, headers=headers).status_code == 200


def test_every_api_write_requires_its_content_type(app, client):
    api = [rule for rule in post_rules(app) if rule.startswith("/api/")]
    expected = {rule: "application/json" for rule in api}
    expected |= {
        "/api/sources/gguf": "application/octet-stream",
        "/api/sources/hf": "multipart/form-data",
    }
    for rule in api:
        for declared in ("text/plain", "application/x-www-form-urlencoded", None):
            response = client.post(rule, data=b"{}", content_type=declared)
            assert response.status_code == 415, (rule, declared)
            message = response.json["error"]["message"]
            assert expected[rule] in message and (declared or "missing") in message


@pytest.mark.parametrize(
    ("path", "kwargs"),
    [
        ("/api/render", {"json": HELLO}),
        (
            "/api/render",
            {"data": json.dumps(HELLO), "content_type": "application/json; charset=utf-8"},
        ),
        ("/api/sources/gguf", {"data": b"GGUF", "content_type": "application/octet-stream"}),
        ("/api/sources/hf", {"data": {"f": (io.BytesIO(b"{}"), "tokenizer_config.json")}}),
    ],
)
def test_api_writes_with_their_content_type_pass(client, path, kwargs):
    assert client.post(path, **kwargs).status_code not in (403, 415)


def test_no_page_or_answer_may_be_framed(client):
    answers = [
        client.get("/"),
        client.post("/api/render", json=HELLO),
        client.post("/api/render", data="{}", content_type="text/plain"),
        client.get("/no/such/page"),
    ]
    assert [answer.headers.get("X-Frame-Options") for answer in answers] == ["DENY"] * 4


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/render", {"template": "x", "messages": [], "engine": "e" * 3_000_000}),
        ("/api/render", {"template": "x", "messages": [], "content_format": "f" * 3_000_000}),
        ("/api/tokenize", {"source": "s" * 3_000_000, "text": "hi"}),
    ],
)
def test_an_error_quotes_at_most_a_little_of_the_value_it_refuses(client, path, body):
    # The whole value used to come back: a 3 MB body answered with a 3 MB error.
    response = client.post(path, json=body)
    assert response.status_code in (400, 404)
    assert len(response.get_data()) < 1_000
