"""The access log (one JSON line per request) and the Prometheus metrics at /metrics."""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.web.factory import create_app
from app.web.observability import ACCESS_LOGGER
from tests.support.server import start_gunicorn
from tests.support.shared_data import VOCAB_DIR, needs_shared

LLAMA_SPM = VOCAB_DIR / "ggml-vocab-llama-spm.gguf"
CPU_BOMB = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
HELLO = {"template": "{{ messages[0].content }}", "messages": [{"role": "user", "content": "Hi"}]}
FIELDS = {"method", "path", "status", "duration_ms", "render_ms", "limit"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """An application with a 1 s render limit, so that a CPU bomb is stopped quickly."""
    data = tmp_path_factory.mktemp("observability")
    application = create_app({"TESTING": True, "DATA_DIR": str(data), "CPU_SECONDS": 1})
    yield application
    application.extensions["sandbox_pool"].close()


class _Lines(logging.Handler):
    """Collects the access-log lines, each parsed as JSON (so each must be JSON)."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    @property
    def lines(self) -> list[dict]:
        return [json.loads(message) for message in self.messages]


@pytest.fixture()
def access_log() -> Iterator[_Lines]:
    """The access-log lines written during the test."""
    handler = _Lines()
    logger = logging.getLogger(ACCESS_LOGGER)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    """Every sample of a Prometheus text exposition, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def metric(client, name: str, **labels: str) -> float:
    text = client.get("/metrics").get_data(as_text=True)
    return samples(text).get((name, frozenset(labels.items())), 0.0)


def test_each_request_writes_one_json_line(client, access_log):
    assert client.get("/healthz").status_code == 200
    assert len(access_log.lines) == 1
    line = access_log.lines[-1]
    assert line.keys() >= FIELDS
    assert line["method"] == "GET"
    assert line["path"] == "/healthz"
    assert line["status"] == 200
    assert line["duration_ms"] >= 0
    assert line["render_ms"] is None
    assert line["limit"] is None


def test_unknown_paths_are_logged_too(client, access_log):
    assert client.get("/no/such/page").status_code == 404
    line = access_log.lines[-1]
    assert (line["status"], line["path"]) == (404, "/no/such/page")


def test_a_render_logs_its_render_time(client, access_log):
    response = client.post("/api/render", json=HELLO)
    assert response.status_code == 200
    line = access_log.lines[-1]
    assert (line["method"], line["path"], line["status"]) == ("POST", "/api/render", 200)
    assert 0 < line["render_ms"] <= line["duration_ms"]
    assert line["limit"] is None


def test_a_cpu_bomb_logs_its_limit_and_counts_it(client, access_log):
    before = metric(client, "playground_render_limit_hits_total", limit="cpu_seconds")
    response = client.post("/api/render", json={**HELLO, "template": CPU_BOMB})
    assert response.status_code == 422
    assert response.json["error"]["limit"] == "cpu_seconds"
    line = [line for line in access_log.lines if line["path"] == "/api/render"][-1]
    assert line["status"] == 422
    assert line["limit"] == "cpu_seconds"
    assert line["render_ms"] >= 1000
    after = metric(client, "playground_render_limit_hits_total", limit="cpu_seconds")
    assert after == before + 1


def test_metrics_parse_and_count_requests_and_renders(client):
    requests_before = metric(
        client, "playground_http_requests_total", method="POST", route="/api/render", status="200"
    )
    renders_before = metric(client, "playground_render_duration_seconds_count", task="render")
    assert client.post("/api/render", json=HELLO).status_code == 200

    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(response.get_data(as_text=True))}
    assert families["playground_http_requests"].type == "counter"
    assert families["playground_http_request_duration_seconds"].type == "histogram"
    assert families["playground_render_duration_seconds"].type == "histogram"
    assert families["playground_render_limit_hits"].type == "counter"
    assert families["playground_source_cache_lookups"].type == "counter"
    values = samples(response.get_data(as_text=True))
    key = frozenset({"method": "POST", "route": "/api/render", "status": "200"}.items())
    assert values[("playground_http_requests_total", key)] == requests_before + 1
    rendered = values[("playground_render_duration_seconds_count", frozenset({("task", "render")}))]
    assert rendered == renders_before + 1


