"""What each client's requests cost, and so what kind of client it is for admission.

Without Flask, like `slots.py`, which asks it. A client (an address, IPv6 by /64) is:

- *heavy* for `HEAVY_SECONDS` after a request that ran out of CPU time, memory or
  output, or cost more than `HEAVY_REQUEST_CPU_SECONDS`, or once its requests add up to
  more than `HEAVY_CLIENT_CPU_SECONDS` (each counting half as much every
  `COST_HALF_LIFE_SECONDS`);
- *known* once `KNOWN_AFTER_REQUESTS` of its requests were answered here in the last
  `KNOWN_SECONDS`, while it is not heavy and its requests cost at most
  `KNOWN_REQUEST_CPU_SECONDS` on average (counted as the sum is): a visitor, whose edits
  render in milliseconds and whose analyses now and then cost more, after its page and
  first edits; not an address that sends readings of a tenth of a second, one after
  the other;
- neither: new (and so, perhaps, the next of many addresses sending their first bombs).

A request's cost is the CPU time its sandbox and source workers and its own thread of the
web process spent on it: what it took from everyone else, whatever the load (a slow
answer alone says nothing: on a busy server every answer is slow).
"""

from __future__ import annotations

import time

from cachetools import TTLCache

#: How long a client stays heavy after the request that made it so.
HEAVY_SECONDS = 60.0
#: How long a client stays known after its last answered request (each web worker knows
#: the clients it served: a visitor who comes back after a pause is still known).
KNOWN_SECONDS = 600.0
#: Answered requests that make a client known.
KNOWN_AFTER_REQUESTS = 3
#: Clients remembered per process in each table; past that the oldest are forgotten, so
#: many addresses cannot grow the tables without bound.
HEAVY_CLIENTS_KEPT = 4096
#: CPU seconds of one request that make its client heavy: an ordinary render,
#: tokenizing or analysis takes milliseconds to a few tenths of a second.
HEAVY_REQUEST_CPU_SECONDS = 1.0
#: CPU seconds a client's requests may add up to before it is heavy: many requests that
#: cost a little each (a completion that six runtimes read, half a second) are one bomb.
HEAVY_CLIENT_CPU_SECONDS = 3.0
#: Time after which a request counts half as much towards that sum.
COST_HALF_LIFE_SECONDS = 30.0
#: What a known client's requests may cost on average: renders take a few milliseconds,
#: an analysis a few tenths of a second; a completion that six runtimes read, 0.13 s.
KNOWN_REQUEST_CPU_SECONDS = 0.05


class ClientCosts:
    """Heavy and known clients of one web process, and what their requests add up to.
    Not thread-safe: the gate calls it holding its lock. `tracks_heavy`: whether clients
    may be heavy at all (no heavy-client rule when heavy clients may take every slot)."""

    def __init__(self, tracks_heavy: bool = True) -> None:
        self.tracks_heavy = tracks_heavy
        # Only `in` and `get` read them, which do not reorder: the least recently marked
        # is forgotten first.
        self._heavy: TTLCache[str, bool] = self._table(HEAVY_SECONDS)
        self._answered: TTLCache[str, int] = self._table(KNOWN_SECONDS)
        # CPU seconds and requests, each decaying, and when they were last added to.
        self._sums: TTLCache[str, tuple[float, float, float]] = self._table(KNOWN_SECONDS)

    @staticmethod
    def _table(seconds: float) -> TTLCache:
        return TTLCache(maxsize=HEAVY_CLIENTS_KEPT, ttl=seconds, timer=time.monotonic)

    def note(self, client: str, ran_out: bool, cpu: float) -> None:
        """What a request of `client` cost: `cpu` seconds; `ran_out` of a limit."""
        self._answered[client] = self._answered.get(client, 0) + 1
        over = ran_out or cpu > HEAVY_REQUEST_CPU_SECONDS
        if self.tracks_heavy and (over or self._add(client, cpu) > HEAVY_CLIENT_CPU_SECONDS):
            self._heavy[client] = True

    def is_heavy(self, client: str) -> bool:
        return client in self._heavy

    def is_known(self, client: str) -> bool:
        if self._answered.get(client, 0) < KNOWN_AFTER_REQUESTS or client in self._heavy:
            return False
        seconds, requests = self._decayed(client)
        return seconds <= KNOWN_REQUEST_CPU_SECONDS * requests

    def _decayed(self, client: str) -> tuple[float, float]:
        """The client's CPU seconds and requests, each halved every
        `COST_HALF_LIFE_SECONDS`."""
        seconds, requests, when = self._sums.get(client, (0.0, 0.0, 0.0))
        kept = 0.5 ** ((time.monotonic() - when) / COST_HALF_LIFE_SECONDS)
        return seconds * kept, requests * kept

    def _add(self, client: str, cpu: float) -> float:
        """The client's decayed CPU seconds with this request's."""
        seconds, requests = self._decayed(client)
        self._sums[client] = (seconds + cpu, requests + 1, time.monotonic())
        return seconds + cpu
