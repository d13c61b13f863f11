"""Worker processes that run untrusted templates under time, memory and output limits.

Jinja's sandbox stops templates from reaching Python internals, but its documentation
says it does not limit CPU or memory: that is the caller's job. Each render runs in a
pebble worker process (see `worker.py` for the limits it sets on itself); a task that
overruns the wall-clock backstop is killed and pebble starts a fresh worker. The web
process never compiles or renders a user template itself.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

from app.render.chat import Rendered, RenderRequest
from app.render.limits import RenderLimits
from app.render.problems import TemplateProblem, limit_exceeded
from app.render.worker import CpuTimeExceeded, render_in_worker, run_guarded, start_worker

T = TypeVar("T")

#: Seconds granted on top of the render limit for pickling the answer back.
TRANSFER_GRACE_SECONDS = 0.5
#: The wall-clock backstop, as a multiple of the CPU limit: it stops what the CPU timer
#: cannot interrupt (a long call inside C code) while a busy machine slows honest renders.
WALL_CLOCK_FACTOR = 4


class SandboxPool:
    """A pool of render workers, started lazily in the process that uses it.

    Size it to the number of request threads of the web process: then a request never
    waits for a worker that a slow template holds.
    """

    def __init__(self, limits: RenderLimits, workers: int) -> None:
        self.limits = limits
        self.workers = workers
        self._pool: ProcessPool | None = None
        self._owner_pid: int | None = None
        self._lock = threading.Lock()

    def render(self, request: RenderRequest) -> Rendered:
        """Render in a worker; raises `TemplateProblem` for anything that goes wrong."""
        return self.run(render_in_worker, request, self.limits)

    def run(self, function: Callable[..., T], *args: Any) -> T:
        """Run a module-level `function(*args)` in a worker under the time limit."""
        try:
            ok, value = self._schedule(function, args).result()
        except (BrokenProcessPool, RuntimeError):
            # pebble gives up on a pool whose workers it cannot restart: start a new one.
            self.close()
            ok, value = self._schedule(function, args).result()
        except CpuTimeExceeded:
            # The CPU timer fired between the task's end and its disarming: still a hit.
            raise limit_exceeded("cpu_seconds", "The template used up its CPU time.") from None
        except FutureTimeout:
            raise limit_exceeded(
                "cpu_seconds",
                f"The template ran for more than {self._wall_seconds():g} s and was stopped.",
            ) from None
        except ProcessExpired as died:
            raise limit_exceeded(
                "memory",
                f"The render worker died (exit code {died.exitcode}): the template exhausted "
                "its memory or stack. It has been replaced.",
            ) from None
        if not ok:
            assert isinstance(value, TemplateProblem)
            raise value
        return value  # type: ignore[return-value]

    def _wall_seconds(self) -> float:
        return self.limits.cpu_seconds * WALL_CLOCK_FACTOR

    def _schedule(self, function: Callable[..., Any], args: tuple) -> Any:
        return self._ensure_pool().schedule(
            run_guarded,
            args=(self.limits.cpu_seconds, function, *args),
            timeout=self._wall_seconds() + TRANSFER_GRACE_SECONDS,
        )

    def _ensure_pool(self) -> ProcessPool:
        # A pool belongs to the process that started it: after a fork, start a new one.
        with self._lock:
            if self._pool is None or self._owner_pid != os.getpid():
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(["app.render.worker"])
                self._pool = ProcessPool(
                    max_workers=self.workers,
                    initializer=start_worker,
                    initargs=(self.limits.memory_bytes,),
                    context=context,
                )
                self._owner_pid = os.getpid()
            return self._pool

    def close(self) -> None:
        """Stop the workers; the pool starts again on next use."""
        with self._lock:
            if self._pool is not None and self._owner_pid == os.getpid():
                self._pool.stop()
                self._pool.join()
            self._pool = None
