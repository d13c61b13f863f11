"""Capacity under attack, through gunicorn: health checks, other clients and the backstop.

One server (1 worker, 4 sandboxes, a 1 s CPU limit, admission settings at their
defaults) that believes one proxy, so every test client names its own address in
`X-Forwarded-For`. Its access log gives the time each request spent in our code.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.config import SETTINGS
from app.pool import TRANSFER_GRACE_SECONDS, WALL_CLOCK_FACTOR
from tests.support import UNLIMITED_WRITES
from tests.support.server import NORMAL_RENDER, Server

#: Every test here bounds a latency: they run alone (see `timing` in pyproject.toml).
pytestmark = pytest.mark.timing
CPU_SECONDS = 1.0
DEFAULTS = {setting.key: setting.default for setting in SETTINGS}
#: The documented answer time of a render: its wait for a sandbox, then the backstop.
BOUND_SECONDS = DEFAULTS["QUEUE_SECONDS"] + WALL_CLOCK_FACTOR * CPU_SECONDS + TRANSFER_GRACE_SECONDS
#: What a loaded 2-core machine may add to that: pebble notices a timeout within 0.1 s,
#: then stops the worker; the client's own threads share the machine.
SLACK_SECONDS = 1.0
BOMB = json.dumps(
    {
        "template": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
        "{% endfor %}",
        "messages": [{"role": "user", "content": "hi"}],
    }
).encode()
NORMAL = json.dumps(NORMAL_RENDER).encode()
ADMISSION_LIMITS = {"client_concurrency", "heavy_slots", "queue", "queue_seconds"}


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    running = Server(
        {
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_THREADS": "4",
            "PLAYGROUND_CPU_SECONDS": str(CPU_SECONDS),
            "PLAYGROUND_TRUSTED_PROXIES": "1",
            **{f"PLAYGROUND_{key}": str(value) for key, value in UNLIMITED_WRITES.items()},
        }
    )
    try:
        running.start()
        yield running
    finally:
        running.close()
        shutil.rmtree(running.data_dir, ignore_errors=True)


def post(live: Server, address: str, body: bytes) -> tuple[int, dict[str, str], dict, float]:
    """POST /api/render as the client at `address`: status, headers, JSON, seconds."""
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    started = time.monotonic()
    status, answer_headers, data = live.send("POST", "/api/render", body, headers, timeout=60)
    return status, answer_headers, json.loads(data), time.monotonic() - started


def timed_get(live: Server, path: str) -> tuple[int, float]:
    started = time.monotonic()
    status, _, _ = live.send("GET", path, timeout=60)
    return status, time.monotonic() - started


def check_bomb_answer(status: int, headers: dict[str, str], body: dict, seconds: float) -> None:
    """A bomb costs a 422 naming the CPU limit, or a quick refusal naming its limit."""
    if status == 422:
        assert body["error"]["limit"] == "cpu_seconds", body
    else:
        assert status in (429, 503), (status, body)
        assert body["error"]["limit"] in ADMISSION_LIMITS, body
        assert headers["Retry-After"] == str(body["error"]["retry_after"])
    assert seconds < BOUND_SECONDS + SLACK_SECONDS, f"a bomb was answered after {seconds:.1f} s"


def server_seconds(server: Server, status: int) -> list[float]:
    """How long our code took over each /api/render answered with `status` (access log)."""
    lines = [json.loads(line) for line in server.log_text().splitlines() if '"path"' in line]
    return [
        line["duration_ms"] / 1000
        for line in lines
        if line["path"] == "/api/render" and line["status"] == status
    ]


def test_bomb_clients_from_many_addresses_leave_room_for_others(server):
    live = server
    workers = live.worker_pids()
    bombers = [f"198.51.100.{n}" for n in range(1, 9)]
    stop = threading.Event()
    bombs: list[tuple[str, int, dict[str, str], dict, float]] = []

    def attack(address: str) -> None:
        while not stop.is_set():
            status, headers, body, seconds = post(live, address, BOMB)
            bombs.append((address, status, headers, body, seconds))
            if status != 422:
                stop.wait(0.2)  # an impatient attacker: it retries five times a second

    health: list[tuple[int, float]] = []
    normal: list[tuple[int, dict, float]] = []
    with ThreadPoolExecutor(len(bombers)) as pool:
        attacks = [pool.submit(attack, address) for address in bombers]
        try:
            # Until every bomber has had a bomb stopped, and so counts as heavy.
            deadline = time.monotonic() + 60
            while {a for a, status, *_ in bombs if status == 422} != set(bombers):
                assert time.monotonic() < deadline, Counter(s for _, s, *_ in bombs)
                health.append(timed_get(live, "/healthz"))
                health.append(timed_get(live, "/static/playground.css"))
                time.sleep(0.1)
            # Then, while the attack goes on, another client renders.
            for _ in range(10):
                health.append(timed_get(live, "/healthz"))
                status, _, body, seconds = post(live, "203.0.113.7", NORMAL)
                normal.append((status, body, seconds))
                time.sleep(0.2)
        finally:
            stop.set()
            for attack_done in attacks:
                attack_done.result(timeout=120)

    assert all(status == 200 for status, _ in health)
    slowest_check = max(seconds for _, seconds in health)
    assert slowest_check < CPU_SECONDS, f"/healthz or a static file took {slowest_check:.2f} s"
    for status, body, seconds in normal:
        assert (status, body.get("prompt")) == (200, "Hello!"), body
        assert seconds < 1.0, f"a normal render took {seconds:.2f} s"
    for _, status, headers, body, seconds in bombs:
        check_bomb_answer(status, headers, body, seconds)
    stopped = server_seconds(server, 422)
    assert stopped and max(stopped) < BOUND_SECONDS + SLACK_SECONDS / 2, max(stopped)
    assert live.worker_pids() == workers
    assert not server.worker_trouble(), server.tail()


def test_one_client_with_8_bombs_gets_429_beyond_its_allowance(server):
    live = server
    allowance = DEFAULTS["CLIENT_CONCURRENCY"]
    with ThreadPoolExecutor(8) as pool:
        sent = [pool.submit(post, live, "198.51.100.99", BOMB) for _ in range(8)]
        time.sleep(0.1)  # let the bombs arrive first
        status, _, body, normal_seconds = post(live, "203.0.113.8", NORMAL)
        answers = [future.result(timeout=60) for future in sent]

    assert (status, body.get("prompt")) == (200, "Hello!"), body
    assert normal_seconds < 1.0, f"a normal render took {normal_seconds:.2f} s"
    statuses = Counter(answer[0] for answer in answers)
    assert statuses == {422: allowance, 429: 8 - allowance}, statuses
    for answer in answers:
        check_bomb_answer(*answer)
    refused = [seconds for status, _, _, seconds in answers if status == 429]
    stopped = [seconds for status, _, _, seconds in answers if status == 422]
    assert max(refused) < min(stopped), "a refusal must not wait for the admitted bombs"
    assert all(
        answer[2]["error"]["limit"] == "client_concurrency"
        for answer in answers
        if answer[0] == 429
    )
