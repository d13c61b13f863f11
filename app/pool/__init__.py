"""Worker processes that run work on untrusted input under time, memory and wait limits.

Jinja's sandbox stops templates from reaching Python internals, and the tokenizers
library parses whatever vocabulary it is given, but neither limits CPU or memory: that is
the caller's job. A `WorkerPool` runs module-level functions in pebble worker processes
that cap their own memory and CPU time (`guard.py`); a task that overruns the wall-clock
backstop is killed and pebble starts a fresh worker.

Three rules keep a single request from wedging the pool:

- the caller pickles the task itself, in its own thread, so a task that can never be
  sent (nested too deep, say) fails at once instead of killing pebble's scheduler thread
  (which would leave every later task waiting forever);
- the worker pickles its answer (`guard.run_guarded`), and the answer is read back with
  an unpickler that only makes plain values and the project's own dataclasses;
- every wait on a future is bounded: past the backstop plus a grace, the pool is
  presumed broken, replaced, and the request gets an answer naming the limit.
"""

from __future__ import annotations

import dataclasses
import io
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

from app.errors import ApiError
from app.pool.guard import CpuTimeExceeded, run_guarded, start_worker
from app.problems import TemplateProblem, limit_exceeded

T = TypeVar("T")

#: Seconds granted on top of the wall-clock backstop for sending the answer back.
TRANSFER_GRACE_SECONDS = 0.5
#: The wall-clock backstop, as a multiple of the CPU limit: it stops what the CPU timer
#: cannot interrupt (a long call inside C code) while a busy machine slows honest tasks.
WALL_CLOCK_FACTOR = 4
#: Seconds a caller waits past the backstop before it presumes the pool broken: time for
#: pebble to notice the timeout, kill the worker and report.
STUCK_GRACE_SECONDS = 2.0
#: How often a waiting caller checks that the pool still runs (see `_result`).
HEALTH_CHECK_SECONDS = 0.25

#: Modules every worker process imports before it forks (pools add theirs): loaded once
#: in multiprocessing's forkserver, a replaced worker starts in milliseconds. There is one
#: forkserver per process, so what one pool preloads every other pool's workers carry:
#: preload only what any worker may hold (the sandbox's Jinja), and load the rest in
#: `warm_up`.
_PRELOAD = {"app.pool.guard"}

#: Whether the tasks asked for in this context are for a client that is not known (one
#: nobody knows yet, or whose recent requests cost much): they run at the lowest CPU
#: priority from their start (`guard.run_guarded`), so that a known client's short task
#: goes first. Admission (`app.web.admission`) sets it for each request.
lowest_priority: ContextVar[bool] = ContextVar("lowest_priority", default=False)

#: Classes outside the project that an answer may hold.
_PLAIN_GLOBALS = {
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "bytearray"),
    ("datetime", "datetime"),
    ("datetime", "date"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
}


class PoolUnavailable(ApiError):
    """A task that the pool could not run at all (its workers keep dying, or it stopped):
    the service's trouble, and a passing one, so 503 with Retry-After."""

    status = 503
    headers = MappingProxyType({"Retry-After": "5"})
    title = "The workers are unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def to_json(self) -> dict[str, Any]:
        message = (
            "The sandbox workers could not be started or stopped while the task waited "
            f"({self.reason.strip()[:200]}); try again in a few seconds."
        )
        return {"type": "WorkersUnavailable", "message": message}


def _result(pool: ProcessPool, future: Future, timeout: float) -> Any:
    """The task's answer within `timeout`, waited for in short slices.

    When pebble's workers die as they start, it stops its loops; a task queued at that
    moment is never picked up and its future never completes. Waiting it out would take
    the whole backstop and look like a task over its limit: between slices, a pool that
    no longer runs is said to be unavailable (a 503).
    """
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            return future.result(timeout=max(0.0, min(HEALTH_CHECK_SECONDS, left)))
        except FutureTimeout:
            # pebble's own timeout (the task stopped at the backstop) is a TimeoutError
            # too, raised at once: the answer, not a slice of the wait to ask again.
            if future.done() or left <= HEALTH_CHECK_SECONDS:
                raise
            if not pool.active and not future.done():
                reason = "its workers expired as they started; the pool stopped"
                raise PoolUnavailable(reason) from None


class _AnswerUnpickler(pickle.Unpickler):
    """Makes plain values and the project's dataclasses, and nothing else.

    A worker runs hostile input; if it were ever subverted, its answer must not be able
    to make the web process call arbitrary functions while unpickling.
    """

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _PLAIN_GLOBALS:
            return super().find_class(module, name)
        if module == "app" or module.startswith("app."):
            found = super().find_class(module, name)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"a worker's answer may not hold {module}.{name}")


def read_answer(data: bytes) -> tuple[bool, Any, float]:
    """The `(ok, value, cpu seconds)` a worker pickled."""
    return _AnswerUnpickler(io.BytesIO(data)).load()


