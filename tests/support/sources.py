"""Waiting for an uploaded source's tokenizer, which is built after the upload's answer."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: How long a test waits for a tokenizer build (a worker's own backstop is shorter).
BUILD_SECONDS = 60.0


def built_with(get: Callable[[str], dict[str, Any]], source: dict[str, Any]) -> dict[str, Any]:
    """`source` (an upload's answer) once its tokenizer is no longer building, as
    `get(path)` reads `GET /api/sources/<id>`."""
    deadline = time.monotonic() + BUILD_SECONDS
    while (source.get("tokenizer") or {}).get("state") == "building":
        assert time.monotonic() < deadline, f"tokenizer still building: {source['id']}"
        time.sleep(0.01)
        source = get(f"/api/sources/{source['id']}")
    return source


def built(client: Any, source: dict[str, Any]) -> dict[str, Any]:
    """`built_with` a Flask test client."""
    return built_with(lambda path: client.get(path).json, source)
