"""What remote sources share: their typed errors, the time and byte budget of one load,
the bounded threads that do the network reads, and the growing read of a GGUF header.

A remote read waits on someone else's server, so it never runs in the request thread:
`Fetchers` runs it in one of a few threads per web process and the request waits at
most what is left of its time budget, then answers 504 and shuts the read's sockets down
(`app.sources.deadline`), so the thread is free again at once. Parsing stays in the
request thread, which hands it to a source worker as uploads do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as WaitTimeout
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from app.errors import ApiError
from app.sources.deadline import Exchange
from app.sources.gguf import IncompleteHeader

T = TypeVar("T")

#: What a refused remote load is asked to wait (Retry-After): a load takes seconds.
BUSY_RETRY_SECONDS = 5
#: Seconds a request whose read was cut at its deadline waits for the read's thread to
#: finish before it answers 504.
CUT_GRACE_SECONDS = 1.0
#: The first bytes of a GGUF file read: most headers fit (a 150k-token vocabulary takes
#: about 3 MiB); a longer one asks for more (`need_bytes`).
FIRST_GGUF_BYTES = 4 << 20


@dataclass
class RemoteError(ApiError):
    """A remote source that cannot be read, typed: `NotFound` (404), `Forbidden` (403),
    `TooLarge` (413), `RateLimited` (429, the Hub's own), `Timeout` (504), `Unreachable`
    and `BadAnswer` (502), `Refused` (400: an address or URL the rules do not allow)."""

    type: str
    message: str
    status: int = 502
    fields: dict[str, Any] = field(default_factory=dict)
    retry_after: int | None = None

    title: ClassVar[str] = "Cannot read the remote source"

    def __post_init__(self) -> None:
        if self.retry_after is not None:
            self.headers = {"Retry-After": str(self.retry_after)}

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message, **self.fields}


class Budget:
    """What one remote load may spend: seconds until its deadline, bytes transferred."""

    def __init__(self, seconds: float, max_bytes: int, where: str) -> None:
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.transferred = 0
        #: Named in a timeout's message: the endpoint or the host.
        self.where = where

    def remaining(self) -> float:
        """Seconds left; raises the 504 when none are."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.timeout()
        return left

    def timeout(self) -> RemoteError:
        return RemoteError(
            "Timeout",
            f"{self.where} did not answer within {self.seconds:g} s (PLAYGROUND_FETCH_SECONDS).",
            504,
            {"limit": "fetch_seconds"},
        )

    def bytes_left(self) -> int:
        return self.max_bytes - self.transferred

    def count(self, size: int) -> None:
        """Note `size` more bytes received; raises 413 past the cap."""
        self.transferred += size
        if self.transferred > self.max_bytes:
            raise too_large(f"Reading it took more than {self.max_bytes:,} bytes", self.max_bytes)


def too_large(what: str, max_bytes: int) -> RemoteError:
    """The 413 of a remote read over `PLAYGROUND_UPLOAD_MB`."""
    return RemoteError(
        "TooLarge",
        f"{what}: at most {max_bytes:,} bytes are read (PLAYGROUND_UPLOAD_MB).",
        413,
        {"limit": "upload_mb", "max_bytes": max_bytes},
    )


def rate_limited(where: str, retry_after: str, limit: str) -> RemoteError:
    """The 429 of a server that limits how fast we read (its `Retry-After`, else 60 s)."""
    return RemoteError(
        "RateLimited",
        f"{where} is limiting how fast this server reads from it; try again later.",
        429,
        {"limit": limit},
        retry_after=int(retry_after) if retry_after.isdigit() else 60,
    )


class Fetchers:
    """A few threads per web process that do network reads; a request waits for its read
    only until its deadline, and finds every thread busy answered at once (503)."""

    def __init__(self, threads: int) -> None:
        self._pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="remote-source")
        self._free = threading.BoundedSemaphore(max(1, threads))

    def run(self, budget: Budget, read: Callable[[], T]) -> T:
        """`read()` in a fetch thread; its answer, its error, or a 504 at the deadline."""
        if not self._free.acquire(blocking=False):
            raise RemoteError(
                "ServiceUnavailable",
                "Every thread that reads remote sources here is busy (PLAYGROUND_FETCHES); "
                "try again in a few seconds.",
                503,
                {"limit": "fetches"},
                retry_after=BUSY_RETRY_SECONDS,
            )
        exchange = Exchange()
        try:
            future = self._pool.submit(exchange.run, read)
        except BaseException:
            self._free.release()
            raise
        future.add_done_callback(lambda _: self._free.release())
        try:
            return future.result(timeout=max(0.0, budget.deadline - time.monotonic()))
        except WaitTimeout:
            # The deadline: the read's sockets are shut down, so its thread is free now,
            # not when the remote server stops sending.
            future.cancel()
            exchange.cut()
            # A cut read unwinds in milliseconds: answer once its thread is free, so that
            # the next request finds it free (unless it is stuck in a DNS lookup).
            wait_for([future], timeout=CUT_GRACE_SECONDS)
            raise budget.timeout() from None

    def close(self) -> None:
        """Stop taking reads (running ones end on their own timeouts)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def grow_header(
    read_more: Callable[[int, int], bytes],
    parse: Callable[[bytes], T | IncompleteHeader],
    *,
    file_size: int | None,
    max_bytes: int,
) -> T:
    """Read a GGUF header as the page uploads one: the first 4 MiB, then more whenever the
    parser asks (`need_bytes`, at least doubling), each time only the bytes not yet read
    (`read_more(start, end)`). Raises 413 when the header needs more than `max_bytes`."""
    end = min(FIRST_GGUF_BYTES, max_bytes, file_size or FIRST_GGUF_BYTES)
    prefix = read_more(0, end)
    while True:
        parsed = parse(prefix)
        if not isinstance(parsed, IncompleteHeader):
            return parsed
        if (file_size is not None and len(prefix) >= file_size) or len(prefix) < end:
            raise parsed  # the file ends inside its header: 409, as for an upload
        if len(prefix) >= max_bytes or parsed.need_bytes > max_bytes:
            raise too_large(f"The header needs at least {parsed.need_bytes:,} bytes", max_bytes)
        end = min(max(parsed.need_bytes, 2 * len(prefix)), max_bytes)
        if file_size is not None:
            end = min(end, file_size)
        prefix += read_more(len(prefix), end)


def take(chunks: Iterable[bytes], skip: int, size: int, budget: Budget) -> bytes:
    """`size` bytes after the first `skip` of a stream of chunks, each counted against the
    budget; the rest of the stream is left unread (the caller closes it)."""
    out = bytearray()
    for chunk in chunks:
        budget.count(len(chunk))
        budget.remaining()
        if skip:
            dropped = min(skip, len(chunk))
            chunk, skip = chunk[dropped:], skip - dropped
        out += chunk[: size - len(out)]
        if len(out) >= size:
            break
    return bytes(out)
