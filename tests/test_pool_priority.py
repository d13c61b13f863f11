"""Whose sandbox work runs first: a known client's task, at the sandbox's own priority.

Sandbox workers run at nice 5, below the web process. A task for a client that is not
known (a new one, or a heavy one: admission says which) runs at
the lowest priority from its start, and any task that runs past a quarter of a second
drops there, so a bomb competes with nobody but other bombs. A worker comes back to its
own priority after such a task only with CAP_SYS_NICE or an RLIMIT_NICE that allows it
(Docker: `--ulimit nice=15`); without either, it never lowers a task at its start, which
would leave the worker low for good.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.pool import WorkerPool, guard, lowest_priority
from app.pool.guard import WORKER_NICE
from app.web.client_costs import KNOWN_AFTER_REQUESTS
from app.web.factory import create_app
from tests.support import UNLIMITED_WRITES

HELLO = {"template": "{{ messages[0].content }}", "messages": [{"role": "user", "content": "Hi"}]}


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def _priorities(pool: WorkerPool) -> list[int]:
    """The nice value of a task for a client that is not known, then of a known one's."""
    token = lowest_priority.set(True)
    try:
        low = pool.run(_nice)
    finally:
        lowest_priority.reset(token)
    return [low, pool.run(_nice)]


@pytest.mark.skipif(os.geteuid() != 0, reason="the worker needs CAP_SYS_NICE here")
def test_a_task_that_is_not_a_known_client_s_starts_at_the_lowest_priority():
    pool = WorkerPool(cpu_seconds=2, memory_bytes=256 << 20, workers=1)
    try:
        assert _priorities(pool) == [19, WORKER_NICE]
    finally:
        pool.close()


#: A pool in a process that may not raise priority (no CAP_SYS_NICE, as uid 10001 in the
#: image), with the RLIMIT_NICE the command line gives it: its tasks' priorities.
UNPRIVILEGED = """
import os, sys
from tests.test_pool_priority import _priorities
from app.pool import WorkerPool
if __name__ == "__main__":
    pool = WorkerPool(cpu_seconds=2, memory_bytes=256 << 20, workers=1)
    print(*_priorities(pool), *_priorities(pool))
    pool.close()
"""


def test_without_privileges_a_worker_never_starts_a_task_low(tmp_path):
    """Without CAP_SYS_NICE or RLIMIT_NICE, a worker that dropped for a task would stay
    low for every task after: the hint is not taken, and both tasks run at nice 5."""
    script = tmp_path / "unprivileged.py"
    script.write_text(UNPRIVILEGED)
    command = ["prlimit", "--nice=0", sys.executable, str(script)]
    if os.geteuid() == 0:  # root: drop CAP_SYS_NICE, as uid 10001 has none
        command = ["setpriv", "--bounding-set=-sys_nice", *command]
    repo = Path(__file__).parent.parent
    environment = {**os.environ, "PYTHONPATH": str(repo)}
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=60, cwd=repo, env=environment
    )
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert [int(n) for n in finished.stdout.split()] == [WORKER_NICE] * 4


@pytest.mark.parametrize(
    ("rlimit_nice", "capabilities", "comes_back"),
    [
        (15, "0000000000000000", True),  # docker run --ulimit nice=15
        (14, "0000000000000000", False),  # nice 6 at most
        (0, "0000000000800000", True),  # CAP_SYS_NICE
        (0, "000001fffe7fffff", False),  # every capability but that one
    ],
)
def test_what_lets_a_worker_come_back_to_nice_5(monkeypatch, rlimit_nice, capabilities, comes_back):
    monkeypatch.setattr(guard.resource, "getrlimit", lambda _: (rlimit_nice, rlimit_nice))
    status = f"Name:\tpython\nCapEff:\t{capabilities}\n"
    monkeypatch.setattr(guard, "open", lambda *_: io.StringIO(status), raising=False)
    assert guard.can_come_back_to(5) is comes_back


def test_admission_says_whose_tasks_start_low(tmp_path, monkeypatch):
    seen: list[bool] = []
    real = WorkerPool._wait

    def noting(self, payload, ahead):
        seen.append(lowest_priority.get())
        return real(self, payload, ahead)

    monkeypatch.setattr(WorkerPool, "_wait", noting)
    app = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), **UNLIMITED_WRITES})
    client = app.test_client()
    try:
        for _ in range(KNOWN_AFTER_REQUESTS + 1):
            assert client.post("/api/render", json=HELLO).status_code == 200
    finally:
        app.extensions["sandbox_pool"].close()
        app.extensions["source_workers"].close()
    # A new client's renders start low; once it is known, its tasks do not.
    assert seen == [True] * KNOWN_AFTER_REQUESTS + [False]
    assert lowest_priority.get() is False  # nothing left set after the requests


def test_the_server_says_when_its_workers_could_not_come_back(monkeypatch):
    monkeypatch.setattr(guard, "can_come_back_to", lambda nice: False)
    warning = guard.priority_warning()
    assert "--ulimit nice=15" in warning and "CAP_SYS_NICE" in warning
    monkeypatch.setattr(guard, "can_come_back_to", lambda nice: True)
    assert guard.priority_warning() is None
