"""A server on loopback that answers every request one byte at a time, forever.

It reads the request, then sends an HTTP status line and header lines one byte every
`interval` seconds, faster than any read timeout, and never ends the headers: a client
whose only defence is a timeout per read waits as long as the server likes. Each
connection's end is noted (`closed`: seconds after it was accepted), so a test can tell
when the client gave up and closed it.
"""

from __future__ import annotations

import contextlib
import itertools
import select
import socket
import threading
import time

#: What is trickled by default: a status line, then one header line that never ends.
HTTP_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nX-Slow: "
#: A TLS handshake record that announces 16 kB and never delivers them: a client reading
#: it waits inside its TLS handshake, before any HTTP.
TLS_ANSWER = b"\x16\x03\x03\x40\x00"


class TrickleHost:
    """The server; `url` is its address, `accepted` counts connections. `answer` is sent
    first (a byte at a time), then "a" forever."""

    def __init__(
        self, interval: float = 0.25, host: str = "127.0.0.1", answer: bytes = HTTP_ANSWER
    ) -> None:
        self.interval = interval
        self.answer = answer
        self._listener = socket.create_server((host, 0))
        self.url = f"http://{host}:{self._listener.getsockname()[1]}"
        self._stop = threading.Event()
        self._lock = threading.Lock()
        #: Seconds each connection lasted, from its accept to the client's close.
        self.closed: list[float] = []
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.accepted += 1
            threading.Thread(target=self._trickle, args=(connection,), daemon=True).start()

    def _trickle(self, connection: socket.socket) -> None:
        accepted = time.monotonic()
        answer = itertools.chain(self.answer, itertools.repeat(ord("a")))
        with connection, contextlib.suppress(OSError):
            connection.recv(65536)  # the request (one small GET)
            while not self._stop.is_set():
                readable, _, _ = select.select([connection], [], [], self.interval)
                if readable and not connection.recv(1024):
                    with self._lock:
                        self.closed.append(time.monotonic() - accepted)
                    return
                connection.sendall(bytes([next(answer)]))

    def wait_closed(self, count: int, timeout: float) -> list[float]:
        """The lifetimes of the first `count` connections the client closed, waiting up to
        `timeout` seconds for them; fewer if it did not close them by then."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.closed) >= count:
                    return list(self.closed)
            time.sleep(0.02)
        with self._lock:
            return list(self.closed)

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
