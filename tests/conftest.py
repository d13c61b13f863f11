"""Shared fixtures: the Flask app, its test client and a real gunicorn server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from app.web.factory import create_app

REPO = Path(__file__).resolve().parents[1]
T = TypeVar("T")

#: Every test writes through the session's application from one address, far faster than
#: a client may, so its per-client write limits are off; tests/test_quota.py checks them
#: on applications of their own.
UNLIMITED_WRITES = {"WRITES_PER_MINUTE": 0, "WRITE_MB_PER_MINUTE": 0}


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    """One application (and one sandbox pool) for the whole session."""
    data = tmp_path_factory.mktemp("data")
    application = create_app({"TESTING": True, "DATA_DIR": str(data), **UNLIMITED_WRITES})
    yield application
    application.extensions["sandbox_pool"].close()


@pytest.fixture()
def client(app):
    return app.test_client()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    """A gunicorn started the way `./playground serve` starts it."""

    url: str
    process: subprocess.Popen

    def post(self, path: str, body: object, timeout: float = 30) -> tuple[int, dict]:
        data = json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def get(self, path: str, timeout: float = 10) -> int:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as response:
            return response.status

    def send(
        self,
        method: str,
        path: str,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30,
    ) -> tuple[int, dict[str, str], bytes]:
        """Any request, as raw as an attacker would send it: status, headers, body."""
        request = urllib.request.Request(self.url + path, data=data, method=method)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def worker_pids(self) -> list[int]:
        """The gunicorn master's worker processes (its direct children), sorted."""
        return sorted(
            pid
            for pid in _child_pids(self.process.pid)
            if _command(pid).startswith(_command(self.process.pid)[:40])
        )

    def web_rss(self) -> int:
        """Resident bytes of the gunicorn workers themselves (not their worker processes)."""
        total = 0
        for pid in self.worker_pids():
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        return total

    def peak_web_rss(self, work: Callable[[], object]) -> int:
        """The most resident memory the gunicorn workers had while `work` ran."""
        samples = [self.web_rss()]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                samples.append(self.web_rss())

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            work()
        finally:
            done.set()
            sampler.join()
        return max(samples)

    def survives(self, attack: Callable[[], T], attackers: int = 1) -> list[T]:
        """Run `attack` from `attackers` threads; meanwhile a small render must answer
        within a second, and afterwards the same gunicorn workers must still serve."""
        before = self.worker_pids()
        assert before, "no gunicorn workers found"
        with ThreadPoolExecutor(max_workers=attackers + 1) as executor:
            futures = [executor.submit(attack) for _ in range(attackers)]
            time.sleep(0.1)  # let the attack start first
            started = time.monotonic()
            status, body = self.post("/api/render", NORMAL_RENDER)
            normal_seconds = time.monotonic() - started
            results = [future.result(timeout=120) for future in futures]
        assert (status, body.get("prompt")) == (200, "Hello!"), body
        assert normal_seconds < 1.0, f"a normal render took {normal_seconds:.2f} s"
        assert self.process.poll() is None, "gunicorn died"
        assert self.worker_pids() == before, "a gunicorn worker was replaced"
        return results


#: A small render that must stay fast while the server is under attack.
NORMAL_RENDER = {
    "template": "{{ messages[0].content }}",
    "messages": [{"role": "user", "content": "Hello!"}],
}


def _child_pids(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return [int(child) for child in children.read().split()]


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def start_gunicorn(extra_env: dict[str, str]) -> LiveServer:
    port = free_port()
    env = {**os.environ, "PLAYGROUND_BIND": f"127.0.0.1:{port}", **extra_env}
    env.setdefault("PLAYGROUND_DATA_DIR", tempfile.mkdtemp(prefix="playground-"))
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = LiveServer(f"http://127.0.0.1:{port}", process)
    workers = int(env.get("PLAYGROUND_WORKERS") or 2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            # Ready once one worker answers and all have been forked (gunicorn spawns
            # them a little apart), so tests that compare worker pids see them all.
            if server.get("/healthz", timeout=1) == 200 and len(server.worker_pids()) >= workers:
                return server
        except OSError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("gunicorn did not answer /healthz within 30 s")


@pytest.fixture(scope="session")
def live_server() -> Iterator[LiveServer]:
    """gunicorn with one worker, four threads and a 1 s render limit (to keep tests fast).

    Its tests attack from one address, so the per-client rules and write limits are off
    here; they have their own servers in test_admission_live.py and test_quota.py.
    """
    server = start_gunicorn(
        {
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_THREADS": "4",
            "PLAYGROUND_CPU_SECONDS": "1",
            "PLAYGROUND_CLIENT_CONCURRENCY": "0",
            "PLAYGROUND_HEAVY_SLOTS": "4",
            **{f"PLAYGROUND_{key}": str(value) for key, value in UNLIMITED_WRITES.items()},
        }
    )
    yield server
    server.process.terminate()
    server.process.wait(timeout=30)
