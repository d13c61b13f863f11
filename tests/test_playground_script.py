"""`./playground serve` on a taken port says so in words, and how to pick another."""

from __future__ import annotations

import os
import socket
import subprocess

from tests.support import REPO


def test_serve_on_a_taken_port_says_how_to_pick_another():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        env = {**os.environ, "PLAYGROUND_BIND": f"127.0.0.1:{port}"}
        done = subprocess.run(
            [str(REPO / "playground"), "serve"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert f"127.0.0.1:{port} is taken (Address already in use)" in said
    assert f"PLAYGROUND_BIND=127.0.0.1:{port + 1} ./playground serve" in said
    assert "Traceback" not in said
