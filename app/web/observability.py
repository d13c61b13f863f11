"""What the service tells its operators: one JSON access-log line per request, and metrics.

Metrics use prometheus_client. Under gunicorn every worker is a process of its own, so
gunicorn.conf.py points `PROMETHEUS_MULTIPROC_DIR` at a folder where each worker writes
its values, and `/metrics` adds them up; without that variable (tests, `flask run`) the
process's own registry is shown.

Only web processes import this module (`app.web.factory.create_app` does, lazily): the
sandbox workers never load prometheus_client or write metric files.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

from flask import Flask, Response, g, has_request_context, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from app.budget import OverLimit
from app.problems import TemplateProblem
from app.render.pool import SandboxPool
from app.sources.service import SourceWorkers
from app.storage import Database

T = TypeVar("T")

#: The limits a template can run into (`TemplateProblem.limit`), shown at 0 before any hit.
LIMIT_NAMES = (
    "cpu_seconds", "memory", "output_chars", "template_bytes", "recursion",
    "source_cpu_seconds", "source_memory_mb",
)  # fmt: skip

#: The logger of the access log: one JSON object per line, on stderr.
ACCESS_LOGGER = "playground.access"

REQUESTS = Counter(
    "playground_http_requests",
    "HTTP requests answered, by method, route and status.",
    ["method", "route", "status"],
)
REQUEST_SECONDS = Histogram(
    "playground_http_request_duration_seconds",
    "Time to answer an HTTP request, by method and route.",
    ["method", "route"],
)
RENDER_SECONDS = Histogram(
    "playground_render_duration_seconds",
    "Time of one task in a sandbox worker (a render, or an analysis probe), by task.",
    ["task"],
)
LIMIT_HITS = Counter(
    "playground_render_limit_hits",
    "Sandbox tasks stopped by a render limit, by limit name.",
    ["limit"],
)
SOURCE_CACHE = Counter(
    "playground_source_cache_lookups",
    "Lookups in the in-memory source cache, by result (hit or miss).",
    ["result"],
)

for _limit in LIMIT_NAMES:
    LIMIT_HITS.labels(_limit)
for _result in ("hit", "miss"):
    SOURCE_CACHE.labels(_result)

#: Routes for requests that matched none (404s), so that paths cannot multiply series.
UNMATCHED_ROUTE = "<unmatched>"

#: The methods of HTTP itself (RFC 9110, and PATCH); any other method a client invents is
#: counted as `OTHER_METHOD`, so that made-up methods cannot multiply series either.
STANDARD_METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"}
)
OTHER_METHOD = "other"


def method_label(method: str) -> str:
    """The `method` label of a request: its method if standard, else `other`."""
    return method if method in STANDARD_METHODS else OTHER_METHOD


def count_source_lookup(hit: bool) -> None:
    """The `SourceStore.on_lookup` hook: one memory-cache hit or miss."""
    SOURCE_CACHE.labels("hit" if hit else "miss").inc()


class MeasuredSandboxPool(SandboxPool):
    """A sandbox pool that measures each task, counts limit hits, and notes both in `g`.

    `g.render_ms` adds up the sandbox time of the request and `g.render_limit` keeps the
    first limit it hit; the access log reports them.
    """

    def run(self, function: Callable[..., T], *args: Any) -> T:
        started = time.perf_counter()
        limit = None
        try:
            return super().run(function, *args)
        except TemplateProblem as problem:
            limit = problem.limit
            raise
        finally:
            _note_task(_task_name(function), time.perf_counter() - started, limit)


# Both ways of rendering a prompt count as the "render" task: dashboards follow renders,
# not which of the two entry points the view used.
_RENDER_TASKS = frozenset({"render_in_worker", "render_exactly_in_worker"})


def _task_name(function: Callable[..., Any]) -> str:
    return "render" if function.__name__ in _RENDER_TASKS else function.__name__


class MeasuredSourceWorkers(SourceWorkers):
    """Source workers measured like the sandbox: each task's time by its name, limit hits
    counted, both noted in `g` (so admission counts a client whose upload or tokenizing
    ran out of budget as heavy)."""

    def _run(self, lane: Any, function: Callable[..., Any], *args: Any) -> Any:
        started = time.perf_counter()
        limit = None
        try:
            return super()._run(lane, function, *args)
        except OverLimit as error:
            limit = error.limit
            raise
        finally:
            _note_task(function.__name__, time.perf_counter() - started, limit)


def note_worker_cpu(cpu_seconds: float) -> None:
    """The pools' `on_cpu` hook: add up the worker CPU time of the request (`g.worker_cpu`)
    — what admission weighs a client by, since it does not grow with the server's load."""
    if has_request_context():
        g.worker_cpu = g.get("worker_cpu", 0.0) + cpu_seconds


