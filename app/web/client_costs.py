"""What each client's requests cost, and so what kind of client it is for admission.

Without Flask, like `slots.py`, which asks it. A client (an address, IPv6 by /64) is:

- *heavy* for `HEAVY_SECONDS` after a request that ran out of CPU time, memory or
  output, or cost more than `HEAVY_REQUEST_CPU_SECONDS`, or once its requests add up to
  more than `HEAVY_CLIENT_CPU_SECONDS` (each counting half as much every
  `COST_HALF_LIFE_SECONDS`);
- *light* after `LIGHT_AFTER_REQUESTS` cheap requests (each under `LIGHT_CPU_SECONDS`),
  for `LIGHT_SECONDS`, unless one in the last `HEAVY_SECONDS` cost more;
- neither: new, or in between.

A request's cost is the CPU time its sandbox and source workers and its own thread of the
web process spent on it: what it took from everyone else, whatever the load (a slow
answer alone says nothing: on a busy server every answer is slow).
"""

from __future__ import annotations

import time

from cachetools import TTLCache

#: How long a client stays heavy after its last request that ran out of budget, and how
#: long a request over `LIGHT_CPU_SECONDS` keeps its client from being light.
HEAVY_SECONDS = 60.0
#: How long a client stays light after its last cheap request (each web worker knows the
#: clients it served: a visitor who comes back after a pause is still known).
LIGHT_SECONDS = 600.0
#: Clients remembered per process in each table; past that the oldest are forgotten, so
#: many addresses cannot grow the tables without bound.
HEAVY_CLIENTS_KEPT = 4096
#: CPU seconds a request may use and leave its client light: rendering, reading or
#: tokenizing an ordinary conversation takes milliseconds.
LIGHT_CPU_SECONDS = 0.25
#: Cheap requests that make a client light: a visitor's page and first edits; an
#: address that sends a bomb now and then does not get there.
LIGHT_AFTER_REQUESTS = 3
#: CPU seconds of one request that make its client heavy: an ordinary render,
#: tokenizing or analysis takes milliseconds to a few tenths of a second.
HEAVY_REQUEST_CPU_SECONDS = 1.0
#: CPU seconds a client's requests may add up to before it is heavy: many requests that
#: cost a little each (a completion that six runtimes read, half a second) are one bomb.
HEAVY_CLIENT_CPU_SECONDS = 3.0
#: Time after which a request counts half as much towards that sum.
COST_HALF_LIFE_SECONDS = 30.0


class ClientCosts:
    """Heavy, light and the running sums of one web process's clients. Not thread-safe:
    the gate calls it holding its lock. `tracks_heavy`: whether clients may be heavy at
    all (no heavy-client rule when heavy clients may take every slot)."""

    def __init__(self, tracks_heavy: bool = True) -> None:
        self.tracks_heavy = tracks_heavy
        # Only `in` and `get` read them, which do not reorder: the least recently marked
        # is forgotten first.
        self._heavy: TTLCache[str, bool] = self._table(HEAVY_SECONDS)
        self._spent: TTLCache[str, bool] = self._table(HEAVY_SECONDS)
        self._cheap: TTLCache[str, int] = self._table(LIGHT_SECONDS)
        self._sums: TTLCache[str, tuple[float, float]] = self._table(LIGHT_SECONDS)

    @staticmethod
    def _table(seconds: float) -> TTLCache:
        return TTLCache(maxsize=HEAVY_CLIENTS_KEPT, ttl=seconds, timer=time.monotonic)

    def note(self, client: str, ran_out: bool, cpu: float) -> None:
        """What a request of `client` cost: `cpu` seconds; `ran_out` of a limit."""
        over = ran_out or cpu > HEAVY_REQUEST_CPU_SECONDS
        if self.tracks_heavy and (over or self._add(client, cpu) > HEAVY_CLIENT_CPU_SECONDS):
            self._heavy[client] = True
        if ran_out or cpu > LIGHT_CPU_SECONDS:
            self._spent[client] = True
            self._cheap.pop(client, None)
        else:
            self._cheap[client] = self._cheap.get(client, 0) + 1

    def is_heavy(self, client: str) -> bool:
        return client in self._heavy

    def is_light(self, client: str) -> bool:
        cheap = self._cheap.get(client, 0)
        return cheap >= LIGHT_AFTER_REQUESTS and client not in self._spent

    def _add(self, client: str, cpu: float) -> float:
        """The client's CPU seconds with this request's, the earlier ones halved every
        `COST_HALF_LIFE_SECONDS`."""
        now = time.monotonic()
        total, when = self._sums.get(client, (0.0, now))
        total = total * 0.5 ** ((now - when) / COST_HALF_LIFE_SECONDS) + cpu
        self._sums[client] = (total, now)
        return total
