"""`./playground serve` on a taken address says so in words, and how to pick another; a
Unix socket (`PLAYGROUND_BIND=unix:PATH`, as gunicorn takes) is checked and served too."""

from __future__ import annotations

import contextlib
import http.client
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import REPO


def refused(bind: str) -> str:
    """What `./playground serve` says as it refuses `bind`, in words."""
    done = subprocess.run(
        [str(REPO / "playground"), "serve"],
        env={**os.environ, "PLAYGROUND_BIND": bind},
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "Traceback" not in said
    return said


def test_serve_on_a_taken_port_says_how_to_pick_another():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        said = refused(f"127.0.0.1:{port}")
    assert f"127.0.0.1:{port} is taken (Address already in use)" in said
    assert f"PLAYGROUND_BIND=127.0.0.1:{port + 1} ./playground serve" in said


@pytest.fixture()
def folder() -> Iterator[Path]:
    """A folder with a short path: a Unix socket's path has at most 107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="pg-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_serve_on_a_taken_unix_socket_says_how_to_pick_another(folder):
    # It was a Python traceback: int('/path/to/socket').
    path = folder / "playground.sock"
    with socket.socket(socket.AF_UNIX) as taken:
        taken.bind(str(path))
        taken.listen()
        said = refused(f"unix:{path}")
    assert f"unix:{path} is taken: another program listens there" in said
    assert f"PLAYGROUND_BIND=unix:{folder / 'playground-2.sock'} ./playground serve" in said


def test_serve_refuses_a_unix_socket_path_that_is_a_file(folder):
    path = folder / "notes.txt"
    path.write_text("mine")
    assert f"{path} exists and is not a socket" in refused(f"unix:{path}")
    assert path.read_text() == "mine"


def _healthz(path: Path) -> int | None:
    """The status of GET /healthz over the Unix socket at `path`, None if none answers."""
    connection = http.client.HTTPConnection("localhost", timeout=5)
    try:
        connection.sock = socket.socket(socket.AF_UNIX)
        connection.sock.connect(str(path))
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


def test_serve_on_a_unix_socket_answers_there(folder):
    path = folder / "playground.sock"
    server = subprocess.Popen(
        [str(REPO / "playground"), "serve"],
        env={
            **os.environ,
            "PLAYGROUND_BIND": f"unix:{path}",
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_DATA_DIR": str(folder),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while (status := _healthz(path)) is None and server.poll() is None:
            assert time.monotonic() < deadline, "nothing answered on the socket"
            time.sleep(0.2)
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone already: it said why
            os.killpg(server.pid, signal.SIGTERM)
        _, said = server.communicate(timeout=60)
    assert status == 200, said[-2000:]


def test_serve_says_the_address_to_open(folder):
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(REPO / "playground"), "serve"],
        env={
            **os.environ,
            "PLAYGROUND_BIND": f"127.0.0.1:{port}",
            "PLAYGROUND_WORKERS": "1",
            "PLAYGROUND_DATA_DIR": str(folder),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    said = [""]
    try:
        # Lines as they come, for at most two minutes (a line that never comes must not hang).
        os.set_blocking(server.stdout.fileno(), False)
        deadline = time.monotonic() + 120
        while not any("open http://" in line for line in said) and time.monotonic() < deadline:
            if select.select([server.stdout], [], [], 1)[0]:
                said.extend(server.stdout.readlines())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        server.communicate(timeout=60)
    ready = [line for line in said if "The playground is ready" in line]
    assert ready and f"open http://127.0.0.1:{port}/" in ready[0], said[-5:]
