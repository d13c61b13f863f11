"""The worker side of the sandbox: limits on CPU, memory and priority, then the render.

Each worker process caps its own address space at start (RLIMIT_AS), runs every task
under a CPU-time timer (SIGPROF after the task's CPU seconds) and lowers its scheduling
priority when a task runs long, so a template that burns its allowance competes with
nobody but other long templates. The pool (`pool.py`) adds a wall-clock backstop.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
from collections.abc import Callable
from typing import Any, TypeVar

from app.render.chat import Rendered, RenderRequest, render_chat
from app.render.environment import shared_environment
from app.render.limits import RenderLimits
from app.render.llamacpp import render_llamacpp
from app.render.problems import TemplateProblem, limit_exceeded, problem_from_exception

T = TypeVar("T")

#: Scheduling priority of a worker: below the web process (nice 0), which parses
#: requests and answers everyone else.
WORKER_NICE = 5
#: A task still running after this many seconds drops to the lowest priority.
DEMOTE_AFTER_SECONDS = 0.25


class CpuTimeExceeded(BaseException):
    """Raised by the CPU timer inside a render.

    A BaseException, so that no `except Exception` in a template's call path (ours or
    Jinja's) can swallow it and let the render go on.
    """


def _virtual_memory_bytes() -> int:
    """This process's current address-space size, from /proc (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _demote(signum: int, frame: Any) -> None:
    """A long task: let every short one go first."""
    os.setpriority(os.PRIO_PROCESS, 0, 19)


def _out_of_cpu(signum: int, frame: Any) -> None:
    raise CpuTimeExceeded


def start_worker(memory_bytes: int) -> None:
    """Set the worker's priority, timers and address-space cap; warm the environment."""
    os.setpriority(os.PRIO_PROCESS, 0, WORKER_NICE)
    signal.signal(signal.SIGALRM, _demote)
    signal.signal(signal.SIGPROF, _out_of_cpu)
    shared_environment()
    limit = _virtual_memory_bytes() + memory_bytes
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _restore_priority() -> None:
    # Without CAP_SYS_NICE a process cannot raise its priority again: it stays low.
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, 0, WORKER_NICE)


def run_guarded(
    cpu_seconds: float, function: Callable[..., T], *args: Any
) -> tuple[bool, T | TemplateProblem]:
    """Run one task; problems travel back as values, never as pickled exceptions."""
    signal.setitimer(signal.ITIMER_REAL, DEMOTE_AFTER_SECONDS)
    signal.setitimer(signal.ITIMER_PROF, cpu_seconds)
    try:
        return True, function(*args)
    except CpuTimeExceeded:
        message = f"The template used more than {cpu_seconds:g} s of CPU time and was stopped."
        return False, limit_exceeded("cpu_seconds", message)
    except BaseException as error:  # MemoryError and RecursionError included
        return False, problem_from_exception(error)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        if os.getpriority(os.PRIO_PROCESS, 0) != WORKER_NICE:
            _restore_priority()


def render_in_worker(request: RenderRequest, limits: RenderLimits) -> Rendered:
    """A render with the engine the request names."""
    if request.engine == "llama.cpp":
        rendered = render_llamacpp(
            request,
            add_bos_token=request.add_bos_token,
            add_eos_token=request.add_eos_token,
            limits=limits,
        )
        return Rendered(rendered.prompt, [], rendered.rewrites)
    return render_chat(request, limits)
