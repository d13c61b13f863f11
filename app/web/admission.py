"""Admission: capacity kept for everyone while some clients send expensive requests.

An expensive request (one that renders, tokenizes, analyses, diffs, stores a share or
reads an upload) holds a request thread, and a sandbox process while it renders. Each
web process admits at most `PLAYGROUND_THREADS` at once, one per sandbox process, so
none waits for a sandbox. Up to `PLAYGROUND_QUEUE` more wait for a slot, first come
first served, for at most `PLAYGROUND_QUEUE_SECONDS`; beyond that, a refusal at once.

Fairness, by client (`client_key()`: the address, IPv6 by /64):

- a client has at most `PLAYGROUND_CLIENT_CONCURRENCY` expensive requests admitted or
  waiting; more get 429 at once;
- a *heavy* client (`client_costs.py`: its requests cost much CPU time, or ran out of a
  limit) never waits, and heavy clients together get at most `PLAYGROUND_HEAVY_SLOTS`
  slots: many addresses that keep sending bombs, huge uploads or megabytes to tokenize
  leave the other slots to everyone else;
- a *known* client (three of its requests answered, and not heavy) may take the
  `PLAYGROUND_KNOWN_SLOTS` kept for such clients, and its waiting requests go first; its
  tasks keep the sandbox's priority, where a new or heavy client's start at the lowest
  (`app.pool.lowest_priority`).

Remote loads (a Hub repository, a GGUF URL) wait on someone else's server, so they hold
no slot while they read: they take one of `PLAYGROUND_FETCHES` fetch slots, at most
`PLAYGROUND_CLIENT_FETCHES` per client, and never wait for one. Only their parse (in a
source worker) takes a slot, for as long as it runs (`sandbox_slot`). A slow server thus
costs fetch slots, never the sandboxes that renders need.

gunicorn runs `PLAYGROUND_RESERVED_THREADS` more request threads than admitted, waiting
and fetching requests can hold, so health checks, static files, stored shares, the
library and the refusals themselves always find a thread. A refusal is an `OverLimit`
with `Retry-After` naming its limit; nothing waits longer than the queue allows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, current_app, g, request

from app.budget import OverLimit
from app.pool import lowest_priority
from app.web.clients import client_key
from app.web.slots import Gate, Ticket, fetch_slots_from_config, gate_from_config

#: Limits that mean a request spent its whole budget (a recursion error or an oversized
#: template fails fast and costs little): a render's, or a source worker's.
COSTLY_LIMITS = frozenset(
    {"cpu_seconds", "memory", "output_chars", "source_cpu_seconds", "source_memory_mb"}
)

#: Endpoints that never render, tokenize, analyse or parse an upload: they only read the
#: library, stored shares and sources, or the documentation (rendered once per process),
#: or echo the body. Every other endpoint is expensive, so a new route is counted until
#: it is listed here.
CHEAP_ENDPOINTS = frozenset(
    {
        "static",
        "api.healthz",
        "api.engines",
        "metrics.metrics",
        "library.list_entries",
        "library.show_entry",
        "shares.show_share",
        "page.download_template",
        "docs.page",
    }
)

#: Endpoints that read from the network on the visitor's behalf: they take a fetch slot,
#: and a sandbox slot only while they parse what they read.
REMOTE_ENDPOINTS = frozenset({"remote.load_hub", "remote.load_url", "remote.load_ollama"})


def is_expensive() -> bool:
    """Whether this request may render, tokenize, analyse or parse an upload.

    Unmatched URLs (404, 405) and automatic OPTIONS answers run no view at all.
    """
    if request.endpoint is None or request.method == "OPTIONS":
        return False
    return request.endpoint not in CHEAP_ENDPOINTS


def _ran_out() -> bool:
    """Whether what this request ran so far ran out of a limit that means it spent its
    whole budget."""
    return g.get("render_limit") in COSTLY_LIMITS


def _cost() -> float:
    """The CPU seconds this request cost so far: its worker processes' and this thread's
    in the web process (parsing a body, pickling tasks, writing the answer)."""
    web = time.thread_time() - g.get("request_cpu_started", time.thread_time())
    return g.get("worker_cpu", 0.0) + web


def _enter(gate: Gate) -> Ticket:
    try:
        return gate.enter(client_key())
    except OverLimit as refused:
        g.admission_limit = refused.limit
        raise


@contextmanager
def sandbox_slot() -> Iterator[None]:
    """A slot for the expensive part of a remote load (parsing what it read), held only
    while that part runs; refused as any expensive request would be."""
    gate: Gate = current_app.extensions["admission"]
    ticket = _enter(gate)
    priority = lowest_priority.set(not ticket.known)
    try:
        yield
    finally:
        lowest_priority.reset(priority)
        gate.leave(ticket, ran_out=_ran_out(), cpu=_cost())


def register(app: Flask) -> None:
    """Admit or refuse every expensive request before its view runs; free its slot after.

    Register after the access log's clock starts, so that its `duration_ms` includes
    the wait; a refusal's limit is logged as `limit` (`g.admission_limit`).
    """
    gate = gate_from_config(app.config)
    fetches = fetch_slots_from_config(app.config)
    app.extensions["admission"] = gate
    app.extensions["fetch_slots"] = fetches

    @app.before_request
    def admit() -> None:
        if not is_expensive():
            return
        if request.endpoint in REMOTE_ENDPOINTS:
            client = client_key()
            try:
                fetches.enter(client)
            except OverLimit as refused:
                g.admission_limit = refused.limit
                raise
            g.fetch_client = client
            return
        g.admission_ticket = _enter(gate)
        # The request's sandbox tasks: at the sandbox's priority only for a known client.
        g.priority_token = lowest_priority.set(not g.admission_ticket.known)

    @app.teardown_request
    def release(_: BaseException | None) -> None:
        if (priority := g.pop("priority_token", None)) is not None:
            lowest_priority.reset(priority)
        ticket = g.pop("admission_ticket", None)
        if ticket is not None:
            gate.leave(ticket, ran_out=_ran_out(), cpu=_cost())
        client = g.pop("fetch_client", None)
        if client is not None:
            fetches.leave(client)
