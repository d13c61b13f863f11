"""A sandbox pool that cannot run a task at all (its workers die as they start, pebble
gives up) is the service's fault, not the client's, and temporary: 503 with Retry-After
and a sentence saying so, never a 500."""

from __future__ import annotations

from app.pool import PoolUnavailable, WorkerPool

BODY = {"template": "{{ messages[0].content }}", "messages": [{"role": "user", "content": "Hi"}]}


def test_a_pool_that_cannot_start_answers_503(client, monkeypatch):
    def never(self, payload, ahead):
        raise PoolUnavailable("All workers expired")

    monkeypatch.setattr(WorkerPool, "_wait", never)
    response = client.post("/api/render", json=BODY)
    assert response.status_code == 503
    assert response.headers["Retry-After"]
    error = response.get_json()["error"]
    assert error["type"] == "WorkersUnavailable"
    assert "workers" in error["message"] and "try again" in error["message"]