def _note_task(task: str, elapsed: float, limit: str | None) -> None:
    RENDER_SECONDS.labels(task).observe(elapsed)
    if limit is not None:
        LIMIT_HITS.labels(limit).inc()
    if has_request_context():
        g.render_ms = g.get("render_ms", 0.0) + elapsed * 1000
        if limit is not None and g.get("render_limit") is None:
            g.render_limit = limit


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever `sys.stderr` is now (test runners swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def access_logger() -> logging.Logger:
    """The access logger, with its stderr handler installed once per process."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


def install(app: Flask) -> None:
    """Time every request, count it, and write its access-log line.

    Install before other `after_request` hooks: Flask runs them in reverse order, so this
    one sees the final response.
    """
    logger = access_logger()

    @app.before_request
    def start_clock() -> None:
        g.request_started = time.perf_counter()
        g.request_cpu_started = time.thread_time()

    @app.after_request
    def record(response: Response) -> Response:
        elapsed = time.perf_counter() - g.get("request_started", time.perf_counter())
        route = request.url_rule.rule if request.url_rule is not None else UNMATCHED_ROUTE
        method = method_label(request.method)
        REQUESTS.labels(method, route, str(response.status_code)).inc()
        REQUEST_SECONDS.labels(method, route).observe(elapsed)
        render_ms = g.get("render_ms")
        web_cpu = time.thread_time() - g.get("request_cpu_started", time.thread_time())
        line = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round(elapsed * 1000, 3),
            "render_ms": None if render_ms is None else round(render_ms, 3),
            "web_cpu_ms": round(web_cpu * 1000, 3),
            "worker_cpu_ms": round(g.get("worker_cpu", 0.0) * 1000, 3),
            "limit": g.get("render_limit") or g.get("admission_limit"),
        }
        logger.info(json.dumps(line))
        return response


class StorageCollector(Collector):
    """What the store holds, read from the database at each scrape: every replica sees
    the same numbers, which the storage caps (`PLAYGROUND_SOURCE_STORAGE_MB`,
    `PLAYGROUND_SHARE_STORAGE_MB`) are checked against."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def collect(self) -> Iterator[GaugeMetricFamily]:
        sources, shares = self.database.source_usage(), self.database.share_usage()
        yield _gauge("playground_stored_sources", "Sources stored.", sources.count)
        yield _gauge(
            "playground_stored_source_bytes", "Bytes of the stored sources.", sources.total_bytes
        )
        yield _gauge(
            "playground_stored_pinned_source_bytes",
            "Bytes of the stored sources that some share shows (never expired).",
            sources.pinned_bytes,
        )
        yield _gauge("playground_stored_shares", "Shares stored.", shares.count)
        yield _gauge(
            "playground_stored_share_bytes", "Bytes of the stored shares.", shares.total_bytes
        )


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


def exposition(database: Database) -> tuple[bytes, str]:
    """The metrics in Prometheus' text format, and their content type."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    # A registry of its own: the global one would keep the collector past this scrape.
    storage = CollectorRegistry()
    storage.register(StorageCollector(database))
    return generate_latest(registry) + generate_latest(storage), CONTENT_TYPE_LATEST
