"""The counting of admission, without Flask: the gate of expensive requests (slots, a
bounded queue, per-client limits, heavy clients) and the fetch slots of remote loads.

`app.web.admission` says which requests go through which, and why.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.budget import OverLimit
from app.sources.remote import BUSY_RETRY_SECONDS
from app.web.client_costs import ClientCosts

#: What a refusal asks the client to wait (Retry-After): a slot frees as soon as one
#: admitted request ends, and most end within a second.
RETRY_AFTER_SECONDS = 1


@dataclass(frozen=True)
class Ticket:
    """An admitted request: who sent it, and whether as a heavy client."""

    client: str
    heavy: bool
    #: The client was known when admitted: its tasks keep the sandbox's own priority.
    known: bool = False


@dataclass
class _Waiter:
    """A request waiting for a slot; `granted` is set when a leaving request hands it one."""

    client: str
    known: bool
    granted: threading.Event = field(default_factory=threading.Event)
    #: Woken up without a slot: a known client took its place in a full queue.
    refused: bool = False


class Gate:
    """The expensive requests of one web process: admitted, waiting, and by client.

    Thread-safe. Clients are heavy, known or new, by what their requests cost
    (`client_costs.py`). `known_slots` of the slots are kept for known clients, and known
    clients' waiting requests go before new ones'; otherwise a freed slot passes
    straight to the oldest waiter, so a newcomer never jumps the queue.
    """

    def __init__(
        self,
        *,
        slots: int,
        queue: int,
        queue_seconds: float,
        per_client: int,
        heavy_slots: int,
        known_slots: int = 0,
    ) -> None:
        self.slots = slots
        self.queue = queue
        self.queue_seconds = queue_seconds
        self.per_client = per_client  # 0: no per-client limit
        self.heavy_slots = heavy_slots
        self.known_slots = known_slots
        self.tracks_heavy = heavy_slots < slots  # all slots: every client is treated alike
        self._lock = threading.Lock()
        self._admitted = 0
        self._admitted_heavy = 0
        self._waiters: deque[_Waiter] = deque()
        self._clients: Counter[str] = Counter()
        self._costs = ClientCosts(self.tracks_heavy)

    def enter(self, client: str) -> Ticket:
        """Take a slot for `client`, waiting for one if it may and the queue has room.

        Raises `OverLimit`: 429 when the client is at its limit, 503 when the slots a
        heavy client may use are busy, the queue is full, or no slot came free in time.
        """
        with self._lock:
            if self.per_client and self._clients[client] >= self.per_client:
                raise self._client_limit()
            known = self._is_known(client)
            if self.tracks_heavy and self._is_heavy(client):
                if not self._room(known=False) or self._waiters:
                    raise self._heavy_limit()
                if self._admitted_heavy >= self.heavy_slots:
                    raise self._heavy_limit()
                return self._admit(client, heavy=True)
            if self._room(known) and not self._ahead_of(known):
                return self._admit(client, heavy=False, known=known)
            if len(self._waiters) >= self.queue and not (known and self._make_room()):
                raise self._queue_full()
            waiter = _Waiter(client, known)
            self._waiters.append(waiter)
            self._clients[client] += 1
        if waiter.granted.wait(self.queue_seconds):
            return self._granted(waiter)
        with self._lock:
            if waiter.granted.is_set():  # handed a slot just as the wait ran out
                return self._granted(waiter)
            self._waiters.remove(waiter)
            self._forget(client)
        raise self._waited_too_long()

    def _granted(self, waiter: _Waiter) -> Ticket:
        """A waiter woken up: admitted, or refused to make room for a known client."""
        if waiter.refused:
            raise self._queue_full()
        return Ticket(waiter.client, heavy=False, known=waiter.known)

    def _make_room(self) -> bool:
        """Refuse the newest waiter that is not known, so that a known client may wait in
        its place (it would go before it anyway); False when every waiter is known.
        Called holding the lock."""
        for waiter in reversed(self._waiters):
            if not waiter.known:
                self._waiters.remove(waiter)
                self._forget(waiter.client)
                waiter.refused = True
                waiter.granted.set()
                return True
        return False

    def leave(self, ticket: Ticket, ran_out: bool = False, cpu: float = 0.0) -> None:
        """Give back a slot; waiters get it, known ones first. What the request cost
        (`cpu`: the CPU seconds its worker processes and the web process spent on it;
        `ran_out`: it ran out of CPU time, memory or output) says what its client is:
        heavy, known or new (`ClientCosts`)."""
        with self._lock:
            self._forget(ticket.client)
            if ticket.heavy:
                self._admitted_heavy -= 1
            self._costs.note(ticket.client, ran_out, cpu)
            self._admitted -= 1
            self._dispatch()

    def counts(self) -> tuple[int, int]:
        """Requests admitted and waiting now."""
        with self._lock:
            return self._admitted, len(self._waiters)

    def _room(self, known: bool) -> bool:
        """Whether a slot this kind of client may take is free (the kept ones are only
        for known clients)."""
        kept = 0 if known else self.known_slots
        return self._admitted < self.slots - kept

    def _ahead_of(self, known: bool) -> bool:
        """Whether requests wait that go before a new one of this kind."""
        return any(w.known for w in self._waiters) if known else bool(self._waiters)

    def _dispatch(self) -> None:
        """Hand free slots to waiters: the oldest known one first, then the oldest of the
        rest, each while a slot it may take is free. Called holding the lock."""
        while self._waiters:
            waiter = next((w for w in self._waiters if w.known), self._waiters[0])
            if not self._room(waiter.known):
                return
            self._waiters.remove(waiter)
            self._admitted += 1  # counted for the waiter, which wakes up admitted
            waiter.granted.set()

    def _admit(self, client: str, heavy: bool, known: bool = False) -> Ticket:
        self._admitted += 1
        self._admitted_heavy += heavy
        self._clients[client] += 1
        return Ticket(client, heavy, known)

    def _forget(self, client: str) -> None:
        self._clients[client] -= 1
        if self._clients[client] <= 0:
            del self._clients[client]  # keys of past clients must not pile up

    def _is_heavy(self, client: str) -> bool:
        return self._costs.is_heavy(client)

    def _is_known(self, client: str) -> bool:
        return self._costs.is_known(client)

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
    known = int(config["KNOWN_SLOTS"])
    if known < 0:
        raise ValueError(f"PLAYGROUND_KNOWN_SLOTS={known} is out of range (at least 0).")
    return Gate(
        slots=slots,
        queue=int(config["QUEUE"]),
        queue_seconds=float(config["QUEUE_SECONDS"]),
        per_client=int(config["CLIENT_CONCURRENCY"]),
        heavy_slots=min(heavy, slots),
        # One slot at least stays open to everyone: a new client has to get in.
        known_slots=min(known, slots - 1),
    )


def fetch_slots_from_config(config: Mapping[str, Any]) -> FetchSlots:
    """The fetch slots a Flask config describes; a value out of range names its variable."""
    for key, low in {"FETCHES": 1, "CLIENT_FETCHES": 0}.items():
        if int(config[key]) < low:
            raise ValueError(f"PLAYGROUND_{key}={config[key]} is out of range (at least {low}).")
    return FetchSlots(int(config["FETCHES"]), int(config["CLIENT_FETCHES"]))


def _loads(count: int) -> str:
    return "a remote load" if count == 1 else f"{count} remote loads"