def test_routes_not_paths_label_the_requests(client):
    client.get("/api/library/no-such-template")
    client.get("/definitely/not/a/route")
    text = client.get("/metrics").get_data(as_text=True)
    routes = {labels.get("route") for _, labels in _labelled(text)}
    assert "/api/library/<name>" in routes
    assert "<unmatched>" in routes
    assert "/definitely/not/a/route" not in routes


def _labelled(text: str) -> Iterator[tuple[str, dict]]:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, sample.labels


@needs_shared
def test_source_cache_counts_a_miss_then_a_hit(client):
    data = LLAMA_SPM.read_bytes()[: 16 * 1024 * 1024]
    name = "playground_source_cache_lookups_total"

    def lookups() -> tuple[float, float]:
        return metric(client, name, result="hit"), metric(client, name, result="miss")

    hits, misses = lookups()
    assert (
        client.post(
            "/api/sources/gguf?name=a.gguf", data=data, content_type="application/octet-stream"
        ).status_code
        == 200
    )
    assert lookups() == (hits, misses + 1)
    assert (
        client.post(
            "/api/sources/gguf?name=a.gguf", data=data, content_type="application/octet-stream"
        ).status_code
        == 200
    )
    assert lookups() == (hits + 1, misses + 1)


@needs_shared
def test_the_stored_gauges_follow_the_database(client):
    """Sources and shares in the store, read from the database at each scrape."""
    names = ("sources", "source_bytes", "pinned_source_bytes", "shares", "share_bytes")

    def stored() -> dict[str, float]:
        return {name: metric(client, f"playground_stored_{name}") for name in names}

    before = stored()
    data = (VOCAB_DIR / "ggml-vocab-phi-3.gguf").read_bytes()  # a source no other test loads
    loaded = client.post(
        "/api/sources/gguf?name=stored.gguf", data=data, content_type="application/octet-stream"
    )
    assert loaded.status_code == 200
    after_source = stored()
    grew = {name: after_source[name] - before[name] for name in names}
    # The store keeps the GGUF's header, not the whole file; no share shows it yet.
    assert grew["sources"] == 1 and 0 < grew["source_bytes"] <= len(data)
    assert grew["pinned_source_bytes"] == grew["shares"] == grew["share_bytes"] == 0

    state = {"template": "{{ messages }}", "messages": [{"role": "user", "content": "x" * 5000}]}
    state["source"] = {"id": loaded.get_json()["id"], "kind": "gguf"}
    shared = client.post("/api/shares", data=json.dumps(state), content_type="application/json")
    assert shared.status_code == 201, shared.get_json()
    after_share = stored()
    assert after_share["shares"] == after_source["shares"] + 1
    # Stored compressed: 5,000 repeated characters take far fewer bytes.
    assert 0 < after_share["share_bytes"] - after_source["share_bytes"] < 1000
    assert (
        after_share["pinned_source_bytes"] - after_source["pinned_source_bytes"]
        == (grew["source_bytes"])
    )


def _pids(folder: Path) -> set[str]:
    return {path.stem.rpartition("_")[2] for path in folder.glob("*.db")}


def test_gunicorn_workers_report_together(tmp_path):
    """Two workers, one /metrics: the counts of both, from prometheus_client's files."""
    folder = tmp_path / "metrics"
    folder.mkdir()
    (folder / "counter_1.db").write_bytes(b"left over from an earlier run")
    server = start_gunicorn(
        {
            "PLAYGROUND_WORKERS": "2",
            "PLAYGROUND_THREADS": "2",
            "PROMETHEUS_MULTIPROC_DIR": str(folder),
        }
    )
    try:
        assert not (folder / "counter_1.db").exists(), "stale metric files must be removed"
        for _ in range(20):
            assert server.get("/healthz") == 200
        deadline = time.monotonic() + 20
        while len(_pids(folder)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_pids(folder)) >= 2, "both workers write their metrics to the folder"

        with urllib.request.urlopen(server.url + "/metrics", timeout=10) as response:
            text = response.read().decode()
        healthz = sum(
            value
            for (name, labels), value in samples(text).items()
            if name == "playground_http_requests_total" and ("route", "/healthz") in labels
        )
        assert healthz >= 20
    finally:
        server.close()
