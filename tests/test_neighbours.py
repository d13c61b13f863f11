"""A known visitor is served at once while other addresses send bombs (hardening, round 3).

The round-3 review measured a normal client's renders while its bomb mix ran from 4 and
12 other addresses: p99 32 and 365 ms against 12 ms idle, and `bench/neighbours.py` saw
the visitor refused (503) as its renders queued behind every fresh address's first
bombs, first come first served. Now a visitor with a few requests answered is *known*
(while it is not heavy): a slot of each worker is kept for known clients, their waiting
requests go first, and their sandbox tasks keep the sandbox's priority while new and
heavy clients' start at the lowest. These tests send the review's shapes, scaled to the
suite, from addresses of their own (the server believes one proxy).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.web.client_costs import KNOWN_AFTER_REQUESTS
from tests.support.server import NORMAL_RENDER, Server, running
from tests.support.shared_data import TEMPLATES_DIR, needs_shared

#: The default admission rules (one worker of four slots, a queue of eight, two requests
#: per client, one slot for heavy clients and one kept for known ones), a 1 s CPU limit.
ENV = {
    "PLAYGROUND_WORKERS": "1",
    "PLAYGROUND_CPU_SECONDS": "1",
    "PLAYGROUND_TRUSTED_PROXIES": "1",
}
VISITOR = "203.0.113.77"
CPU_BOMB = {
    "template": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "messages": [{"role": "user", "content": "hi"}],
}
#: What the visitor may wait at most while the bombs run: under the bomb's own second,
#: which a render that waited for one of them would take (it takes milliseconds idle).
VISITOR_SECONDS = 0.5


def _post(server: Server, body: dict, address: str, path: str = "/api/render"):
    """status, answer, seconds, as `address` (X-Forwarded-For)."""
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    started = time.monotonic()
    status, _, answer = server.send("POST", path, json.dumps(body).encode(), headers, timeout=60)
    return status, json.loads(answer), time.monotonic() - started


def _visits_during(server: Server, attack, attackers: list[str]) -> list[tuple[int, float]]:
    """The visitor's renders (status, seconds) while each attacker runs `attack` twice
    at once (its two requests' worth), the attack under way first."""
    for _ in range(KNOWN_AFTER_REQUESTS):  # the visitor's first renders
        assert _post(server, NORMAL_RENDER, VISITOR)[0] == 200
    with ThreadPoolExecutor(2 * len(attackers)) as pool:
        attacks = [pool.submit(attack, a) for a in attackers for _ in range(2)]
        time.sleep(0.3)
        visits = []
        while not all(a.done() for a in attacks) and len(visits) < 40:
            status, _, seconds = _post(server, NORMAL_RENDER, VISITOR)
            visits.append((status, seconds))
            time.sleep(0.05)
        for attack_done in attacks:
            attack_done.result(timeout=120)
    return visits


@pytest.mark.timing
def test_a_known_visitor_does_not_queue_behind_new_addresses_bombs():
    attackers = [f"198.18.{n}.1" for n in range(6)]  # twelve bombs at once, fresh addresses

    def bombs(address: str) -> None:
        for _ in range(3):
            status, answer, _ = _post(server, CPU_BOMB, address)
            assert status in (422, 429, 503), answer

    with running(Server(ENV)) as server:
        visits = _visits_during(server, bombs, attackers)
    assert len(visits) >= 10
    assert [status for status, _ in visits] == [200] * len(visits)
    slowest = max(seconds for _, seconds in visits)
    assert slowest < VISITOR_SECONDS, f"the visitor waited {slowest:.2f} s"


@pytest.mark.timing
@needs_shared
def test_a_known_visitor_keeps_its_slot_while_addresses_read_costly_completions():
    """Readings that cost under a second each (250 kB of repeated openers, read by every
    runtime) never made their client heavy: such clients held every slot but the kept
    one. Now their costs add up, and they share the heavy clients' one slot."""
    qwen3 = (TEMPLATES_DIR / "Qwen-Qwen3-0.6B.jinja").read_text(encoding="utf-8")
    reading = {
        "template": qwen3,
        "messages": [{"role": "user", "content": "The weather in Paris?"}],
        "add_generation_prompt": True,
        "completion": "<tool_call>{" * 20_000,
    }

    def readings(address: str) -> None:
        for _ in range(6):
            status, answer, _ = _post(server, reading, address, "/api/roundtrip")
            assert status in (200, 429, 503), answer

    with running(Server(ENV)) as server:
        visits = _visits_during(server, readings, [f"198.18.{n}.1" for n in range(4)])
    assert [status for status, _ in visits] == [200] * len(visits)
    slowest = max(seconds for _, seconds in visits)
    assert slowest < VISITOR_SECONDS, f"the visitor waited {slowest:.2f} s"
