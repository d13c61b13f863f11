"""Shared fixtures: the Flask app, its test client and a real gunicorn server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app import create_app

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    """One application (and one sandbox pool) for the whole session."""
    data = tmp_path_factory.mktemp("data")
    application = create_app({"TESTING": True, "DATA_DIR": str(data)})
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
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if server.get("/healthz", timeout=1) == 200:
                return server
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("gunicorn did not answer /healthz within 30 s")


@pytest.fixture(scope="session")
def live_server() -> Iterator[LiveServer]:
    """gunicorn with one worker, four threads and a 1 s render limit (to keep tests fast)."""
    server = start_gunicorn(
        {"PLAYGROUND_WORKERS": "1", "PLAYGROUND_THREADS": "4", "PLAYGROUND_CPU_SECONDS": "1"}
    )
    yield server
    server.process.terminate()
    server.process.wait(timeout=30)
