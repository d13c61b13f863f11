"""Remote reads under attack, through gunicorn: slow servers cost fetch slots, never the
sandboxes that renders need.

One server (1 worker, 4 sandboxes, the admission settings at their defaults) that
believes one proxy, so each test client names its own address in `X-Forwarded-For`, and
reads URLs on loopback (`PLAYGROUND_URL_ALLOW_PRIVATE`) from a server that trickles.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.config import SETTINGS
from tests.support import UNLIMITED_WRITES
from tests.support.server import NORMAL_RENDER, Server, running
from tests.support.trickle_host import TrickleHost

#: Every test here bounds a latency: they run alone (see `timing` in pyproject.toml).
pytestmark = pytest.mark.timing
DEFAULTS = {setting.key: setting.default for setting in SETTINGS}
FETCH_SECONDS = 4.0


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    settings = {
        "PLAYGROUND_WORKERS": "1",
        "PLAYGROUND_THREADS": "4",
        "PLAYGROUND_TRUSTED_PROXIES": "1",
        "PLAYGROUND_URL_ALLOW_PRIVATE": "1",
        "PLAYGROUND_FETCH_SECONDS": str(FETCH_SECONDS),
        **{f"PLAYGROUND_{key}": str(value) for key, value in UNLIMITED_WRITES.items()},
    }
    with running(Server(settings)) as live:
        yield live


@pytest.fixture()
def trickle() -> Iterator[TrickleHost]:
    host = TrickleHost(interval=0.5)
    yield host
    host.close()


def post(live: Server, address: str, path: str, body: dict) -> tuple[int, dict, float]:
    headers = {"Content-Type": "application/json", "X-Forwarded-For": address}
    started = time.monotonic()
    status, _, data = live.send("POST", path, json.dumps(body).encode(), headers, timeout=60)
    return status, json.loads(data), time.monotonic() - started


def test_slow_remote_reads_leave_every_sandbox_to_renders(server, trickle):
    # Four slow reads from two addresses held all four sandboxes of the worker: every
    # other client's render waited its second and got 503 (queue_seconds).
    url = {"url": f"{trickle.url}/model.gguf"}
    readers = ["198.51.100.1", "198.51.100.1", "198.51.100.2", "198.51.100.2"]
    with ThreadPoolExecutor(len(readers)) as pool:
        reads = [pool.submit(post, server, a, "/api/sources/url", url) for a in readers]
        time.sleep(0.5)  # the reads are under way
        renders = []
        while not all(read.done() for read in reads):
            renders.append(post(server, "203.0.113.9", "/api/render", NORMAL_RENDER))
            time.sleep(0.1)
        answers = [read.result() for read in reads]

    assert len(renders) > 10
    for status, body, seconds in renders:
        assert (status, body.get("prompt")) == (200, "Hello!"), body
        assert seconds < 1.0, f"a render took {seconds:.2f} s while slow reads ran"
    # Each address has one read at a time; the other is refused at once, naming the limit.
    limits = Counter((status, body["error"]["limit"]) for status, body, _ in answers)
    per_client = DEFAULTS["CLIENT_FETCHES"]
    assert limits == {
        (504, "fetch_seconds"): 2 * per_client,
        (429, "client_fetches"): 4 - 2 * per_client,
    }
    for status, _, seconds in answers:
        assert seconds < (0.5 if status == 429 else FETCH_SECONDS + 1.5), (status, seconds)
    assert not server.worker_trouble(), server.tail()