class WorkerPool:
    """A pool of bounded worker processes, started lazily in the process that uses it.

    `noun` names what runs in the messages of its errors ("The template", "The
    tokenizer"); `warm_up` is a `module:function` each worker calls once at start;
    `preload` lists modules to import in the forkserver that every worker forks from
    (one per process, so it gets the modules of every pool made before the first start);
    `on_cpu` hears, in the calling thread, the CPU seconds each task used (a task
    stopped by a limit counts its whole allowance).
    """

    def __init__(
        self,
        *,
        cpu_seconds: float,
        memory_bytes: int,
        workers: int,
        noun: str = "The task",
        warm_up: str | None = None,
        preload: tuple[str, ...] = (),
        on_cpu: Callable[[float], None] | None = None,
    ) -> None:
        self.cpu_seconds = cpu_seconds
        self.memory_bytes = memory_bytes
        self.workers = workers
        self.noun = noun
        self.warm_up = warm_up
        self.on_cpu = on_cpu
        self._pool: ProcessPool | None = None
        self._owner_pid: int | None = None
        self._lock = threading.Lock()
        _PRELOAD.update(preload)

    @property
    def started(self) -> bool:
        """Whether this process has started the pool (its workers run, or start)."""
        return self._pool is not None and self._owner_pid == os.getpid()

    @property
    def wall_seconds(self) -> float:
        """The wall-clock backstop of one task."""
        return self.cpu_seconds * WALL_CLOCK_FACTOR

    def run(self, function: Callable[..., T], *args: Any, ahead: int = 0) -> T:
        """Run a module-level `function(*args)` in a worker; raises `TemplateProblem`.

        `ahead`: tasks the caller knows are queued before this one (each may take up to
        the backstop), so that waiting for them is not taken for a wedged pool.
        """
        payload = self._pickled(function, args)
        try:
            try:
                ok, value, cpu = self._wait(payload, ahead)
            except PoolUnavailable:
                # pebble gives up on a pool whose workers it cannot restart: start a new one.
                self.close()
                ok, value, cpu = self._wait(payload, ahead)
        except TemplateProblem:
            self._spent(self.cpu_seconds)  # stopped by a limit: it used its allowance
            raise
        self._spent(cpu)
        if not ok:
            assert isinstance(value, TemplateProblem)
            raise value
        return value  # type: ignore[no-any-return]

    def _spent(self, cpu: float) -> None:
        if self.on_cpu is not None:
            self.on_cpu(cpu)

    def _pickled(self, function: Callable[..., Any], args: tuple) -> bytes:
        try:
            return pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            raise limit_exceeded(
                "recursion", "The input nests too deeply to be sent to a worker."
            ) from None

    def _wait(self, payload: bytes, ahead: int) -> tuple[bool, Any, float]:
        """Schedule and wait, within the backstop plus a grace; map pebble's failures."""
        pool = self._ensure_pool()
        try:
            future = pool.schedule(
                run_guarded,
                args=(self.cpu_seconds, payload, lowest_priority.get()),
                timeout=self.wall_seconds + TRANSFER_GRACE_SECONDS,
            )
        except RuntimeError as error:  # pebble: "The Pool is not active", or its loops died
            raise PoolUnavailable(str(error)) from None
        try:
            task_seconds = self.wall_seconds + TRANSFER_GRACE_SECONDS
            answer = _result(pool, future, (ahead + 1) * task_seconds + STUCK_GRACE_SECONDS)
        except CpuTimeExceeded:
            # The CPU timer fired between the task's end and its disarming: still a hit.
            raise limit_exceeded("cpu_seconds", f"{self.noun} used up its CPU time.") from None
        except FutureTimeout:
            if not future.done():
                # pebble should have stopped the task by now: its pool is wedged.
                future.cancel()
                self.close()
            raise limit_exceeded(
                "cpu_seconds",
                f"{self.noun} ran for more than {self.wall_seconds:g} s and was stopped.",
            ) from None
        except ProcessExpired as died:
            if died.exitcode == -signal.SIGXCPU:
                raise limit_exceeded(
                    "cpu_seconds",
                    f"{self.noun} used up its {self.cpu_seconds:g} s of CPU time inside native "
                    "code; its worker was stopped and replaced.",
                ) from None
            raise limit_exceeded(
                "memory",
                f"The worker died (exit code {died.exitcode}): {self.noun.lower()} exhausted "
                "its memory or stack. It has been replaced.",
            ) from None
        except CancelledError:
            raise PoolUnavailable("the pool was stopped while the task waited") from None
        except BrokenProcessPool as error:  # "All workers expired": they die as they start
            raise PoolUnavailable(str(error)) from None
        return read_answer(answer)

    def _ensure_pool(self) -> ProcessPool:
        # A pool belongs to the process that started it: after a fork, start a new one.
        with self._lock:
            if self._pool is None or self._owner_pid != os.getpid():
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(sorted(_PRELOAD))
                self._pool = ProcessPool(
                    max_workers=self.workers,
                    initializer=start_worker,
                    initargs=(self.memory_bytes, self.warm_up),
                    context=context,
                )
                self._owner_pid = os.getpid()
            return self._pool

    def close(self) -> None:
        """Stop the workers; the pool starts again on next use."""
        with self._lock:
            pool, self._pool = self._pool, None
            if pool is not None and self._owner_pid == os.getpid():
                pool.stop()
                pool.join()
