"""A sandbox pool that cannot run a task at all (its workers die as they start, pebble
gives up) is the service's fault, not the client's, and temporary: 503 with Retry-After
and a sentence saying so, never a 500."""

from __future__ import annotations

import operator
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.pool import PoolUnavailable, WorkerPool
from app.problems import TemplateProblem
from tests.support.pool_stubs import NeverAnswers

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


@pytest.mark.timing
def test_workers_that_die_as_they_start_make_the_pool_unavailable_not_broken():
    # Every worker aborts in its initializer: pebble gives up ("All workers expired") on
    # the first pool and on the one started again; the caller gets the 503's error.
    pool = WorkerPool(cpu_seconds=2, memory_bytes=256 << 20, workers=1, warm_up="os:abort")
    try:
        with pytest.raises(PoolUnavailable, match="expired"):
            pool.run(operator.add, 1, 2)
    finally:
        pool.close()


def test_a_task_queued_as_the_pool_breaks_is_pool_unavailable_not_a_timeout(monkeypatch):
    """pebble's loops stop when its workers die as they start; a task queued at that very
    moment is never picked up (a race that CI met: the test above then waited out the
    backstop and answered LimitExceeded)."""
    pool = WorkerPool(cpu_seconds=2, memory_bytes=256 << 20, workers=1)
    monkeypatch.setattr(pool, "_ensure_pool", lambda: NeverAnswers(active=False))
    with pytest.raises(PoolUnavailable, match="stopped"):
        pool.run(operator.add, 1, 2)


#: Started at nice 10 by a user who may not raise priority again (no CAP_SYS_NICE): what
#: a container does whose daemon was started under `nice`. The pool's workers must start
#: (at the lower priority they inherit) and run tasks.
NICED_SERVER = """
import operator, os
from app.pool import WorkerPool

if __name__ == "__main__":
    pool = WorkerPool(cpu_seconds=2, memory_bytes=256 << 20, workers=1)
    print(pool.run(operator.add, 1, 2), pool.run(os.getpriority, os.PRIO_PROCESS, 0))
    pool.close()
"""


def test_a_server_started_under_nice_without_privileges_still_starts_its_workers(tmp_path):
    script = tmp_path / "niced_server.py"
    script.write_text(NICED_SERVER)
    command = ["nice", "-n", "10", sys.executable, str(script)]
    if os.geteuid() == 0:  # root may raise priority: take that right away, as uid 10001 has
        command = ["setpriv", "--bounding-set=-sys_nice", *command]
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=60, cwd=Path(__file__).parent.parent
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    total, worker_nice = finished.stdout.split()
    assert total == "3"
    assert int(worker_nice) >= 10


# Found by bench/neighbours.py: when pebble stopped a task at the wall-clock backstop, its
# future held pebble's TimeoutError, which `future.result(timeout=...)` raises at once, as
# it raises its own "not yet": the caller took it for a slice of its wait and asked again,
# spinning until its own deadline two seconds later. Under attack each CPU bomb thus cost
# the web process 1.5 s of CPU with the GIL, and every other request waited behind it.
def test_a_task_stopped_at_the_backstop_costs_its_caller_no_cpu():
    pool = WorkerPool(cpu_seconds=0.1, memory_bytes=256 << 20, workers=1)
    try:
        started, cpu = time.monotonic(), time.thread_time()
        with pytest.raises(TemplateProblem) as problem:
            pool.run(time.sleep, 30)  # no CPU: only the wall-clock backstop stops it
        waited, spent = time.monotonic() - started, time.thread_time() - cpu
        assert problem.value.limit == "cpu_seconds"
        assert "ran for more than" in problem.value.message
        assert waited < pool.wall_seconds + 0.5 + 0.5  # no stuck grace waited out
        assert spent < 0.1
        assert pool.run(operator.add, 1, 2) == 3  # the pool goes on, its worker replaced
    finally:
        pool.close()
