"""Worker processes that run untrusted templates under time, memory and output limits.

Jinja's sandbox stops templates from reaching Python internals, but its documentation
says it does not limit CPU or memory: that is the caller's job. Each render runs in a
pebble worker process whose address space is capped (RLIMIT_AS) and whose task is
killed when it overruns its time; pebble then starts a fresh worker. The web process
never compiles or renders a user template itself.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

from app.render.chat import Rendered, RenderRequest, render_chat
from app.render.environment import shared_environment
from app.render.limits import RenderLimits
from app.render.llamacpp import render_llamacpp
from app.render.problems import TemplateProblem, limit_exceeded, problem_from_exception

T = TypeVar("T")

#: Seconds granted on top of the render limit for pickling the answer back.
TRANSFER_GRACE_SECONDS = 0.5


def _virtual_memory_bytes() -> int:
    """This process's current address-space size, from /proc (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _start_worker(memory_bytes: int) -> None:
    """Cap the worker's address space and warm the environment before the first task."""
    shared_environment()
    limit = _virtual_memory_bytes() + memory_bytes
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _run_guarded(function: Callable[..., T], *args: Any) -> tuple[bool, T | TemplateProblem]:
    """Run in the worker; problems travel back as values, never as pickled exceptions."""
    try:
        return True, function(*args)
    except BaseException as error:  # MemoryError and RecursionError included
        return False, problem_from_exception(error)


def render_in_worker(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """The worker side of a render (module level so worker processes can import it)."""
    if request.engine == "llama.cpp":
        rendered = render_llamacpp(
            request,
            add_bos_token=request.add_bos_token,
            add_eos_token=request.add_eos_token,
            limits=limits,
        )
        return Rendered(rendered.prompt, [], rendered.rewrites)
    return render_chat(request, limits)


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
        except FutureTimeout:
            raise limit_exceeded(
                "cpu_seconds",
                f"The template ran for more than {self.limits.cpu_seconds:g} s and was stopped.",
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

    def _schedule(self, function: Callable[..., Any], args: tuple) -> Any:
        return self._ensure_pool().schedule(
            _run_guarded,
            args=(function, *args),
            timeout=self.limits.cpu_seconds + TRANSFER_GRACE_SECONDS,
        )

    def _ensure_pool(self) -> ProcessPool:
        # A pool belongs to the process that started it: after a fork, start a new one.
        with self._lock:
            if self._pool is None or self._owner_pid != os.getpid():
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(["app.render.pool"])
                self._pool = ProcessPool(
                    max_workers=self.workers,
                    initializer=_start_worker,
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
