"""Admission: slots, a bounded queue, per-client limits and heavy clients, without gunicorn.

The live server tests are in test_admission_live.py.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.budget import OverLimit
from app.sources.remote import BUSY_RETRY_SECONDS
from app.web import admission, client_costs, guards, slots
from app.web.factory import create_app
from app.web.observability import ACCESS_LOGGER
from app.web.slots import FetchSlots, Gate, Ticket, fetch_slots_from_config, gate_from_config


def gate(**overrides: float) -> Gate:
    settings = {
        "slots": 2,
        "queue": 2,
        "queue_seconds": 5.0,
        "per_client": 0,
    }
    settings.update(overrides)
    settings.setdefault("heavy_slots", settings["slots"])  # no heavy-client rule
    settings.setdefault("known_slots", 0)  # no slot kept for known clients
    return Gate(**settings)  # type: ignore[arg-type]


def refusal(call, wait: int = slots.RETRY_AFTER_SECONDS) -> OverLimit:
    with pytest.raises(OverLimit) as refused:
        call()
    assert refused.value.headers["Retry-After"] == str(wait)
    assert f"Retry after {wait} s" in refused.value.message
    return refused.value


def wait_until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


# --------------------------------------------------------------------------- the gate


def test_a_client_over_its_limit_gets_429_while_another_is_admitted():
    doors = gate(slots=4, per_client=2)
    doors.enter("a")
    doors.enter("a")
    refused = refusal(lambda: doors.enter("a"))
    assert (refused.status, refused.type, refused.limit) == (
        429,
        "TooManyRequests",
        "client_concurrency",
    )
    assert "PLAYGROUND_CLIENT_CONCURRENCY" in refused.message
    doors.enter("b")
    assert doors.counts() == (3, 0)


def admitted_in_order(doors: Gate, held: Ticket, clients: list[str]) -> list[str]:
    """The order in which `clients`, queued one after the other behind the request that
    holds the one slot, get it once that one leaves."""
    order: list[str] = []

    def wait_for_slot(client: str) -> None:
        ticket = doors.enter(client)
        order.append(client)
        doors.leave(ticket)

    with ThreadPoolExecutor(len(clients)) as pool:
        waiting = []
        for number, client in enumerate(clients):
            waiting.append(pool.submit(wait_for_slot, client))
            wait_until(lambda n=number: doors.counts() == (1, n + 1))
        doors.leave(held)
        for future in waiting:
            future.result(timeout=5)
    assert doors.counts() == (0, 0)
    return order


def test_waiting_requests_get_freed_slots_in_arrival_order():
    doors = gate(slots=1, queue=2)
    assert admitted_in_order(doors, doors.enter("a"), ["b", "c"]) == ["b", "c"]


@pytest.mark.timing
def test_a_full_queue_is_503_at_once():
    doors = gate(slots=1, queue=0)
    doors.enter("a")
    started = time.monotonic()
    refused = refusal(lambda: doors.enter("b"))
    assert time.monotonic() - started < doors.queue_seconds
    assert (refused.status, refused.type, refused.limit) == (503, "ServiceUnavailable", "queue")


def test_a_wait_that_runs_out_is_503_and_leaves_nothing_behind():
    doors = gate(slots=1, queue=1, queue_seconds=0.2, per_client=1)
    held = doors.enter("a")
    started = time.monotonic()
    refused = refusal(lambda: doors.enter("b"))
    assert time.monotonic() - started >= 0.2
    assert (refused.status, refused.limit) == (503, "queue_seconds")
    assert doors.counts() == (1, 0)
    doors.leave(held)
    doors.leave(doors.enter("b"))  # b's wait no longer counts against its limit
    assert doors.counts() == (0, 0)


@pytest.mark.timing
def test_heavy_clients_share_their_slots_and_never_wait():
    doors = gate(slots=3, queue=4, heavy_slots=2)
    for client in ("x", "y", "z"):
        doors.leave(doors.enter(client), ran_out=True)
    tickets = [doors.enter("x"), doors.enter("y")]
    assert all(ticket.heavy for ticket in tickets)
    started = time.monotonic()
    refused = refusal(lambda: doors.enter("z"))  # a slot is free, but for everyone else
    assert time.monotonic() - started < doors.queue_seconds
    assert (refused.status, refused.limit) == (503, "heavy_slots")
    assert not doors.enter("newcomer").heavy
    assert doors.counts() == (3, 0)


def test_only_requests_that_ran_out_make_their_client_heavy():
    doors = gate(slots=2, heavy_slots=1)
    doors.leave(doors.enter("a"))
    assert not doors.enter("a").heavy
    doors.leave(doors.enter("b"), ran_out=True)
    assert doors.enter("b").heavy


def test_heavy_clients_are_forgotten_in_time_and_kept_in_bounds(monkeypatch):
    monkeypatch.setattr(client_costs, "HEAVY_SECONDS", 0.1)
    monkeypatch.setattr(client_costs, "HEAVY_CLIENTS_KEPT", 3)
    doors = gate(slots=2, heavy_slots=1)
    for client in ("a", "b", "c", "d"):
        doors.leave(doors.enter(client), ran_out=True)
    assert not doors.enter("a").heavy  # the oldest of four, pushed out
    for client in ("b", "c", "d"):
        assert doors._is_heavy(client)
    time.sleep(0.1)
    assert not any(doors._is_heavy(client) for client in ("b", "c", "d"))


# Found by the round-3 review's bench (bench/neighbours.py): under bombs from 12 fresh
# addresses a normal visitor's renders waited behind theirs in a first-come queue for
# every slot (p99 80 to 125 times idle) and were even refused (503 queue_seconds).


def make_known(doors: Gate, client: str) -> None:
    """Requests of `client` answered: it is known for ten minutes."""
    for _ in range(client_costs.KNOWN_AFTER_REQUESTS):
        doors.leave(doors.enter(client), cpu=0.01)


def test_a_kept_slot_is_only_for_known_clients():
    doors = gate(slots=2, queue=2, queue_seconds=0.1, known_slots=1)
    make_known(doors, "visitor")
    doors.enter("stranger")  # a client nobody knows yet: one of the other slots
    refused = refusal(lambda: doors.enter("bomber"))  # only the kept slot is free
    assert (refused.status, refused.limit) == (503, "queue_seconds")
    assert doors.counts() == (1, 0)
    doors.enter("visitor")  # the known client takes it at once
    assert doors.counts() == (2, 0)


def test_known_clients_go_first_when_requests_wait():
    doors = gate(slots=1, queue=3)
    make_known(doors, "visitor")
    order = admitted_in_order(doors, doors.enter("bomber"), ["stranger", "visitor"])
    assert order == ["visitor", "stranger"]


def test_a_known_client_takes_the_place_of_another_in_a_full_queue():
    doors = gate(slots=1, queue=2, queue_seconds=5.0)
    make_known(doors, "visitor")
    held = doors.enter("bomber")
    outcomes: dict[str, object] = {}

    def wait_for_slot(client: str) -> None:
        try:
            outcomes[client] = doors.enter(client)
        except OverLimit as refused:
            outcomes[client] = refused.limit

    with ThreadPoolExecutor(3) as pool:
        for number, client in enumerate(("stranger-1", "stranger-2")):
            pool.submit(wait_for_slot, client)
            wait_until(lambda n=number: doors.counts() == (1, n + 1))
        visitor = pool.submit(wait_for_slot, "visitor")  # the queue is full
        wait_until(lambda: outcomes.get("stranger-2") == "queue")  # the newest gave way
        doors.leave(held)
        visitor.result(timeout=5)
        assert outcomes["visitor"].known  # admitted first, as a known client
        doors.leave(outcomes["visitor"])
        wait_until(lambda: "stranger-1" in outcomes)
        doors.leave(outcomes["stranger-1"])
    assert doors.counts() == (0, 0) and not doors._clients


def test_a_known_client_that_turns_heavy_is_no_longer_known():
    doors = gate(slots=3, queue=1, queue_seconds=0.1, heavy_slots=1, known_slots=1)
    make_known(doors, "visitor")
    assert doors.enter("visitor").known
    doors.leave(doors.enter("visitor"), ran_out=True)
    ticket = doors.enter("visitor")
    assert (ticket.heavy, ticket.known) == (True, False)


def test_a_known_client_is_one_whose_requests_are_cheap_on_the_whole():
    doors = gate(slots=3, heavy_slots=1, known_slots=1)
    for _ in range(20):  # renders, a few milliseconds each
        doors.leave(doors.enter("visitor"), cpu=0.003)
    doors.leave(doors.enter("visitor"), cpu=0.6)  # an analysis now and then
    assert doors.enter("visitor").known
    for _ in range(4):  # a completion read by every runtime, one after the other
        doors.leave(doors.enter("reader"), cpu=0.13)
    ticket = doors.enter("reader")
    assert (ticket.known, ticket.heavy) == (False, False)


def test_requests_that_add_up_make_their_client_heavy():
    # Each costs half a second: none alone is over the second a heavy request takes, but
    # a client that keeps sending them (the review's pathological completions) is heavy.
    doors = gate(slots=3, heavy_slots=1)
    heavy = []
    for _ in range(8):
        ticket = doors.enter("reader")
        heavy.append(ticket.heavy)
        doors.leave(ticket, cpu=0.5)
    assert heavy == [False] * 6 + [False, True]  # 3.5 s added up after the 7th
    # A visitor whose analyses take most of a second, a few times, is not.
    for _ in range(3):
        doors.leave(doors.enter("visitor"), cpu=0.8)
    assert not doors.enter("visitor").heavy


def test_one_request_over_a_second_makes_its_client_heavy():
    doors = gate(slots=2, heavy_slots=1)
    doors.leave(doors.enter("a"), cpu=0.9)
    assert not doors.enter("a").heavy
    doors.leave(doors.enter("b"), cpu=1.1)
    assert doors.enter("b").heavy


def test_heavy_clients_leave_the_kept_slots_alone():
    doors = gate(slots=3, queue=2, heavy_slots=2, known_slots=1)
    for client in ("x", "y"):
        doors.leave(doors.enter(client), ran_out=True)
    doors.enter("x")
    doors.enter("stranger")
    refused = refusal(lambda: doors.enter("y"))  # a slot is free, but it is kept
    assert refused.limit == "heavy_slots"


def test_heavy_slots_as_many_as_slots_means_no_heavy_clients():
    doors = gate(slots=2, heavy_slots=2)
    doors.leave(doors.enter("a"), ran_out=True)
    assert not doors.enter("a").heavy


def test_never_more_admitted_than_slots_under_contention():
    doors = gate(slots=3, queue=4, queue_seconds=0.05, per_client=2, heavy_slots=2)
    lock = threading.Lock()
    inside, most = 0, 0

    def visitor(seed: int) -> None:
        nonlocal inside, most
        rng = random.Random(seed)
        for _ in range(150):
            try:
                ticket = doors.enter(f"client-{rng.randrange(6)}")
            except OverLimit:
                continue
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(rng.random() / 500)
            with lock:
                inside -= 1
            doors.leave(ticket, ran_out=rng.random() < 0.1)

    with ThreadPoolExecutor(12) as pool:
        list(pool.map(visitor, range(12)))
    assert 1 < most <= doors.slots
    assert doors.counts() == (0, 0)
    assert not doors._clients


@pytest.mark.parametrize(
    ("setting", "value"),
    [("HEAVY_SLOTS", 0), ("HEAVY_SLOTS", -1), ("QUEUE", -1), ("THREADS", 0), ("KNOWN_SLOTS", -1)],
)
def test_settings_out_of_range_name_their_variable(app, setting, value):
    with pytest.raises(ValueError, match=f"PLAYGROUND_{setting}"):
        gate_from_config({**app.config, setting: value})


@pytest.mark.parametrize(("setting", "value"), [("FETCHES", 0), ("CLIENT_FETCHES", -1)])
def test_fetch_settings_out_of_range_name_their_variable(app, setting, value):
    with pytest.raises(ValueError, match=f"PLAYGROUND_{setting}"):
        fetch_slots_from_config({**app.config, setting: value})


# --------------------------------------------------------------------------- fetch slots


def test_fetch_slots_refuse_a_client_over_its_limit_and_everyone_when_full():
    fetches = FetchSlots(slots=3, per_client=2)
    fetches.enter("a")
    fetches.enter("a")
    # A remote load takes seconds: a refused one is asked to wait longer.
    refused = refusal(lambda: fetches.enter("a"), BUSY_RETRY_SECONDS)
    assert (refused.status, refused.type, refused.limit) == (
        429,
        "TooManyRequests",
        "client_fetches",
    )
    assert "PLAYGROUND_CLIENT_FETCHES" in refused.message
    fetches.enter("b")
    full = refusal(lambda: fetches.enter("c"), BUSY_RETRY_SECONDS)
    assert (full.status, full.type, full.limit) == (503, "ServiceUnavailable", "fetches")
    assert "PLAYGROUND_FETCHES" in full.message
    fetches.leave("a")
    fetches.enter("c")  # a slot given back is taken at once
    for client in ("a", "b", "c"):
        fetches.leave(client)
    assert not fetches._clients  # past clients leave no keys behind


# --------------------------------------------------------------------------- the app

#: What docs/running-a-service.md calls expensive and cheap (an unknown share or source id
#: is fine: the point is whether the request is counted, not what it answers).
EXPENSIVE = [
    ("POST", "/api/render"),
    ("POST", "/api/outputs"),
    ("POST", "/api/analyze"),
    ("POST", "/api/diff"),
    ("POST", "/api/command"),
    ("POST", "/api/parse"),
    ("POST", "/api/roundtrip"),
    ("POST", "/api/completion"),
    ("POST", "/fragments/completion"),
    ("POST", "/api/tokenize"),
    ("POST", "/api/sources/gguf"),
    ("POST", "/api/sources/hf"),
    ("POST", "/api/sources/modelfile"),
    ("POST", "/api/shares"),
    ("GET", "/"),
    ("POST", "/"),
    ("POST", "/fragments/output"),
    ("POST", "/fragments/share"),
    ("GET", "/s/0123456789abcdef01234567"),
    # A source this process has not seen is rebuilt in a source worker.
    ("GET", "/api/sources/0123"),
]
#: Remote loads: a fetch slot for the whole request, a sandbox slot only while they parse.
REMOTE = [
    ("POST", "/api/sources/hub"),
    ("POST", "/api/sources/url"),
    ("POST", "/api/sources/ollama"),
]
CHEAP = [
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/static/playground.css"),
    ("GET", "/s/0123456789abcdef01234567.json"),
    ("GET", "/api/library"),
    ("GET", "/api/engines"),
    ("GET", "/api/library/chatml"),
    ("POST", "/download/template.jinja"),
    ("GET", "/docs/api"),
]


@pytest.fixture(scope="module")
def limited_app(tmp_path_factory):
    """An application whose clients may have one expensive request at a time."""
    data = tmp_path_factory.mktemp("admission")
    application = create_app({"TESTING": True, "DATA_DIR": str(data), "CLIENT_CONCURRENCY": 1})
    yield application
    application.extensions["sandbox_pool"].close()


@pytest.fixture()
def access_log() -> Iterator[list[str]]:
    """The access-log lines written during the test."""
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger(ACCESS_LOGGER)
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)


def test_every_route_is_either_expensive_or_cheap(limited_app):
    urls = limited_app.url_map.bind("localhost")
    listed = {urls.match(path, method)[0] for method, path in EXPENSIVE + REMOTE + CHEAP}
    routes = {rule.endpoint for rule in limited_app.url_map.iter_rules()}
    assert listed == routes, "classify the new route in EXPENSIVE, REMOTE or CHEAP (and the docs)"
    remote = {urls.match(path, method)[0] for method, path in REMOTE}
    assert remote == admission.REMOTE_ENDPOINTS


def test_expensive_requests_count_and_cheap_ones_do_not(limited_app):
    doors = limited_app.extensions["admission"]
    client = limited_app.test_client()
    held = doors.enter("127.0.0.1")  # the test client's address is at its limit now
    try:
        for method, path in EXPENSIVE:
            # Sent as each write must be: one that is not is a 415 before admission.
            declared = guards.expected_type(path) or "application/x-www-form-urlencoded"
            answer = client.open(path, method=method, data=b"{}", content_type=declared)
            assert answer.status_code == 429, (method, path)
            assert answer.headers["Retry-After"] == str(slots.RETRY_AFTER_SECONDS)
        for method, path in CHEAP + REMOTE:
            answer = client.open(path, method=method, data={"template": "x"})
            assert answer.status_code not in (429, 503), (method, path)
        other = client.get("/", environ_base={"REMOTE_ADDR": "203.0.113.5"})
        assert other.status_code == 200
    finally:
        doors.leave(held)
    assert doors.counts() == (0, 0)


# Found by the round-3 attack review: a cross-site write from a browser whose address was
# busy got admission's 503 (or 429) before the cross-site check's 403.
def test_a_cross_site_write_is_403_before_any_admission_decision(limited_app):
    doors = limited_app.extensions["admission"]
    fetches = limited_app.extensions["fetch_slots"]
    client = limited_app.test_client()
    foreign = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
    held, _ = doors.enter("127.0.0.1"), fetches.enter("127.0.0.1")
    try:
        for method, path in EXPENSIVE + REMOTE:
            if method == "GET":
                continue
            answer = client.open(path, method=method, data=b"{}", headers=foreign)
            assert answer.status_code == 403, (method, path)
    finally:
        doors.leave(held)
        fetches.leave("127.0.0.1")
    assert doors.counts() == (0, 0)


def test_remote_loads_count_as_fetches_and_nothing_else_does(limited_app):
    fetches = limited_app.extensions["fetch_slots"]
    client = limited_app.test_client()
    fetches.enter("127.0.0.1")  # the test client's one remote load
    try:
        for method, path in REMOTE:
            answer = client.open(path, method=method, json={"url": "x", "repo": "x/y"})
            assert (answer.status_code, answer.json["error"]["limit"]) == (429, "client_fetches")
        for method, path in EXPENSIVE + CHEAP:
            answer = client.open(path, method=method, data={"template": "x"})
            assert answer.status_code not in (429, 503), (method, path)
    finally:
        fetches.leave("127.0.0.1")
    assert not fetches._clients


def test_a_refusal_is_json_and_logged_with_its_limit(limited_app, access_log):
    doors = limited_app.extensions["admission"]
    held = doors.enter("127.0.0.1")
    try:
        answer = limited_app.test_client().post("/api/render", json={})
    finally:
        doors.leave(held)
    error = answer.json["error"]
    assert (answer.status_code, error["type"], error["limit"]) == (
        429,
        "TooManyRequests",
        "client_concurrency",
    )
    assert error["retry_after"] == slots.RETRY_AFTER_SECONDS
    [line] = [json.loads(text) for text in access_log]
    assert (line["status"], line["limit"]) == (429, "client_concurrency")


def test_a_failing_request_gives_its_slot_back(limited_app):
    client = limited_app.test_client()
    for _ in range(3):  # one slot per client: a leak would refuse the second
        answer = client.post("/api/render", data=b"not json", content_type="application/json")
        assert answer.status_code == 400
    assert limited_app.extensions["admission"].counts() == (0, 0)


def test_a_request_that_costs_over_a_second_of_worker_cpu_makes_its_client_heavy(tmp_path):
    application = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "CPU_SECONDS": 6})
    gate_of_app = application.extensions["admission"]
    client = application.test_client()
    cheap = {
        "template": "{{ messages[0].content }}",
        "messages": [{"role": "user", "content": "hi"}],
    }
    # A template that runs one to two seconds of CPU, well within its 6 s.
    loops = (
        "{% set ns = namespace(n=0) %}{% for i in range(500) %}{% for j in range(1000) %}"
        "{% set ns.n = ns.n + j %}{% endfor %}{% endfor %}"
    )
    costly = {**cheap, "template": loops + "done"}
    try:
        assert client.post("/api/render", json=cheap).status_code == 200
        assert not gate_of_app._is_heavy("127.0.0.1")
        answer = client.post("/api/render", json=costly)
        assert (answer.status_code, answer.json.get("prompt")) == (200, "done"), answer.json
        assert gate_of_app._is_heavy("127.0.0.1")
    finally:
        application.extensions["sandbox_pool"].close()
