"""The counting of admission, without Flask: the gate of expensive requests (slots, a
bounded queue, per-client limits, heavy clients) and the fetch slots of remote loads.

`app.web.admission` says which requests go through which, and why.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cachetools import TTLCache

from app.budget import OverLimit
from app.sources.remote import BUSY_RETRY_SECONDS

#: What a refusal asks the client to wait (Retry-After): a slot frees as soon as one
#: admitted request ends, and most end within a second.
RETRY_AFTER_SECONDS = 1
#: How long a client stays heavy after its last request that ran out of budget.
HEAVY_SECONDS = 60.0
#: Heavy clients remembered per process; past that the oldest are forgotten, so many
#: addresses cannot grow the table without bound.
HEAVY_CLIENTS_KEPT = 4096


@dataclass(frozen=True)
class Ticket:
    """An admitted request: who sent it, and whether as a heavy client."""

    client: str
    heavy: bool


@dataclass
class _Waiter:
    """A request waiting for a slot; `granted` is set when a leaving request hands it one."""

    client: str
    granted: threading.Event = field(default_factory=threading.Event)


class Gate:
    """The expensive requests of one web process: admitted, waiting, and by client.

    Thread-safe. A slot freed while requests wait passes straight to the oldest waiter,
    so a newcomer never jumps the queue.
    """

    def __init__(
        self,
        *,
        slots: int,
        queue: int,
        queue_seconds: float,
        per_client: int,
        heavy_slots: int,
    ) -> None:
        self.slots = slots
        self.queue = queue
        self.queue_seconds = queue_seconds
        self.per_client = per_client  # 0: no per-client limit
        self.heavy_slots = heavy_slots
        self.tracks_heavy = heavy_slots < slots  # all slots: every client is treated alike
        self._lock = threading.Lock()
        self._admitted = 0
        self._admitted_heavy = 0
        self._waiters: deque[_Waiter] = deque()
        self._clients: Counter[str] = Counter()
        # Heavy clients, each for HEAVY_SECONDS after its last costly request; past
        # HEAVY_CLIENTS_KEPT the least recently marked is forgotten (only `in` reads it,
        # which does not reorder).
        self._heavy: TTLCache[str, bool] = TTLCache(
            maxsize=HEAVY_CLIENTS_KEPT, ttl=HEAVY_SECONDS, timer=time.monotonic
        )

    def enter(self, client: str) -> Ticket:
        """Take a slot for `client`, waiting for one if it may and the queue has room.

        Raises `OverLimit`: 429 when the client is at its limit, 503 when the slots a
        heavy client may use are busy, the queue is full, or no slot came free in time.
        """
        with self._lock:
            if self.per_client and self._clients[client] >= self.per_client:
                raise self._client_limit()
            free = self._admitted < self.slots and not self._waiters
            if self.tracks_heavy and self._is_heavy(client):
                if not free or self._admitted_heavy >= self.heavy_slots:
                    raise self._heavy_limit()
                return self._admit(client, heavy=True)
            if free:
                return self._admit(client, heavy=False)
            if len(self._waiters) >= self.queue:
                raise self._queue_full()
            waiter = _Waiter(client)
            self._waiters.append(waiter)
            self._clients[client] += 1
        if waiter.granted.wait(self.queue_seconds):
            return Ticket(client, heavy=False)
        with self._lock:
            if waiter.granted.is_set():  # handed a slot just as the wait ran out
                return Ticket(client, heavy=False)
            self._waiters.remove(waiter)
            self._forget(client)
        raise self._waited_too_long()

    def leave(self, ticket: Ticket, ran_out: bool = False) -> None:
        """Give back a slot; the oldest waiter gets it. A request that cost a lot
        (`ran_out`: it used much CPU time, or ran out of CPU time, memory or output)
        makes its client heavy."""
        with self._lock:
            self._forget(ticket.client)
            if ticket.heavy:
                self._admitted_heavy -= 1
            if ran_out and self.tracks_heavy:
                self._mark_heavy(ticket.client)
            if self._waiters:
                self._waiters.popleft().granted.set()  # the slot passes on, still counted
            else:
                self._admitted -= 1

    def counts(self) -> tuple[int, int]:
        """Requests admitted and waiting now."""
        with self._lock:
            return self._admitted, len(self._waiters)

    def _admit(self, client: str, heavy: bool) -> Ticket:
        self._admitted += 1
        self._admitted_heavy += heavy
        self._clients[client] += 1
        return Ticket(client, heavy)

    def _forget(self, client: str) -> None:
        self._clients[client] -= 1
        if self._clients[client] <= 0:
            del self._clients[client]  # keys of past clients must not pile up

    def _is_heavy(self, client: str) -> bool:
        return client in self._heavy

    def _mark_heavy(self, client: str) -> None:
        self._heavy[client] = True

    def _client_limit(self) -> OverLimit:
        return _refusal(
            "client_concurrency",
            429,
            "TooManyRequests",
            f"You already have {self.per_client} requests running or waiting here that"
            " render, tokenize or read uploads (PLAYGROUND_CLIENT_CONCURRENCY).",
        )

    def _heavy_limit(self) -> OverLimit:
        return _refusal(
            "heavy_slots",
            503,
            "ServiceUnavailable",
            "One of your recent requests cost much CPU time or ran into a limit, so yours"
            f" may use only {self.heavy_slots} of the {self.slots} slots of this process,"
            " and none of those is free (PLAYGROUND_HEAVY_SLOTS keeps the others for other"
            " clients).",
        )

    def _queue_full(self) -> OverLimit:
        return _refusal(
            "queue",
            503,
            "ServiceUnavailable",
            f"The server is busy: all {self.slots} sandboxes of this process are in use"
            f" and {self.queue} requests already wait for one (PLAYGROUND_QUEUE).",
        )

    def _waited_too_long(self) -> OverLimit:
        return _refusal(
            "queue_seconds",
            503,
            "ServiceUnavailable",
            f"The server is busy: no sandbox came free within {self.queue_seconds:g} s"
            " (PLAYGROUND_QUEUE_SECONDS).",
        )


def _refusal(
    limit: str, status: int, kind: str, message: str, wait: int = RETRY_AFTER_SECONDS
) -> OverLimit:
    return OverLimit(
        limit,
        f"{message} Retry after {wait} s.",
        status=status,
        type=kind,
        fields={"retry_after": wait},
        headers={"Retry-After": str(wait)},
    )


class FetchSlots:
    """The remote loads of one web process: at most `slots` at once, `per_client` per
    client (0: no such limit). Nobody waits: a load is refused at once."""

    def __init__(self, slots: int, per_client: int) -> None:
        self.slots = slots
        self.per_client = per_client
        self._lock = threading.Lock()
        self._clients: Counter[str] = Counter()

    def enter(self, client: str) -> None:
        """Take a fetch slot for `client`; `OverLimit` 429 or 503 when there is none."""
        with self._lock:
            if self.per_client and self._clients[client] >= self.per_client:
                raise _refusal(
                    "client_fetches",
                    429,
                    "TooManyRequests",
                    f"You already have {_loads(self.per_client)} (Hub or URL) running here;"
                    " send the next once it has answered (PLAYGROUND_CLIENT_FETCHES).",
                    BUSY_RETRY_SECONDS,
                )
            if self._clients.total() >= self.slots:
                raise _refusal(
                    "fetches",
                    503,
                    "ServiceUnavailable",
                    f"All {self.slots} remote loads this process runs at once are under way"
                    " (PLAYGROUND_FETCHES).",
                    BUSY_RETRY_SECONDS,
                )
            self._clients[client] += 1

    def leave(self, client: str) -> None:
        with self._lock:
            self._clients[client] -= 1
            if self._clients[client] <= 0:
                del self._clients[client]


def gate_from_config(config: Mapping[str, Any]) -> Gate:
    """The gate a Flask config describes; a value out of range names its variable."""
    slots = int(config["THREADS"])
    lowest = {"THREADS": 1, "QUEUE": 0, "QUEUE_SECONDS": 0, "CLIENT_CONCURRENCY": 0}
    for key, low in lowest.items():
        if float(config[key]) < low:
            raise ValueError(f"PLAYGROUND_{key}={config[key]} is out of range (at least {low}).")
    heavy = int(config["HEAVY_SLOTS"])
    if heavy < 1:
        # Heavy clients need one slot at least, or one costly request would lock them out.
        raise ValueError(f"PLAYGROUND_HEAVY_SLOTS={heavy} is out of range (at least 1).")
    return Gate(
        slots=slots,
        queue=int(config["QUEUE"]),
        queue_seconds=float(config["QUEUE_SECONDS"]),
        per_client=int(config["CLIENT_CONCURRENCY"]),
        heavy_slots=min(heavy, slots),
    )


def fetch_slots_from_config(config: Mapping[str, Any]) -> FetchSlots:
    """The fetch slots a Flask config describes; a value out of range names its variable."""
    for key, low in {"FETCHES": 1, "CLIENT_FETCHES": 0}.items():
        if int(config[key]) < low:
            raise ValueError(f"PLAYGROUND_{key}={config[key]} is out of range (at least {low}).")
    return FetchSlots(int(config["FETCHES"]), int(config["CLIENT_FETCHES"]))


def _loads(count: int) -> str:
    return "a remote load" if count == 1 else f"{count} remote loads"
