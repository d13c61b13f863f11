"""Requests a hostile visitor may send: made-up methods, cross-site writes, framing."""

from __future__ import annotations

import random
import string

from prometheus_client.parser import text_string_to_metric_families

from app.observability import STANDARD_METHODS

PATHS = ("/", "/api/render", "/no/such/page")


def random_methods(count: int, seed: int) -> list[str]:
    """Made-up HTTP methods (upper case letters, as gunicorn lets through)."""
    rng = random.Random(seed)
    return ["".join(rng.choices(string.ascii_uppercase, k=10)) for _ in range(count)]


def metric_series(server) -> tuple[str, int]:
    """The /metrics text and how many samples it holds."""
    status, _, body = server.send("GET", "/metrics")
    assert status == 200
    text = body.decode()
    return text, sum(len(family.samples) for family in text_string_to_metric_families(text))


def send_methods(server, methods: list[str]) -> None:
    for index, method in enumerate(methods):
        status, _, _ = server.send(method, PATHS[index % len(PATHS)])
        assert status in (404, 405), (method, status)


def test_made_up_methods_do_not_add_metric_series(live_server):
    send_methods(live_server, random_methods(30, seed=1))
    metric_series(live_server)  # the scrape itself is counted once, from now on
    _, series_before = metric_series(live_server)
    later = random_methods(120, seed=2)
    send_methods(live_server, later)
    text, series_after = metric_series(live_server)

    assert series_after == series_before, "each made-up method added series to /metrics"
    assert not [method for method in later if method in text]
    methods = {
        sample.labels["method"]
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if "method" in sample.labels
    }
    assert "other" in methods
    assert methods <= STANDARD_METHODS | {"other"}
