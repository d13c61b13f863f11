"""One deadline for a whole network exchange: connect, headers and body.

HTTP clients bound each read of a socket, not the exchange: a server that sends one byte
of its headers every few seconds never trips a read timeout, and the thread reading it
stays busy for as long as the server likes. So every socket a remote read connects is
noted, and when the read's deadline passes the waiting request thread shuts those
sockets down: the blocked read returns at once, and the thread is free again.

Both clients the service uses (urllib3 for URLs, httpx2 under huggingface_hub for the
Hub) connect through `socket.connect`, which Python reports to audit hooks
(`sys.addaudithook`) in the connecting thread; no client offers a hook of its own that
also sees the socket under TLS. The hook keeps a duplicate of each socket's descriptor:
TLS wrapping detaches the original socket object, and a descriptor number alone may be
reused by another connection once the client closes it, but a duplicate names the same
connection until it is closed at the end of the exchange.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_running = threading.local()
_hook_lock = threading.Lock()
_hook_installed = False


class Exchange:
    """The sockets one network read connects, and the cut that ends them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cut = False

    def run(self, read: Callable[[], T]) -> T:
        """`read()` in this thread, with every socket it connects noted; the duplicates
        are closed when it returns."""
        _install_hook()
        _running.exchange = self
        try:
            return read()
        finally:
            _running.exchange = None
            # Under the lock, as the cut is: a duplicate closed while the cut shuts it
            # down could have its descriptor number reused by another connection.
            with self._lock:
                for duplicate in self._sockets:
                    duplicate.close()
                self._sockets = []

    def cut(self) -> None:
        """Shut down every socket of the exchange, and refuse any it connects later."""
        with self._lock:  # neither shutdown nor close blocks
            self._cut = True
            for duplicate in self._sockets:
                _shut(duplicate)

    def _connecting(self, sock: socket.socket) -> None:
        with self._lock:
            if self._cut:
                raise TimeoutError("the deadline of this network read has passed")
            # Raises OSError (no descriptor left, say): the connect fails rather than
            # run without a deadline.
            self._sockets.append(sock.dup())


def _shut(duplicate: socket.socket) -> None:
    # Shutting down the connection (not closing a descriptor) wakes the thread blocked
    # in a read on it; a socket still connecting has nothing to shut down yet, and its
    # connect timeout ends at the deadline anyway.
    with contextlib.suppress(OSError):
        duplicate.shutdown(socket.SHUT_RDWR)


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect":
        return
    exchange = getattr(_running, "exchange", None)
    if exchange is not None and isinstance(args[0], socket.socket):
        exchange._connecting(args[0])


def _install_hook() -> None:
    """Install the audit hook once per process (hooks cannot be removed; outside an
    exchange it only compares one string)."""
    global _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_on_audit)
            _hook_installed = True
