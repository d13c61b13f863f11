"""What the proof benches (load, attack, fuzz, durability) add to the shared launcher.

- `Server`: gunicorn from `tests.support.server`, which the tests start too, with the
  bench's settings (`BENCH_ENV`); `running()` starts one for a block.
- `RssSampler` follows the server's peak resident memory in a thread.
- `Client`: one keep-alive `http.client` connection that reconnects (once) when the
  server closed an idle connection between two requests. Each client is a visitor of
  its own: the server believes one proxy (`PLAYGROUND_TRUSTED_PROXIES=1`, unless the
  bench says otherwise) and each client names its own address in `X-Forwarded-For`, so
  per-client limits count every bench client apart, as they would count real visitors.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from tests.support import UNLIMITED_WRITES
from tests.support import server as support
from tests.support.server import HOST

#: What every bench server runs with, unless the bench says otherwise: it believes one
#: proxy (the bench is the proxy: see Client) and lifts the write limits, since the
#: benches write from one address far faster than a client may.
BENCH_ENV = {
    "PLAYGROUND_TRUSTED_PROXIES": "1",
    **{f"PLAYGROUND_{key}": str(value) for key, value in UNLIMITED_WRITES.items()},
}


class Server(support.Server):
    """The shared gunicorn launcher (`tests.support.server`) with `BENCH_ENV`."""

    def __init__(self, env: dict[str, str] | None = None, data_dir: str | None = None) -> None:
        super().__init__({**BENCH_ENV, **(env or {})}, data_dir)


def running(env: dict[str, str] | None = None) -> contextlib.AbstractContextManager[Server]:
    """A started bench `Server` with a temporary data folder (see `support.running`)."""
    return support.running(Server(env))


class RssSampler:
    """Samples a server's resident memory every `interval` seconds in a daemon thread:
    the whole process tree (`samples`) and the web processes alone (`web_samples`)."""

    def __init__(self, server: Server, interval: float = 0.2) -> None:
        self.server = server
        self.interval = interval
        self.samples: list[int] = []
        self.web_samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        self.samples.append(self.server.rss_bytes())
        self.web_samples.append(self.server.web_rss_bytes())

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sample()

    @property
    def peak(self) -> int:
        return max(self.samples, default=0)


# --------------------------------------------------------------------------- HTTP


@dataclass
class Response:
    status: int
    body: bytes
    ms: float

    def json(self) -> Any:
        return json.loads(self.body)


_ADDRESSES = itertools.count(1)


def visitor_address() -> str:
    """A client address no other bench client in this process has (10.x.y.z)."""
    number = next(_ADDRESSES)
    return f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"


class Client:
    """One keep-alive connection to the server, from a visitor address of its own.

    A request that fails on a connection that already served one, before any answer
    came back, is retried once on a new connection: the server closed the idle
    connection (keep-alive timeout), which is not an error of the request.
    """

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.port = port
        self.timeout = timeout
        self.address = visitor_address()
        self.reconnects = 0
        self._connection: http.client.HTTPConnection | None = None
        self._used = False

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            self._connection = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
            self._used = False
        return self._connection

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Response:
        headers = {"X-Forwarded-For": self.address, **(headers or {})}
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in range(2):
            connection = self._connect()
            reused = self._used
            started = time.perf_counter()
            try:
                response, sent = self._exchange(connection, method, path, body, headers)
                data = response.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt or not reused:
                    raise
                self.reconnects += 1
                continue
            except BaseException:
                self.close()
                raise
            elapsed_ms = (time.perf_counter() - started) * 1000
            self._used = True
            if response.will_close or not sent:
                self.close()
            return Response(response.status, data, elapsed_ms)
        raise AssertionError("unreachable")

    @staticmethod
    def _exchange(
        connection: http.client.HTTPConnection,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
    ) -> tuple[http.client.HTTPResponse, bool]:
        """Send the request and get the answer; and whether all the body went out.

        A server may answer before it has read the body (a 413 for an upload over its
        cap) and close the connection: sending the rest then fails, but the answer is
        there to read. Only when there is none is the send's error raised.
        """
        try:
            connection.request(method, path, body=body, headers=headers)
        except (ConnectionResetError, BrokenPipeError) as error:
            try:
                return connection.getresponse(), False
            except (http.client.HTTPException, OSError):
                raise error from None
        return connection.getresponse(), True

    def post_json(self, path: str, payload: Any) -> Response:
        return self.request("POST", path, json.dumps(payload).encode())

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (0.0 when there are none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def mib(size: int) -> str:
    return f"{size / 2**20:.0f} MiB"
